package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
	"tai/vault"
)

// The model's own shell command kills tai with SIGKILL right after a call
// returned: that call's audit entry was already written, so the next
// process finds it in a trail that verifies.
func TestAuditSurvivesKillFromTheModelsShell(t *testing.T) {
	e := newEnv(t)
	var pid atomic.Int64
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		switch len(r.ToolResults()) {
		case 0:
			return llmtest.Calls(llmtest.Call("list_dir", `{}`))
		case 1:
			return llmtest.Calls(llmtest.Call("shell", fmt.Sprintf(`{"command": "kill -9 %d; sleep 5"}`, pid.Load())))
		}
		return llmtest.Say("still alive")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, taiBin, "--yolo", "-p", "look around, then stop")
	cmd.Env = e.modelVars(srv)
	cmd.Dir = e.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid.Store(int64(cmd.Process.Pid))
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("tai was not killed by its model's shell command: %v\n%s", err, out.String())
	}
	s, err := vault.Open(e.vault, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.AuditVerify()
	if err != nil {
		t.Fatalf("AuditVerify after the kill = %d, %v", n, err)
	}
	tail, err := s.AuditTail(0, "tool")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, en := range tail {
		if en.Subject == "list_dir" && en.Outcome == "ok" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the list_dir call that returned before the kill is not in the trail: %+v", tail)
	}
}

// os.exit from a script is a clean exit: the audit entries of the run are
// folded into the vault file before tai exits.
func TestOSExitFoldsTheAuditJournal(t *testing.T) {
	e := newEnv(t)
	r := e.run(t, "-e", `assert(tai.call("list_dir", {})) os.exit(3)`)
	if r.status != 3 {
		t.Fatalf("status %d, stderr %q", r.status, r.stderr)
	}
	data, err := os.ReadFile(e.vault + vault.JournalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 1 {
		t.Fatalf("the journal holds %d lines after os.exit, want its header alone:\n%s", lines, data)
	}
}
