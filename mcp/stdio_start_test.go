package mcp

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// StdioOptions.Start starts the prepared command in place of its Start
// method: the transport works through what it started, and a failure is
// the transport's start failure.
func TestStdioStartHook(t *testing.T) {
	var seen []string
	st := rawTransport(t, &StdioOptions{Start: func(cmd *exec.Cmd) error {
		seen = append(seen, cmd.Args...)
		if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setctty || len(cmd.ExtraFiles) != 1 {
			t.Errorf("the hook got no controlling terminal to pass on: %+v, %d extra files", cmd.SysProcAttr, len(cmd.ExtraFiles))
		}
		return cmd.Start()
	}})
	if len(seen) == 0 {
		t.Fatal("the Start hook was not called")
	}
	ctx := testCtx(t)
	if err := st.Send(ctx, &Message{ID: IntID(1), Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(ctx); err != nil {
		t.Fatal(err)
	}

	e := fakeEntry(t, "raw")
	bad := NewStdioTransport(e.Command, e.Args, &StdioOptions{Env: e.Env, Start: func(*exec.Cmd) error {
		return errors.New("the sandbox is required, and this system has no Landlock")
	}})
	err := bad.Connect(testCtx(t))
	var pe *ProcessError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no Landlock") {
		t.Fatalf("Connect = %v, want a ProcessError carrying the hook's reason", err)
	}
}
