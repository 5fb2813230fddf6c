package engine

import (
	"fmt"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestProviderSwitchKeepsRequestsValid runs one conversation that moves
// from an OpenAI-compatible server to Anthropic and back, with tool calls
// on each, in the ways servers really answer: Kimi's ids with dots and
// colons, Claude's "\n\n" before a call, a local server that sends no ids.
// Every request either fake receives is checked against its API's schema
// (llmtest fails the test on one the API would refuse), each turn resends
// the whole history the other provider wrote, and streaming is tried
// both ways.
func TestProviderSwitchKeepsRequestsValid(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			oa := llmtest.NewOpenAI(t,
				llmtest.Calls(llmtest.ToolCall{ID: "functions.list_dir:0", Name: "list_dir", Arguments: `{"path":"."}`}),
				llmtest.Say("One file."),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("list_dir", `{"path":"."}`)}, NoIDs: true},
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("glob", `{"pattern":"*"}`)}, NoIDs: true},
				llmtest.Say("Still one."),
			)
			an := llmtest.NewAnthropic(t,
				llmtest.Turn{Text: "\n\n", ToolCalls: []llmtest.ToolCall{llmtest.Call("read_file", `{"path":"notes.txt"}`)}},
				llmtest.Say("\n"),
			)
			e := fakeProfileEngine(t, llm.ProviderOpenAI, oa.BaseURL, &Options{Mode: tool.Yolo})
			writeFiles(t, e.Dir(), map[string]string{"notes.txt": "hello"})
			if err := llm.SaveProfile(e.Store(), llm.Profile{Name: "claude", Provider: llm.ProviderAnthropic, BaseURL: an.BaseURL, Model: "claude-test", KeySecret: "model-key"}); err != nil {
				t.Fatal(err)
			}
			s := newSession(t, e)
			var ev Events
			if stream {
				ev.OnText = func(string) {}
			}
			for _, step := range []struct{ profile, say string }{
				{"fake", "what is here?"},
				{"claude", "read the notes"},
				{"fake", "and now?"},
			} {
				if _, err := s.SwitchProfile(step.profile); err != nil {
					t.Fatal(err)
				}
				if _, err := s.RunTurn(turnCtx(t), step.say, &TurnOptions{Events: ev}); err != nil {
					t.Fatalf("%s: %v", step.profile, err)
				}
			}
			if n, m := len(oa.Requests()), len(an.Requests()); n != 5 || m != 2 {
				t.Fatalf("%d OpenAI and %d Anthropic requests, want 5 and 2", n, m)
			}
			// The last request carries the whole conversation: every call
			// answered under one id, no id twice.
			seen := map[string]bool{}
			last := oa.Requests()[4]
			for _, m := range last.Messages {
				for _, c := range m.ToolCalls {
					if seen[c.ID] {
						t.Errorf("call id %q sent twice", c.ID)
					}
					seen[c.ID] = true
				}
			}
			if len(seen) != 4 {
				t.Errorf("%d calls in the last request, want 4: %s", len(seen), last.Body)
			}
			checkHistory(t, s.Agent().History())
		})
	}
}
