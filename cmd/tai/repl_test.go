package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// screen drives a tai REPL on a pseudo-terminal: type sends keys, expect
// reads until the wanted text appears or the deadline passes.
type screen struct {
	t      *testing.T
	tty    *os.File
	cmd    *exec.Cmd
	chunks chan []byte
	seen   strings.Builder // everything read so far
	mark   int             // expect searches from here
}

func startREPL(t *testing.T, e env, args ...string) *screen {
	t.Helper()
	return startREPLWith(t, e, e.vars(), args...)
}

func startREPLWith(t *testing.T, e env, vars []string, args ...string) *screen {
	t.Helper()
	return startREPLIn(t, e.root, vars, args...)
}

// startREPLIn starts tai in the folder dir.
func startREPLIn(t *testing.T, dir string, vars []string, args ...string) *screen {
	t.Helper()
	cmd := exec.Command(taiBin, args...)
	cmd.Env = vars
	cmd.Dir = dir
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	s := watch(t, tty, cmd)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	return s
}

// watch returns a screen on tty, the master side of the pseudo-terminal of
// the running cmd; a goroutine passes what tai writes to chunks until tty closes.
func watch(t *testing.T, tty *os.File, cmd *exec.Cmd) *screen {
	s := &screen{t: t, tty: tty, cmd: cmd, chunks: make(chan []byte, 64)}
	go func() {
		defer close(s.chunks)
		for {
			buf := make([]byte, 4096)
			n, err := tty.Read(buf)
			if n > 0 {
				s.chunks <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) typeKeys(keys string) {
	s.t.Helper()
	if _, err := io.WriteString(s.tty, keys); err != nil {
		s.t.Fatalf("typing %q: %v", keys, err)
	}
}

// expect waits (at most 30 s: the suite runs under -race beside other packages on small machines) until want appears after the mark, then moves
// the mark past it.
func (s *screen) expect(want string) {
	s.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		text := s.seen.String()
		if i := strings.Index(text[s.mark:], want); i >= 0 {
			s.mark += i + len(want)
			return
		}
		select {
		case chunk, ok := <-s.chunks:
			if !ok {
				s.t.Fatalf("tai exited while waiting for %q; screen since the last match:\n%s", want, text[s.mark:])
			}
			s.seen.Write(chunk)
		case <-deadline:
			s.t.Fatalf("timed out waiting for %q; screen since the last match:\n%s", want, text[s.mark:])
		}
	}
}

// wait waits (at most 30 s) for tai to exit and returns its status.
func (s *screen) wait() int {
	s.t.Helper()
	done := make(chan error, 1)
	go func() {
		for range s.chunks {
		}
		done <- s.cmd.Wait()
	}()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		tail := s.seen.String()
		if len(tail) > 600 {
			tail = tail[len(tail)-600:]
		}
		s.t.Fatalf("tai did not exit; the screen ends:\n%s", tail)
		return -1
	}
}

const initLua = `
tai.command("greet", function(rest) print("hello from init: [" .. rest .. "]") end,
  "greets whoever is named", function(word) return {"alpha", "beta"} end)
tai.command("spin", function() print("spinning") while true do end end, "loops until Ctrl-C")
`

func TestREPLOnATerminal(t *testing.T) {
	e := newEnv(t)
	e.write(t, "init.lua", initLua)
	s := startREPL(t, e)

	s.expect("tai:ollama> ")

	// /help lists the built-ins and the command from init.lua.
	s.typeKeys("/help\r")
	s.expect("/greet")
	s.expect("greets whoever is named")
	s.expect("/quit")
	s.expect("tai:ollama> ")

	// = expr prints the value, tables pretty-printed.
	s.typeKeys("= 1+1\r")
	s.expect("\n2\r\n")
	s.typeKeys("= {b = 2, a = {1, 'x'}}\r")
	s.expect("a = {")
	s.expect(`"x"`)
	s.expect("b = 2")
	s.expect("tai:ollama> ")

	// Tab completes a command name, then its argument.
	s.typeKeys("/gr\t al\t\r")
	s.expect("hello from init: [alpha]")
	s.expect("tai:ollama> ")

	// A pasted multi-line JSON block is read whole.
	s.typeKeys("{\r  \"mcpServers\": {\r    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"x}\"]}\r  }\r}\r")
	s.expect("the paste holds 1 server")
	s.expect("run:     npx\r\n           -y\r\n           'x}'")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("\r")
	s.expect("(you said no; nothing was started)")
	s.expect("tai:ollama> ")

	// A broken one gets a positioned parse error.
	s.typeKeys("{\r  \"mcpServers\": x\r}\r")
	s.expect("JSON, line 2, column 17: invalid literal: x")
	s.expect("fix: a value must be")
	s.expect("tai:ollama> ")

	// A TOML block is read until a blank line.
	s.typeKeys("[mcp_servers.docs]\rcommand = \"npx\"\r\r")
	s.expect("the paste holds 1 server")
	s.expect("docs  (stdio, you choose to enable it when adding, from config-toml)")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("\r")
	s.expect("(you said no; nothing was started)")
	s.expect("tai:ollama> ")

	// Plain text with no model available prints how to configure one.
	s.typeKeys("hello there\r")
	s.expect("hello there")
	from := s.mark
	s.expect("no model is configured: set OPENAI_API_KEY")
	s.expect("tai:ollama> ")
	// at most six lines, and no key on a command line
	help := strings.TrimSpace(s.seen.String()[from:s.mark])
	if n := strings.Count(help, "\n"); n > 6 || strings.Contains(help, "secret_set") || strings.Contains(help, "tai -e") {
		t.Fatalf("the no-model help runs %d lines or puts a key on a command line:\n%s", n, help)
	}

	// Ctrl-C cancels the line being typed and keeps the REPL.
	s.typeKeys("half a line\x03")
	s.expect("^C")
	s.expect("tai:ollama> ")

	// Ctrl-C stops a running command and keeps the REPL.
	s.typeKeys("/spin\r")
	s.expect("spinning")
	s.typeKeys("\x03")
	s.expect("interrupted")
	s.expect("tai:ollama> ")
	s.typeKeys("= 40 + 2\r")
	s.expect("42")
	s.expect("tai:ollama> ")

	// Lines that set secrets stay out of the history.
	s.typeKeys("= tai.vault.secret_set('tok', 'hunter2')\r")
	s.expect("true")
	s.expect("tai:ollama> ")
	// So do lines holding what looks like a credential.
	s.typeKeys("= 'n=' .. #'Authorization: Bearer ghp_histtest0123456789'\r")
	s.expect("n=44")
	s.expect("tai:ollama> ")

	// /lua runs a multi-line chunk ended by ".".
	s.typeKeys("/lua\rlocal x = 20\rprint(x * 2 + 1)\r.\r")
	s.expect("41")
	s.expect("tai:ollama> ")

	// Ctrl-D exits with status 0.
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}

	hist, err := os.ReadFile(filepath.Join(e.state, "tai", "history"))
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	for _, want := range []string{"/help", "= 1+1", "= 40 + 2", "hello there"} {
		if !strings.Contains(string(hist), want+"\n") {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
	for _, banned := range []string{"hunter2", "mcpServers", "ghp_histtest"} {
		if strings.Contains(string(hist), banned) {
			t.Errorf("history holds %q:\n%s", banned, hist)
		}
	}
}

func TestREPLQuitCommand(t *testing.T) {
	e := newEnv(t)
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/nosuch\r")
	s.expect("unknown command /nosuch")
	s.typeKeys("/quit\r")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
}

func TestREPLColourFollowsNoColor(t *testing.T) {
	e := newEnv(t)
	var vars []string
	for _, v := range e.vars() {
		if !strings.HasPrefix(v, "NO_COLOR=") {
			vars = append(vars, v)
		}
	}
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("\x1b[1;36mtai:ollama\x1b[0m> ")
	s.typeKeys("/quit\r")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
}

func TestREPLAsksForThePassphraseOnTheTerminal(t *testing.T) {
	e := newEnv(t)
	seal := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e",
		`assert(tai.vault.secret_set("k", "the value")) assert(tai.vault.seal())`)
	if seal.status != 0 {
		t.Fatalf("sealing: %s", seal.stderr)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("= tai.vault.secret_get('k')\r")
	s.expect("vault passphrase: ")
	s.typeKeys("open sesame\r")
	s.expect(`"the value"`)
	if strings.Contains(s.seen.String(), "open sesame") {
		t.Fatal("the passphrase was echoed")
	}
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
}

func TestREPLAsksAgainAfterAWrongPassphrase(t *testing.T) {
	e := newEnv(t)
	seal := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e",
		`assert(tai.vault.secret_set("k", "the value")) assert(tai.vault.seal())`)
	if seal.status != 0 {
		t.Fatalf("sealing: %s", seal.stderr)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")

	// A typo is asked again at once.
	s.typeKeys("= tai.vault.secret_get('k')\r")
	s.expect("vault passphrase: ")
	s.typeKeys("open sesam\r")
	s.expect("wrong passphrase; try 2 of 3")
	s.expect("vault passphrase: ")
	s.typeKeys("open sesame\r")
	s.expect(`"the value"`)
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	if strings.Contains(s.seen.String(), "open sesam") {
		t.Fatal("a passphrase was echoed")
	}

	// Ctrl-C at the prompt stops the command at once, without waiting for
	// Enter; the REPL carries on.
	s = startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("= tai.vault.secret_get('k')\r")
	s.expect("vault passphrase: ")
	from := s.mark
	s.typeKeys("\x03")
	s.expect("tai:ollama> ")
	if shown := s.seen.String()[from:s.mark]; strings.Contains(shown, "vault passphrase: ") || strings.Contains(shown, "the value") {
		t.Fatalf("the command went on after Ctrl-C at the passphrase prompt:\n%s", shown)
	}

	// Three wrong answers fail that access only: the next one asks again.
	s.typeKeys("= tai.vault.secret_get('k')\r")
	s.expect("vault passphrase: ")
	s.typeKeys("nope\r")
	for _, again := range []string{"wrong passphrase; try 2 of 3", "wrong passphrase; try 3 of 3"} {
		s.expect(again)
		s.expect("vault passphrase: ")
		s.typeKeys("nope\r")
	}
	from = s.mark
	s.expect("vault passphrase: ")
	if between := s.seen.String()[from:s.mark]; strings.Contains(between, "try") {
		t.Fatalf("a fourth try in the same access: %q", between)
	}
	s.typeKeys("open sesame\r")
	s.expect(`"the value"`)
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	if strings.Contains(s.seen.String(), "nope") {
		t.Fatal("a passphrase was echoed")
	}
}

func TestREPLSealRefusesWordsAndAsksAboutAShortPassphrase(t *testing.T) {
	e := newEnv(t)
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/seal x y\r")
	s.expect("usage: /seal (no words")
	s.typeKeys("/unseal now\r")
	s.expect("usage: /unseal (no words")
	s.typeKeys("/seal\r")
	s.expect("new vault passphrase: ")
	s.typeKeys("k\r")
	s.expect("the same again: ")
	s.typeKeys("k\r")
	s.expect("that passphrase has only 1 character:")
	s.expect("seal with it anyway? [y/N] ")
	s.typeKeys("n")
	s.expect("nothing was sealed: the passphrase was too short to keep")
	s.typeKeys("= tai.vault.sealed()\r")
	s.expect("false")
	s.typeKeys("/seal\r")
	s.expect("new vault passphrase: ")
	s.typeKeys("short\r")
	s.expect("the same again: ")
	s.typeKeys("short\r")
	s.expect("seal with it anyway? [y/N] ")
	s.typeKeys("y")
	s.expect("(the vault is sealed")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
}

func TestREPLSealAsksForTheNewPassphraseTwice(t *testing.T) {
	e := newEnv(t)
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("= tai.vault.secret_set('k', 'the value')\r")
	s.expect("true")
	s.typeKeys("= tai.vault.seal()\r")
	s.expect("new vault passphrase: ")
	s.typeKeys("open sesame\r")
	s.expect("the same again: ")
	s.typeKeys("open sesam\r")
	s.expect("the two passphrases typed differ; nothing was sealed")
	s.typeKeys("= tai.vault.sealed()\r")
	s.expect("false")
	s.typeKeys("= tai.vault.seal()\r")
	s.expect("new vault passphrase: ")
	s.typeKeys("open\x7f\x7f\x7f\x7fxx\x15open sesame\r")
	s.expect("the same again: ")
	s.typeKeys("open sesame\r")
	s.expect("true")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	if strings.Contains(s.seen.String(), "sesam") {
		t.Fatal("a passphrase was echoed")
	}
	r := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e", `print(tai.vault.sealed(), (tai.vault.secret_get("k")))`)
	if r.status != 0 || r.stdout != "true\tthe value\n" {
		t.Fatalf("reading the sealed vault: %d %q %q", r.status, r.stdout, r.stderr)
	}
}

// TestREPLUnseal: /unseal asks for the passphrase without echo, even when
// tai holds the key already; a wrong one changes nothing; the right one
// unseals and says so in one line, and the vault reads without a
// passphrase after.
func TestREPLUnseal(t *testing.T) {
	e := newEnv(t)
	seal := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e",
		`assert(tai.vault.secret_set("k", "the value")) assert(tai.vault.seal())`)
	if seal.status != 0 {
		t.Fatalf("sealing: %s", seal.stderr)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	// The line is checked for secrets first: the vault's own prompt, then
	// /unseal's.
	s.typeKeys("/unseal\r")
	s.expect("this needs the sealed vault's passphrase")
	s.expect("vault passphrase: ")
	s.typeKeys("open sesame\r")
	s.expect("vault passphrase: ")
	s.typeKeys("open sesam\r")
	s.expect("wrong passphrase")
	s.expect("nothing was changed")
	s.typeKeys("/unseal\r")
	s.expect("vault passphrase: ")
	s.typeKeys("open sesame\r")
	s.expect("(the vault is unsealed: its audit trail ")
	s.expect("tai:ollama> ")
	s.typeKeys("/unseal\r")
	s.expect("the vault is not sealed: nothing to unseal")
	s.typeKeys("/exit\r")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	if strings.Contains(s.seen.String(), "sesam") {
		t.Fatal("a passphrase was echoed")
	}
	r := e.runEnv(t, e.vars(), "-e", `print(tai.vault.sealed(), (tai.vault.secret_get("k")), tai.vault.audit_tail(1)[1].subject, tai.vault.audit_verify() > 0)`)
	if r.status != 0 || r.stdout != "false\tthe value\tunsealed\ttrue\n" {
		t.Fatalf("reading the unsealed vault: %d %q %q", r.status, r.stdout, r.stderr)
	}
}

func TestChangingThePassphraseAsksForTheCurrentOneFirst(t *testing.T) {
	e := newEnv(t)
	seal := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e",
		`assert(tai.vault.secret_set("k", "the value")) assert(tai.vault.seal())`)
	if seal.status != 0 {
		t.Fatalf("sealing: %s", seal.stderr)
	}
	s := startREPL(t, e, "-e", `print(tai.vault.seal())`)
	s.expect("vault passphrase: ")
	s.typeKeys("open sesame\r")
	s.expect("new vault passphrase: ")
	s.typeKeys("new words\r")
	s.expect("the same again: ")
	s.typeKeys("new words\r")
	s.expect("true")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	r := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=new words"), "-e", `print((tai.vault.secret_get("k")))`)
	if r.status != 0 || r.stdout != "the value\n" {
		t.Fatalf("reading with the new passphrase: %d %q %q", r.status, r.stdout, r.stderr)
	}

	// Three wrong answers for the current one: the new one is never asked.
	s = startREPL(t, e, "-e", `print(tai.vault.seal())`)
	s.expect("vault passphrase: ")
	s.typeKeys("open sesame\r")
	for _, again := range []string{"try 2 of 3", "try 3 of 3"} {
		s.expect(again)
		s.expect("vault passphrase: ")
		s.typeKeys("open sesame\r")
	}
	s.expect("changing the passphrase needs the current one")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	if strings.Contains(s.seen.String(), "new vault passphrase") {
		t.Fatal("the new passphrase was asked for without the current one")
	}
}

// TestREPLHabits: /exit leaves; a mistyped command gets "did you mean";
// /secret asks for the value without echo and stores it; /seal seals and
// says so; /cost shows usage and says no price is set.
func TestREPLHabits(t *testing.T) {
	e := newEnv(t)
	s := startREPLWith(t, e, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/exti\r")
	s.expect("unknown command /exti; did you mean /exit?")
	s.typeKeys("/secret demo_key\r")
	s.expect("value of demo_key (not shown; Ctrl-C cancels): ")
	s.typeKeys("sk-typed-unseen-4411\r")
	s.expect("(stored demo_key in the vault; ${demo_key} in a config uses it)")
	s.typeKeys("/seal\r")
	s.expect("(the vault is sealed: secrets and server headers are encrypted at rest")
	s.typeKeys("/cost\r")
	s.expect("session: 0 tokens in, 0 out")
	s.expect("(no price set for ")
	s.typeKeys("/exit\r")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}
	if strings.Contains(s.seen.String(), "sk-typed-unseen") {
		t.Fatal("the secret's value was echoed")
	}
	r := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e", `print(tai.vault.sealed(), (tai.vault.secret_get("demo_key")))`)
	if r.status != 0 || r.stdout != "true\tsk-typed-unseen-4411\n" {
		t.Fatalf("reading the stored secret: %d %q %q", r.status, r.stdout, r.stderr)
	}
}
