package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestSpinnerWhileAToolRuns: while an approved tool runs, a spinner names
// it with the time it has taken, and is cleared when it ends; without a
// question before it, the tool line stays as it is for the first second.
func TestSpinnerWhileAToolRuns(t *testing.T) {
	e := newEnv(t)
	fifo := filepath.Join(e.root, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")

	open := func() {
		// The tool blocks reading the FIFO until the test writes to it.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("released\n")
		f.Close()
	}
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"cat `+fifo+`"}`)))
	s.typeKeys("wait for it\r")
	s.expect("[s]how everything: ")
	s.typeKeys("a")
	s.expect(" shell · 0 s")
	open()
	s.expect("\r\x1b[K  shell ✓")
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"cat `+fifo+` "}`)))
	s.typeKeys("again\r")
	s.expect("⚙ shell command=cat")
	s.expect(" shell · 1 s")
	open()
	s.expect("\r\x1b[K  shell ✓")
	s.expect("tai:default> ")
	if n := strings.Count(s.seen.String(), "wants to run"); n != 1 {
		t.Fatalf("asked %d times; want once (the second call came after [a])", n)
	}
}

// TestPromptCtrlCClearsTheSpinner: Ctrl-C while tai -p runs a tool clears
// the spinner's line before saying the turn was interrupted, and tai
// exits with status 130.
func TestPromptCtrlCClearsTheSpinner(t *testing.T) {
	e := newEnv(t)
	fifo := filepath.Join(e.root, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Let the shell's reader go, should it still wait.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", `{"command":"cat `+fifo+`"}`)))
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv), "-p", "wait for it")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect(" shell · 0 s")
	s.typeKeys("\x03")
	s.expect("tai: interrupted")
	text := s.seen.String()
	before := text[:strings.LastIndex(text, "tai: interrupted")]
	after := before[strings.LastIndex(before, " s\x1b[K")+len(" s\x1b[K"):]
	if !strings.Contains(after, "\r\x1b[K") {
		t.Fatalf("the spinner's line was not cleared before the message: %q", before[max(0, len(before)-80):])
	}
	if status := s.wait(); status != 130 {
		t.Fatalf("exit status %d, want 130", status)
	}
}
