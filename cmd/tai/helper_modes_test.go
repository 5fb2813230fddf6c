package main

import (
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestMainRunsTheKeeperAndTheSandbox drives the built binary: the shell
// tool's command runs under tai started again as the keeper, and the lua
// tool's chunk in tai started again as the sandbox. Both answers reach the
// model, so main turned each helper process into its helper rather than
// into another tai.
func TestMainRunsTheKeeperAndTheSandbox(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(
		llmtest.Call("shell", `{"command":"echo keeper says $((6*7))"}`),
		llmtest.Call("lua", `{"chunk":"print('sandbox has io:', io ~= nil) return 6*7"}`),
	))
	srv.SetRule(fromToolResults)
	r := e.runEnv(t, e.modelVars(srv), "--yolo", "-p", "run both")
	if r.status != 0 {
		t.Fatalf("status %d\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
	for _, want := range []string{"keeper says 42", "sandbox has io:\tfalse", "returned: [42]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the model was not told %q: %q", want, r.stdout)
		}
	}
}
