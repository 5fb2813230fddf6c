package engine

import (
	"strings"
	"testing"
)

// The person's /sandbox off lifts the shell's sandbox for the model's
// commands in this process's own sessions, says so on the result, leaves
// served sessions sandboxed, and /sandbox on puts it back.
func TestShellSandboxLiftedForTheSession(t *testing.T) {
	e, _, _ := shellWorld(t)
	read := map[string]any{"command": "cat ~/.ssh/id_ed25519"}
	res := dispatch(t, e, "shell", read)
	if !res.IsError || !strings.Contains(res.Text(), "/sandbox off at tai's prompt") {
		t.Fatalf("before the lift the key was read, or the refusal does not name /sandbox off:\n%s", res.Text())
	}

	e.LiftShellSandbox(true)
	res = dispatch(t, e, "shell", read)
	if res.IsError || !strings.Contains(res.Text(), "not really") ||
		!strings.HasPrefix(res.Text(), "(outside the sandbox: the person lifted it for this session with /sandbox off)\n") {
		t.Fatalf("lifted: the key was not read, or the result does not say it ran outside the sandbox:\n%s", res.Text())
	}
	served, err := e.NewSession(&SessionOptions{Name: "mcp:test"})
	if err != nil {
		t.Fatal(err)
	}
	if res := dispatchIn(t, served, "shell", read); !res.IsError || strings.Contains(res.Text(), "not really") {
		t.Fatalf("a served session's command ran outside the sandbox:\n%s", res.Text())
	}

	e.LiftShellSandbox(false)
	if res := dispatch(t, e, "shell", read); !res.IsError || strings.Contains(res.Text(), "not really") || strings.Contains(res.Text(), "(outside the sandbox:") {
		t.Fatalf("after /sandbox on the key was read:\n%s", res.Text())
	}
}
