package main

import (
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
