package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
)

// TestREPLBangStopsDetachedChildren: a !command that leaves a detached
// process behind (setsid) gives the prompt back when the command ends, and
// the detached process is stopped and reported, as for the shell tool.
func TestREPLBangStopsDetachedChildren(t *testing.T) {
	e := newEnv(t)
	pidFile := filepath.Join(e.root, "pid")
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	// the command ends once the detached sleep has written its pid
	s.typeKeys(`!(setsid sh -c 'echo $$ > ` + pidFile + `; exec sleep 301' &); while [ ! -s ` + pidFile + ` ]; do :; done` + "\r")
	s.expect("they were stopped")
	s.expect("tai:ollama> ")
	if pid := pidIn(t, pidFile); alive(t, pid) {
		t.Fatalf("the detached sleep (pid %d) still runs", pid)
	}
	// output past the inline limit of a tool result is still shown whole
	s.typeKeys("!seq 1 30000\r")
	s.expect("l1\r\n2\r\n") // right after the end of bracketed paste
	s.expect("\r\n15000\r\n15001\r\n")
	s.expect("\r\n29999\r\n30000\r\n")
	s.expect("tai:ollama> ")
	s.typeKeys("!echo still here\r")
	s.expect("still here\r\n")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	s.wait()
}

// TestREPLBangCtrlC: Ctrl-C stops a running !command and gives the prompt
// back.
func TestREPLBangCtrlC(t *testing.T) {
	e := newEnv(t)
	fifo := filepath.Join(e.root, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 1)
	go func() {
		// opening blocks until the command opens the pipe to write
		b, _ := os.ReadFile(fifo)
		started <- strings.TrimSpace(string(b))
	}()
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("!echo $$ > " + fifo + "; exec sleep 300\r")
	var pid int
	select {
	case got := <-started:
		n, err := strconv.Atoi(got)
		if err != nil {
			t.Fatalf("pid %q", got)
		}
		pid = n
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not start")
	}
	s.typeKeys("\x03")
	s.expect("interrupted")
	s.expect("tai:ollama> ")
	if alive(t, pid) {
		t.Fatalf("the sleep (pid %d) still runs after Ctrl-C", pid)
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestREPLBangStreamsItsOutput: a !command's output shows as it comes,
// before the command ends, and its exit status follows at the end.
func TestREPLBangStreamsItsOutput(t *testing.T) {
	e := newEnv(t)
	gate := filepath.Join(e.root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	// the command prints, then waits until the test opens the gate
	s.typeKeys("!echo first-part; read x < " + gate + "; echo second-part; exit 3\r")
	s.expect("first-part\r\n")
	if after := s.seen.String()[s.mark:]; strings.Contains(after, "second-part") || strings.Contains(after, "exit status") {
		t.Fatal("the command's end shown before it ended")
	}
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	s.expect("second-part\r\n")
	s.expect("exit status 3 (")
	s.expect("tai:ollama> ")
	if strings.Contains(s.seen.String(), "--- stdout ---") || strings.Count(s.seen.String(), "second-part\r\n") != 1 {
		t.Fatalf("the output was shown twice:\n%s", s.seen.String())
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestEscStopsALongTool: Esc pressed while the model's shell call runs
// stops it, and the turn, as Ctrl-C does; so it does a !command; the
// REPL goes on.
func TestEscStopsALongTool(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	fifo := filepath.Join(e.root, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 2)
	waitStart := func() int {
		t.Helper()
		go func() {
			b, _ := os.ReadFile(fifo)
			started <- strings.TrimSpace(string(b))
		}()
		select {
		case got := <-started:
			pid, err := strconv.Atoi(got)
			if err != nil {
				t.Fatalf("pid %q", got)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		case <-time.After(30 * time.Second):
			t.Fatal("the command did not start")
		}
		return 0
	}
	s := startREPLIn(t, e.root, e.modelVars(srv), "--yolo")
	s.expect("> ")
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"echo $$ > `+fifo+`; exec sleep 300"}`)))
	s.typeKeys("wait a long time\r")
	pid := waitStart()
	s.typeKeys("\x1b")
	s.expect("interrupted")
	s.expect("> ")
	if alive(t, pid) {
		t.Fatalf("the shell call (pid %d) still runs after Esc", pid)
	}
	s.typeKeys("!echo $$ > " + fifo + "; exec sleep 300\r")
	pid = waitStart()
	s.typeKeys("\x1b")
	s.expect("interrupted")
	s.expect("> ")
	if alive(t, pid) {
		t.Fatalf("the !command (pid %d) still runs after Esc", pid)
	}
	// typing goes on as before once the turn is over
	s.typeKeys("!echo after\r")
	s.expect("after\r\n")
	s.expect("> ")
	s.typeKeys("\x04")
	s.wait()
}
