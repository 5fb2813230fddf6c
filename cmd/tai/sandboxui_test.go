package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/sandbox"
)

// noSandbox is what tai says at start where no sandbox can run.
const noSandbox = "no sandbox on this system ("

// TestNoSandboxIsSaidOnceAtStart: where Landlock is missing (simulated
// with TAI_LANDLOCK_ABI=0) tai -p and the REPL say so once at start, then
// run as they would otherwise; where it is present they say nothing.
func TestNoSandboxIsSaidOnceAtStart(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Say("one"), llmtest.Say("two"), llmtest.Say("three"))
	missing := append(e.modelVars(srv), sandbox.ABIEnv+"=0")
	r := e.runInput(t, missing, "", "--clean", "-p", "hello")
	if r.status != 0 || !strings.Contains(r.stdout, "one") {
		t.Fatalf("tai -p without a sandbox: status %d\nstdout %s\nstderr %s", r.status, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, noSandbox); n != 1 || !strings.Contains(r.stderr, "$TAI_LANDLOCK_ABI=0 turns it off") ||
		!strings.Contains(r.stderr, `a server whose entry says sandbox = "required" is not started`) {
		t.Fatalf("tai -p said it %d times:\n%s", n, r.stderr)
	}
	if _, err := sandbox.Available(); err == nil {
		r := e.runInput(t, e.modelVars(srv), "", "--clean", "-p", "hello")
		if strings.Contains(r.stderr, noSandbox) {
			t.Fatalf("tai -p on a system with Landlock:\n%s", r.stderr)
		}
	}

	s := startREPLWith(t, e, missing, "--clean")
	s.expect(noSandbox)
	s.expect("> ")
	s.typeKeys("hi\r")
	s.expect("three")
	s.expect("> ")
	s.typeKeys("\x04")
	s.wait()
	if n := strings.Count(s.seen.String(), noSandbox); n != 1 {
		t.Fatalf("the REPL said it %d times:\n%s", n, s.seen.String())
	}
}

// TestShellSandboxOffIsShownLikeYolo: a profile that says sandbox = false
// is warned about at REPL start and when switched to, and the prompt says
// so for as long as it is in use, as it says --yolo.
func TestShellSandboxOffIsShownLikeYolo(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "--clean", "-e", `assert(tai.profiles.save{name = "loose", provider = "openai", model = "m", base_url = "http://127.0.0.1:9/v1", key_env = "X_KEY", sandbox = false})`+
		` assert(tai.profiles.save{name = "tight", provider = "openai", model = "m", base_url = "http://127.0.0.1:9/v1", key_env = "X_KEY"})`+
		` assert(tai.profiles.use("loose"))`); r.status != 0 {
		t.Fatalf("saving the profiles: %s", r.stderr)
	}
	s := startREPL(t, e, "--clean", "--yolo")
	s.expect("⚠ the shell's sandbox is off: profile loose says sandbox = false")
	s.expect("tai:loose [yolo, no sandbox]> ")
	s.typeKeys("/profile use tight\r")
	s.expect("now using profile tight")
	s.expect("tai:tight [yolo]> ")
	s.typeKeys("/profile use loose\r")
	s.expect("⚠ the shell's sandbox is off: profile loose says sandbox = false")
	s.expect("tai:loose [yolo, no sandbox]> ")
	s.typeKeys("/profile\r")
	s.expect("sandbox    off: shell commands run with all of your rights")
	s.expect("> ")
	s.typeKeys("\x04")
	s.wait()
}

// TestSandboxOffForTheSession: /sandbox off lifts the shell's sandbox
// with a warning, the prompt says so until /sandbox on, and /sandbox
// says which is in force.
func TestSandboxOffForTheSession(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "--clean", "-e", `assert(tai.profiles.save{name = "tight", provider = "openai", model = "m", base_url = "http://127.0.0.1:9/v1", key_env = "X_KEY"})`+
		` assert(tai.profiles.use("tight"))`); r.status != 0 {
		t.Fatalf("saving the profile: %s", r.stderr)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:tight> ")
	s.typeKeys("/sandbox\r")
	s.expect("the model's shell commands run in the sandbox")
	s.typeKeys("/sandbox off\r")
	s.expect("⚠ the shell's sandbox is off for the rest of this session")
	s.expect("tai:tight [sandbox off]> ")
	s.typeKeys("/sandbox\r")
	s.expect("off for the rest of this session (/sandbox off)")
	s.typeKeys("/sandbox on\r")
	s.expect("the model's shell commands run in the sandbox")
	s.expect("tai:tight> ")
	s.typeKeys("\x04")
	s.wait()
}

// TestSandboxOnTheConsentScreenAndInMCP: a pasted entry's sandbox is on
// its consent screen in one line (what it reads and writes, the network),
// and one whose entry turns it off is a warning there; /mcp shows each
// server's afterwards, the unsandboxed one as a warning. Where no sandbox
// can run (simulated), an entry that requires it is refused before any
// question, saying why and what to do.
func TestSandboxOnTheConsentScreenAndInMCP(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.Available(); err != nil {
		t.Logf("no Landlock here (%v): the screens say so", err)
	}
	e := newEnv(t)
	grant := t.TempDir() // outside the vault's folder (e.root)
	paste := func(name string, sb any) string {
		cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
			"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{mcpServerEnv: "1"}, "sandbox": sb}}})
		return "\x1b[200~" + string(cfg) + "\x1b[201~\r"
	}
	landlock := true
	if _, err := sandbox.Available(); err != nil {
		landlock = false
	}
	// The vault in a folder of its own, as by default: the home folder
	// (e.root), where each server's state folder is, is not the vault's.
	vars := append(e.vars(), "TAI_VAULT="+filepath.Join(e.root, "vault", "vault.db"))
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("> ")
	s.typeKeys(paste("boxed", map[string]any{"read": []string{grant}, "network": false}))
	s.expect("first time:")
	if landlock {
		s.expect("  sandbox: reads: system,")
		s.expect(grant)
		s.expect("a private temp folder; network: closed\r\n")
	} else {
		s.expect("  ⚠ sandbox: none on this system")
	}
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added boxed")
	s.expect("> ")
	s.typeKeys(paste("open", false))
	s.expect("first time:")
	s.expect("  ⚠ sandbox off: the entry says sandbox = false, so the server runs with all of your rights and can read your keys, your credentials and the vault's folder\r\n")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added open")
	s.expect("> ")
	s.typeKeys("/mcp\r")
	s.expect("boxed")
	if landlock {
		s.expect("  sandbox: reads: system, " + grant + "; writes: its own state, a private temp folder; network: closed\r\n")
	}
	s.expect("open")
	s.expect("  ⚠ sandbox off: it runs with all of your rights (sandbox = false in its entry)\r\n")
	s.expect("> ")
	s.typeKeys("\x04")
	s.wait()

	// Without Landlock, "required" is refused before any question.
	r := e.runInput(t, append(vars, sandbox.ABIEnv+"=0"), strings.TrimSuffix(strings.TrimPrefix(paste("strict", "required"), "\x1b[200~"), "\x1b[201~\r"),
		"--clean", "-e", `local r, err = tai.mcp.add{source = io.read("*a")} print(err) for _, s in ipairs(r and r.servers or {}) do print(s.outcome, s.reason) end`)
	if !strings.Contains(r.stdout, `refused	mcp server "strict" not started: its entry says sandbox = "required" and this system has no Landlock`) ||
		!strings.Contains(r.stdout, `take "required" out of the entry's sandbox`) {
		t.Fatalf("required without Landlock:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
}
