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

// TestPipedLinesNeverAnswerConsent: with stdin a pipe and no terminal at
// all, the piped lines after a message are not taken for the person's
// answer to a consent screen or an ask_user question: the shell command
// does not run, ask_user is refused, and the lines are read as what they
// are. tai -e and tai -p refuse the same way.
func TestPipedLinesNeverAnswerConsent(t *testing.T) {
	e := newEnv(t)
	pwned := filepath.Join(e.root, "pwned")
	touch := `{"command":"touch ` + pwned + `"}`
	tests := []struct {
		name  string
		input string
		args  []string
		turns []llmtest.Turn
	}{
		{"REPL consent", "summarize these notes\ny\n", nil,
			[]llmtest.Turn{llmtest.Calls(llmtest.Call("shell", touch))}},
		{"REPL consent, many yeses", "summarize these notes\ny\ny\nyes\ny\n", nil,
			[]llmtest.Turn{llmtest.Calls(llmtest.Call("shell", touch)), llmtest.Calls(llmtest.Call("shell", touch))}},
		{"REPL ask_user then consent", "go on\nblue\ny\n", nil,
			[]llmtest.Turn{llmtest.Calls(llmtest.Call("ask_user", `{"question":"colour?"}`)), llmtest.Calls(llmtest.Call("shell", touch))}},
		{"tai -e", "y\ny\ny\n", []string{"-e", `print(tai.chat("tidy up"))`},
			[]llmtest.Turn{llmtest.Calls(llmtest.Call("shell", touch))}},
		{"a prompter of one's own reading io.stdin", "y\ny\n", []string{"-e", `tai.prompter{confirm = function() return io.stdin:read("*l") == "y" end, ask = function() return io.stdin:read("*l") end} ` +
			`print(tai.chat("tidy up"))`}, []llmtest.Turn{llmtest.Calls(llmtest.Call("shell", touch))}},
		{"tai -p", "y\ny\n", []string{"-p", "tidy up"},
			[]llmtest.Turn{llmtest.Calls(llmtest.Call("shell", touch))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(pwned)
			srv := llmtest.NewOpenAI(t, tt.turns...)
			srv.SetRule(fromToolResults)
			r := e.runInput(t, e.modelVars(srv), tt.input, append([]string{"--clean"}, tt.args...)...)
			if _, err := os.Stat(pwned); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a piped line answered the consent screen: the command ran\nstdout %s\nstderr %s", r.stdout, r.stderr)
			}
			for _, req := range srv.Requests() {
				for _, res := range req.ToolResults() {
					if strings.Contains(res.Text, "blue") {
						t.Errorf("a piped line answered ask_user: %q", res.Text)
					}
				}
			}
		})
	}
}

// TestPipedREPLAsksOnTheTerminal: with stdin a pipe but a controlling
// terminal, the consent question is asked on /dev/tty and answered there;
// the piped "n" that follows is just the next message.
func TestPipedREPLAsksOnTheTerminal(t *testing.T) {
	e := newEnv(t)
	made := madeIn(t, e)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", `{"command":"touch `+made+`"}`)))
	srv.SetRule(fromToolResults)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, taiBin, "--clean")
	cmd.Env = e.modelVars(srv)
	cmd.Dir = e.root
	cmd.Stdin = strings.NewReader("make the file\nn\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	s := watch(t, ptmx, cmd)
	s.expect("the model asks to run shell")
	s.expect(": ")
	s.typeKeys("y\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tai: %v\nstdout %s", err, out.String())
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the answer typed on the terminal did not allow the call: %v\nstdout %s", err, out.String())
	}
}
