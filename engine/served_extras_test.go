package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestServedExtrasTakeTheRegistryPath: chat and completions are prepared,
// checked, audited, redacted and spilled by the registry like any other
// tool: a refused call is audited, a secret the model repeats is redacted,
// an answer over ResultMax becomes a record; a chat turn is still a full
// agent's (a bridged tool runs in it).
func TestServedExtrasTakeTheRegistryPath(t *testing.T) {
	const secret = "sk-fake-model-key-123" // fakeProfileEngine's model key
	srv := llmtest.NewOpenAI(t,
		llmtest.Say("the key is "+secret),
		llmtest.Say("completed with "+secret),
		llmtest.Say(strings.Repeat("long answer ", tool.ResultMax/10)),
		llmtest.Calls(llmtest.Call("mcp_fs_read", `{}`)),
		llmtest.Say("read it"),
	)
	e := fakeProfileEngine(t, llm.ProviderOpenAI, srv.BaseURL, nil)
	var bridged atomic.Int32
	e.Tools().SetFallback(func(name string) (tool.Tool, bool) {
		if name != "mcp_fs_read" {
			return tool.Tool{}, false
		}
		return tool.Tool{Name: name, Origin: "fs/read", Run: func(context.Context, map[string]any) (tool.Result, error) {
			bridged.Add(1)
			return tool.TextResult("file text"), nil
		}}, true
	})
	e.Tools().SetSpecSource(func(string) []llm.ToolSpec {
		return []llm.ToolSpec{{Name: "mcp_fs_read", Description: "reads a file", Parameters: map[string]any{"type": "object"}}}
	})
	sess := sdkSession(t, serveEngine(t, e))

	if text, isErr := callText(t, sess, ServedChat, map[string]any{"message": "say the key"}); isErr || strings.Contains(text, secret) || !strings.Contains(text, "[REDACTED") {
		t.Fatalf("chat answered %q (isError %v): the secret is not redacted", text, isErr)
	}
	if text, isErr := callText(t, sess, ServedCompletions, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "key?"}}}); isErr || strings.Contains(text, secret) {
		t.Fatalf("completions answered %q (isError %v)", text, isErr)
	}
	bad := []struct {
		tool string
		args map[string]any
		want string
	}{
		{ServedChat, map[string]any{"message": "x", "extra": 1}, `chat does not take "extra"`},
		{ServedChat, map[string]any{"message": 7}, `argument "message" is a float64: give it as a string`},
		{ServedChat, map[string]any{"message": "x", "max_steps": 101}, `argument "max_steps" is 101, out of range: give 1 to 100`},
		{ServedChat, map[string]any{"message": "x", "max_steps": 1.5}, `argument "max_steps" is 1.5: give a whole number`},
		{ServedChat, map[string]any{}, `argument "message" is missing`},
		{ServedCompletions, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x", "name": "n"}}}, `argument "messages[0]" has "name", which it does not take`},
		{ServedCompletions, map[string]any{"messages": "hi"}, `argument "messages" is a string: give a list`},
		{ServedCompletions, map[string]any{}, `argument "messages" is missing`},
	}
	for _, b := range bad {
		text, isErr := callText(t, sess, b.tool, b.args)
		if !isErr || !strings.Contains(text, b.want) {
			t.Errorf("%s %v: %q (isError %v), want %q", b.tool, b.args, text, isErr, b.want)
		}
	}
	tail, err := e.Store().AuditTail(len(bad), "mcp-serve")
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != len(bad) {
		t.Fatalf("%d mcp-serve audit entries for %d refused calls", len(tail), len(bad))
	}
	for i, a := range tail {
		if a.Outcome != "error" || a.Subject != bad[i].tool || !strings.HasPrefix(a.Session, "mcp:") || a.Digest == "" {
			t.Errorf("refused call %d audited as %+v", i, a)
		}
	}

	text, isErr := callText(t, sess, ServedChat, map[string]any{"message": "answer at length"})
	if isErr || !strings.Contains(text, "record_read") || len(text) > tool.ResultMax {
		t.Fatalf("a long chat answer came back inline (%d bytes, isError %v): %.200q", len(text), isErr, text)
	}

	if text, isErr := callText(t, sess, ServedChat, map[string]any{"message": "read the file"}); isErr || text != "read it" {
		t.Fatalf("chat with a bridged tool: %q (isError %v)", text, isErr)
	}
	if bridged.Load() != 1 {
		t.Fatalf("the chat agent's bridged tool ran %d times, want once", bridged.Load())
	}
	reqs := srv.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || res[0].Text != "file text" {
		t.Fatalf("the model got %+v for the bridged call", res)
	}
}

// TestServedExtrasAreServedOnly: outside a served call, chat and
// completions are neither offered to a model nor resolved: a person or a
// model at the terminal has its own agent.
func TestServedExtrasAreServedOnly(t *testing.T) {
	e := newEngine(t, nil, nil)
	for _, spec := range e.Tools().Specs() {
		if spec.Name == ServedChat || spec.Name == ServedCompletions {
			t.Fatalf("%s is offered to the terminal's model", spec.Name)
		}
	}
	s := newSession(t, e)
	for _, ctx := range []context.Context{context.Background(), tool.ByPerson(context.Background())} {
		for _, name := range []string{ServedChat, ServedCompletions} {
			if _, err := s.Dispatch(ctx, name, map[string]any{"message": "hi"}); !errors.Is(err, tool.ErrUnknownTool) {
				t.Fatalf("%s at the terminal: %v, want an unknown tool", name, err)
			}
		}
	}
}
