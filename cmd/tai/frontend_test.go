package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// evilArgs is a shell call whose command hides its first half behind
// erase-line and cursor-up sequences; evilAnswer sets the terminal title.
const (
	evilArgs   = `{"command":"rm -rf /tmp/victim \u001b[2K\r\u001b[1AZQ echo harmless"}`
	evilAnswer = "done \x1b]0;PWNED\x07 now"
)

// rawFromModel are the model's sequences as they would reach a terminal
// unescaped; shownFromModel are the same, rendered visibly.
var (
	rawFromModel   = []string{"\x1b[2K\r\x1b[1AZQ", "\x1b]0;PWNED", "\x1b]0;ASKED"}
	shownFromModel = []string{`rm -rf /tmp/victim \x1b[2K\x0d\x1b[1AZQ echo harmless`, `done \x1b]0;PWNED\x07 now`}
)

func TestPromptShowsControlSequencesVisibly(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", evilArgs)), llmtest.Say(evilAnswer))
	r := e.runEnv(t, e.modelVars(srv), "--auto", "-p", "clean up")
	if r.status != 0 {
		t.Fatalf("status %d\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07\r") {
		t.Fatalf("a control character from the model reached the output:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	if want := `⚙ shell command=rm -rf /tmp/victim \x1b[2K\x0d\x1b[1A`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
	if !strings.Contains(r.stdout, shownFromModel[1]) {
		t.Errorf("stdout %q lacks %q", r.stdout, shownFromModel[1])
	}
}

func TestREPLShowsControlSequencesVisibly(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("shell", evilArgs)), llmtest.Say(evilAnswer))
	s.typeKeys("clean up\r")
	s.expect(`⚙ shell command=rm -rf /tmp/victim \x1b[2K\x0d\x1b[1A`)
	s.expect("[s]how everything: ")
	s.typeKeys("s\r")
	s.expect("command =")
	s.expect(shownFromModel[0])
	s.expect("[s]how everything: ")
	s.typeKeys("n\r")
	s.expect("✗ denied")
	s.expect(shownFromModel[1])
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("ask_user", `{"question":"\u001b]0;ASKED\u0007which?"}`)))
	s.typeKeys("ask me\r")
	s.expect(`? \x1b]0;ASKED\x07which?`)
	s.expect("answer> ")
	s.typeKeys("that\r")
	s.expect("the tool said: that")
	s.expect("tai:default> ")

	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	for _, raw := range rawFromModel {
		if strings.Contains(s.seen.String(), raw) {
			t.Errorf("the model's %q reached the terminal", raw)
		}
	}
}

func TestPromptStepLimitIsAFailure(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(llmtest.Request) llmtest.Turn {
		return llmtest.Calls(llmtest.Call("list_dir", `{"path":"."}`))
	})
	r := e.runEnv(t, e.modelVars(srv), "-p", "hi")
	if r.status != 1 {
		t.Fatalf("status %d, want 1\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "step limit") {
		t.Fatalf("stderr does not say the step limit ended the turn: %q", r.stderr)
	}
}

// vaultSecret is stored in the vault before tai starts; it must not reach
// the model, the screen or the history.
const vaultSecret = "hunter2-very-secret"

func (e env) storeSecret(t *testing.T) {
	t.Helper()
	if r := e.run(t, "-e", `assert(tai.vault.secret_set("tok", "`+vaultSecret+`"))`); r.status != 0 {
		t.Fatalf("storing the secret: %s", r.stderr)
	}
}

func TestPromptRedactsStdinAndAnswer(t *testing.T) {
	e := newEnv(t)
	e.storeSecret(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		return llmtest.Say("I was told: " + r.LastUser() + " and I know " + vaultSecret + ".")
	})
	r := e.runInput(t, e.modelVars(srv), "GITHUB_TOKEN="+vaultSecret+"\n", "-p", "explain "+vaultSecret)
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	user := srv.Requests()[0].LastUser()
	if strings.Contains(user, vaultSecret) || !strings.Contains(user, "explain [REDACTED:tok]") || !strings.Contains(user, "GITHUB_TOKEN=[REDACTED:tok]") {
		t.Fatalf("the model got %q", user)
	}
	if strings.Contains(r.stdout+r.stderr, vaultSecret) || !strings.HasSuffix(r.stdout, "and I know [REDACTED:tok].\n") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestREPLHistoryIsRedactedAndPrivate(t *testing.T) {
	e := newEnv(t)
	e.storeSecret(t)
	hist := filepath.Join(e.state, "tai", "history")
	if err := os.MkdirAll(filepath.Dir(hist), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, []byte("= 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	s.typeKeys("my token is " + vaultSecret + ", keep it\r")
	s.expect("you said: my token is [REDACTED:tok], keep it")
	s.expect("tai:default> ")
	srv.Push(llmtest.Say("it was " + vaultSecret + " all along"))
	s.typeKeys("what was it?\r")
	s.expect("it was [REDACTED:tok] all along")
	s.expect("tai:default> ")
	s.typeKeys("= #'" + vaultSecret + "'\r")
	s.expect("19")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), vaultSecret) {
			t.Fatal("the secret reached the model")
		}
	}
	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), vaultSecret) || !strings.Contains(string(b), "= #'[REDACTED:tok]'\n") {
		t.Fatalf("history:\n%s", b)
	}
	st, err := os.Stat(hist)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("history file mode %v, want 0600", perm)
	}
}

func TestREPLChatThatLooksLikeConfig(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	for _, line := range []string{"x = 2 times 3, what is x?", "[1, 2, 3] reverse this list", `{"a": 1} is this valid?`} {
		s.typeKeys(line + "\r")
		s.expect("you said: " + line)
		s.expect("tai:default> ")
	}
	// A pasted config is still read whole.
	s.typeKeys("[mcp_servers.docs]\rcommand = \"npx\"\r\r")
	s.expect("the paste holds 1 server")
	s.expect("run:     npx")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("\r")
	s.expect("(you said no; nothing was started)")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

func TestREPLCtrlCAtConsentCancelsTheTurn(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(
		llmtest.Call("write_file", `{"path":"one.txt","content":"1"}`),
		llmtest.Call("write_file", `{"path":"two.txt","content":"2"}`)))
	s.typeKeys("write two files\r")
	s.expect("[s]how everything: ")
	before := len(srv.Requests())
	s.typeKeys("\x03")
	s.expect("interrupted")
	s.expect("tai:default> ")
	if n := len(srv.Requests()); n != before {
		t.Fatalf("the turn went on after Ctrl-C: %d more model calls", n-before)
	}
	if strings.Count(s.seen.String(), "⚠ write_file wants to run") != 1 {
		t.Fatal("the second call was still asked about")
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.root, f)); err == nil {
			t.Fatalf("%s was written", f)
		}
	}
	s.typeKeys("still there?\r")
	s.expect("you said: still there?")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

func TestREPLStepLimitIsShown(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(llmtest.Request) llmtest.Turn {
		return llmtest.Calls(llmtest.Call("list_dir", `{"path":"."}`))
	})
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	s.typeKeys("look around\r")
	s.expect("(the turn stopped at the step limit")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

func TestPromptCutOffAnswerIsAFailure(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "the first half of", Finish: "length"})
	r := e.runEnv(t, e.modelVars(srv), "-p", "write a long essay")
	if r.status != 1 {
		t.Fatalf("status %d, want 1\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
	if r.stdout != "the first half of\n" || !strings.Contains(r.stderr, "cut off at the model's output limit") {
		t.Fatalf("stdout %q\nstderr %q", r.stdout, r.stderr)
	}
}

func TestREPLCutOffAnswerIsShown(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "the first half of", Finish: "length"})
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	s.typeKeys("write a long essay\r")
	s.expect("the first half of")
	s.expect("(the answer was cut off at the model's output limit")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}
