package engine

import (
	"context"
	"slices"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// TestToolNotesReachTheLine: what a tool notes while it runs (tool.Note:
// a server's question declined under --auto) reaches that call's
// OnToolEnd, and only that call's; the same note said 30 times is one
// line that counts the repeats.
func TestToolNotesReachTheLine(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Calls(llmtest.Call("asks", `{}`), llmtest.Call("quiet", `{}`)), llmtest.Say("done"))
	store := vaulttest.Open(t)
	p := llm.Profile{Name: "fake", Provider: llm.ProviderAnthropic, BaseURL: srv.BaseURL, Model: "claude-fake", KeyEnv: "KEY"}
	if err := llm.SaveProfile(store, p); err != nil {
		t.Fatal(err)
	}
	e, err := New(store, &Options{Profile: "fake", Mode: tool.Yolo, Dir: t.TempDir(), Getenv: func(k string) string {
		if k == "KEY" {
			return "sk-ant-test"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"asks", "quiet"} {
		addTool(t, e.Tools(), tool.Tool{Name: name, Description: "a tool", Safe: true,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{}},
			Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
				if name == "asks" {
					tool.Note(ctx, "elicitation declined: --yolo answers no server's questions")
					for range 30 {
						tool.Note(ctx, "s asked for sampling more than 10 times a minute; refused")
					}
				}
				return tool.TextResult("ok"), nil
			}})
	}
	a := newSession(t, e).NewAgent(nil)
	notes := make(chan ToolEvent, 2)
	ev := Events{OnToolEnd: func(te ToolEvent) { notes <- te }}
	if _, err := a.RunTurn(context.Background(), "go", &TurnOptions{Events: ev}); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for range 2 {
		te := <-notes
		got[te.Name] = te.Notes
	}
	want := []string{"elicitation declined: --yolo answers no server's questions", "s asked for sampling more than 10 times a minute; refused (29 more times)"}
	if !slices.Equal(got["asks"], want) || got["quiet"] != nil {
		t.Fatalf("notes by call: %q", got)
	}
}
