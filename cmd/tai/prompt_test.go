package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"tai/engine/llm/llmtest"
)

// modelVars is the environment with the provider variables pointing at
// the fake model server.
func (e env) modelVars(srv *llmtest.Server) []string {
	return append(e.vars(), "OPENAI_API_KEY=sk-e2e-secret", "OPENAI_BASE_URL="+srv.BaseURL, "TAI_MODEL=fake-model")
}

// runInput runs tai with stdin fed from input. The bound is for a tai
// that hangs: a heavy run (megabytes through the fake model, which the race
// detector slows) takes tens of seconds on a loaded two-core machine.
func (e env) runInput(t *testing.T, vars []string, input string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, taiBin, args...)
	cmd.Env = vars
	cmd.Dir = e.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	status := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running tai %v: %v", args, err)
	}
	return result{status, out.String(), errOut.String()}
}

// fromToolResults answers with the text of the tool results the request
// carries, so the answer shows the model read them.
func fromToolResults(r llmtest.Request) llmtest.Turn {
	var parts []string
	for _, m := range r.ToolResults() {
		parts = append(parts, m.Text)
	}
	if len(parts) == 0 {
		return llmtest.Say("you said: " + r.LastUser())
	}
	return llmtest.Say("the tool said: " + strings.Join(parts, " | "))
}

func TestPromptReadsAFileThroughTheModel(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.root, "notes.txt"), []byte("the launch code is 4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("read_file", `{"path":"notes.txt"}`)))
	srv.SetRule(fromToolResults)
	r := e.runEnv(t, e.modelVars(srv), "-p", "what is in notes.txt?")
	if r.status != 0 {
		t.Fatalf("status %d\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "the tool said: ") || !strings.Contains(r.stdout, "the launch code is 4242") || !strings.HasSuffix(r.stdout, "\n") {
		t.Fatalf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "⚙ read_file path=notes.txt ✓") {
		t.Fatalf("stderr lacks the tool line: %q", r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].Stream || reqs[0].LastUser() != "what is in notes.txt?" {
		t.Fatalf("requests: %d, first %+v", len(reqs), reqs[0])
	}
	if strings.Contains(r.stdout+r.stderr, "sk-e2e-secret") {
		t.Fatal("the key appears in the output")
	}
}

func TestPromptAddsPipedStdin(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	r := e.runInput(t, e.modelVars(srv), "line one\nline two\n", "-p", "summarise this")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	user := srv.Requests()[0].LastUser()
	if !strings.HasPrefix(user, "summarise this\n\n") || !strings.Contains(user, "line one\nline two") {
		t.Fatalf("the message the model got: %q", user)
	}
	if !strings.HasPrefix(r.stdout, "you said: summarise this") {
		t.Fatalf("stdout %q", r.stdout)
	}
}

func TestPromptFailureExitStatus(t *testing.T) {
	e := newEnv(t)
	fail := llmtest.Turn{Status: 500, Error: "the fake is down", RetryAfter: "0"}
	srv := llmtest.NewOpenAI(t, fail, fail, fail, fail, fail, fail)
	r := e.runEnv(t, e.modelVars(srv), "-p", "hello")
	if r.status != 1 {
		t.Fatalf("status %d, want 1\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
	if r.stdout != "" || !strings.Contains(r.stderr, "the fake is down") || !strings.Contains(r.stderr, "500") {
		t.Fatalf("stdout %q\nstderr %q", r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n < 2 {
		t.Fatalf("%d requests: the 500 was not retried", n)
	}
	if strings.Contains(r.stderr, "sk-e2e-secret") {
		t.Fatal("the key appears in the error")
	}
}

func TestPromptApprovalModes(t *testing.T) {
	tests := []struct {
		name     string
		flags    []string
		written  bool
		stderr   string
		answered string
	}{
		{name: "no terminal denies", flags: nil, written: false, stderr: "no terminal to ask: use --auto or a rule", answered: "no terminal to ask"},
		{name: "auto approves and shows", flags: []string{"--auto"}, written: true, stderr: "⚙ write_file content=hello path=out.txt ✓", answered: "out.txt"},
		{name: "yolo approves", flags: []string{"--yolo"}, written: true, stderr: "", answered: "out.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("write_file", `{"path":"out.txt","content":"hello"}`)))
			srv.SetRule(fromToolResults)
			args := append(append([]string{}, tt.flags...), "-p", "write the file")
			r := e.runEnv(t, e.modelVars(srv), args...)
			if r.status != 0 {
				t.Fatalf("status %d: %s", r.status, r.stderr)
			}
			_, err := os.Stat(filepath.Join(e.root, "out.txt"))
			if written := err == nil; written != tt.written {
				t.Fatalf("file written: %v, want %v (stderr %q)", written, tt.written, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("stderr %q lacks %q", r.stderr, tt.stderr)
			}
			if !strings.Contains(r.stdout, tt.answered) {
				t.Fatalf("stdout %q lacks %q", r.stdout, tt.answered)
			}
		})
	}
}

func TestProfileFlag(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn { return llmtest.Say("model " + r.Model) })
	vars := append(e.vars(), "OTHER_KEY=sk-other")
	save := `assert(tai.profiles.save{name = "other", provider = "openai", base_url = "` + srv.BaseURL + `", model = "other-model", key_env = "OTHER_KEY"})`
	if r := e.runEnv(t, vars, "-e", save); r.status != 0 {
		t.Fatalf("saving: %s", r.stderr)
	}
	r := e.runEnv(t, vars, "--profile", "other", "-e", `print(tai.profile) print((tai.chat("hi")))`)
	if r.status != 0 || r.stdout != "other\nmodel other-model\n" {
		t.Fatalf("status %d stdout %q stderr %q", r.status, r.stdout, r.stderr)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-other" {
		t.Fatalf("Authorization %q", got)
	}
	r = e.runEnv(t, vars, "--profile", "missing", "-p", "hi")
	if r.status != 2 || !strings.Contains(r.stderr, `"missing"`) || !strings.Contains(r.stderr, "other") {
		t.Fatalf("unknown profile: status %d stderr %q", r.status, r.stderr)
	}
}

func TestREPLTurns(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv))
	s.expect("tai:default> ")

	// Plain text runs a turn and the answer streams in.
	s.typeKeys("hello model\r")
	s.expect("you said: hello model")
	s.expect("tai:default> ")

	// A non-safe tool asks first: a shows the arguments, y runs it.
	srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"made.txt","content":"from the model"}`)))
	s.typeKeys("make a file\r")
	s.expect("⚙ write_file content=from the model path=made.txt")
	s.expect("⚠ write_file wants to run")
	s.expect("path = made.txt")
	s.expect("creates made.txt:")
	s.expect("+from the model")
	s.expect("[a]lways this session / always in this [p]roject / [s]how everything: ")
	s.typeKeys("s\r")
	s.expect("+from the model")
	s.expect("[s]how everything: ")
	s.typeKeys("y\r")
	s.expect("✓")
	s.expect("the tool said: ")
	s.expect("tai:default> ")
	if b, err := os.ReadFile(filepath.Join(e.root, "made.txt")); err != nil || string(b) != "from the model" {
		t.Fatalf("made.txt: %q, %v", b, err)
	}

	// n refuses, and the model hears so.
	srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"refused.txt","content":"x"}`)))
	s.typeKeys("another file\r")
	s.expect("[s]how everything: ")
	s.typeKeys("n\r")
	s.expect("✗ denied")
	s.expect("was not approved")
	s.expect("tai:default> ")
	if _, err := os.Stat(filepath.Join(e.root, "refused.txt")); err == nil {
		t.Fatal("a refused call ran")
	}

	// ask_user puts the model's question to the person.
	srv.Push(llmtest.Calls(llmtest.Call("ask_user", `{"question":"which colour?"}`)))
	s.typeKeys("ask me something\r")
	s.expect("? which colour?")
	s.expect("answer> ")
	s.typeKeys("blue\r")
	s.expect("the tool said: blue")
	s.expect("tai:default> ")

	// Ctrl-C during a hanging turn returns to the prompt, which still works.
	srv.Push(llmtest.Turn{Text: "partial answer", Hang: true})
	s.typeKeys("take forever\r")
	s.expect("partial")
	s.typeKeys("\x03")
	s.expect("interrupted")
	s.expect("tai:default> ")
	s.typeKeys("= 6 * 7\r")
	s.expect("42")
	s.expect("tai:default> ")
	s.typeKeys("are you back?\r")
	s.expect("you said: are you back?")
	s.expect("tai:default> ")

	// Profiles: create, list, switch (the prompt follows), show.
	s.typeKeys("/profile new spare provider=openai model=spare-model base_url=" + srv.BaseURL + " key_env=OPENAI_API_KEY system=\"be brief\"\r")
	s.expect("saved profile spare")
	s.typeKeys("/profiles\r")
	s.expect("* default")
	s.expect("spare")
	s.typeKeys("/profile use sp\t\r")
	s.expect("now using profile spare")
	s.expect("tai:spare> ")
	s.typeKeys("/profile\r")
	s.expect("spare-model")
	s.expect("be brief")
	s.expect("tai:spare> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "sk-e2e-secret") {
			t.Fatal("the key reached the model")
		}
	}
}

func TestPromptOnAnthropic(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("anthropic reads this"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropic(t, llmtest.Calls(llmtest.Call("read_file", `{"path":"a.txt"}`)))
	srv.SetRule(fromToolResults)
	vars := append(e.vars(), "ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL="+srv.BaseURL, "TAI_MODEL=claude-fake")
	r := e.runEnv(t, vars, "-p", "read a.txt")
	if r.status != 0 || r.stdout != "the tool said: anthropic reads this\n" {
		t.Fatalf("status %d stdout %q stderr %q", r.status, r.stdout, r.stderr)
	}
	if got := srv.Requests()[0].Header.Get("x-api-key"); got != "sk-ant-e2e" {
		t.Fatalf("x-api-key %q", got)
	}
}

// TestPipedPromptAsksOnTheTerminal: with its input piped (echo x | tai -p
// …) and a terminal to talk to, tai asks for consent on /dev/tty; the
// piped text is no answer.
func TestPipedPromptAsksOnTheTerminal(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("write_file", `{"path":"out.txt","content":"hello"}`)))
	srv.SetRule(fromToolResults)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200})
	cmd := exec.Command(taiBin, "-p", "write the file")
	cmd.Env = e.modelVars(srv)
	cmd.Dir = e.root
	cmd.Stdin = strings.NewReader("y\ny\n")
	cmd.Stdout, cmd.Stderr = tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	err = cmd.Start()
	tty.Close() // tai holds it now; the screen ends when tai does
	if err != nil {
		t.Fatal(err)
	}
	s := watch(t, ptmx, cmd)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
	})
	s.expect("⚠ write_file wants to run")
	s.expect("[s]how everything: ")
	if _, err := os.Stat(filepath.Join(e.root, "out.txt")); err == nil {
		t.Fatal("the file was written before anyone answered")
	}
	s.typeKeys("y")
	s.expect("the tool said: ")
	if status := s.wait(); status != 0 {
		t.Fatalf("status %d:\n%s", status, s.seen.String())
	}
	if b, err := os.ReadFile(filepath.Join(e.root, "out.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
}
