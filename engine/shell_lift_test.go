package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"tai/vault"
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

// A permission rule kept with sandbox = false runs the model's commands
// starting with its words outside the sandbox, in its folder only: a
// compound command, another program, a rule of another folder, a rule
// that only allows, and a served session's call stay sandboxed. The
// refusal names the rule that would allow it.
func TestShellSandboxLiftedByARule(t *testing.T) {
	e, home, key := shellWorld(t)
	project, err := filepath.Abs(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	// "cat -- KEY": the suggested prefix is "cat" (for "cat KEY" it would
	// be the whole command, which a failure never echoes).
	read := map[string]any{"command": "cat -- " + key}
	res := dispatch(t, e, "shell", read)
	for _, says := range []string{"!COMMAND at tai's prompt", `= tai.permissions.add{tool = "shell", prefix = "cat", sandbox = false}`, "/sandbox off at tai's prompt"} {
		if !res.IsError || !strings.Contains(res.Text(), says) {
			t.Fatalf("the refusal does not say %q:\n%s", says, res.Text())
		}
	}
	for _, r := range []vault.Permission{
		{Dir: project, Tool: "shell", Prefix: "head"},                                         // allows, lifts nothing
		{Dir: filepath.Join(home, "other"), Tool: "shell", Prefix: "tail", Unsandboxed: true}, // another folder
		{Dir: project, Tool: "shell", Prefix: "cat", Unsandboxed: true},
	} {
		if err := e.store.PermissionAdd(r); err != nil {
			t.Fatal(err)
		}
	}
	res = dispatch(t, e, "shell", read)
	if res.IsError || !strings.Contains(res.Text(), "not really") ||
		!strings.HasPrefix(res.Text(), "(outside the sandbox: rule for 'cat' in this folder)\n") {
		t.Fatalf("the rule did not lift the sandbox, or the result does not say so:\n%s", res.Text())
	}
	for _, command := range []string{"cat " + key + "; true", "true && cat " + key, "head " + key, "tail " + key, "cat $HOME/.ssh/id_ed25519"} {
		res := dispatch(t, e, "shell", map[string]any{"command": command})
		if strings.Contains(res.Text(), "not really") || strings.Contains(res.Text(), "(outside the sandbox:") {
			t.Errorf("%s ran outside the sandbox:\n%s", command, res.Text())
		}
	}
	served, err := e.NewSession(&SessionOptions{Name: "mcp:test"})
	if err != nil {
		t.Fatal(err)
	}
	if res := dispatchIn(t, served, "shell", read); !res.IsError || strings.Contains(res.Text(), "not really") {
		t.Fatalf("a served session read the rule:\n%s", res.Text())
	}
}

// TestNamesProgramReadsArgvAsTheToolDoes: a git command that names a
// program for git to run is seen whether its argv came decoded from JSON
// or built in Go.
func TestNamesProgramReadsArgvAsTheToolDoes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"command", map[string]any{"command": "git push --receive-pack=x origin"}},
		{"argv from JSON", map[string]any{"argv": []any{"git", "push", "--receive-pack=x", "origin"}}},
		{"argv from Go", map[string]any{"argv": []string{"git", "push", "--receive-pack=x", "origin"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !namesProgram(tc.args) {
				t.Fatalf("namesProgram(%v) = false", tc.args)
			}
		})
	}
}
