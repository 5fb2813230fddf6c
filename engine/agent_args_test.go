package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestAgentInvalidToolArguments checks that arguments which are not JSON
// reach the model as a syntax error with its offset, and stay in the
// history as the text the model sent, quoted once.
func TestAgentInvalidToolArguments(t *testing.T) {
	cases := []struct {
		name, args string
		want       []string
		history    string
		providers  []fakeProvider // Anthropic streams partial JSON of an object: only broken text applies
	}{
		{name: "broken", args: `{"path": "a.txt",}`, want: []string{"not valid JSON", "at byte 18", "near", "a.txt"},
			history: `{"invalid_arguments":"{\"path\": \"a.txt\",}"}`, providers: fakeProviders},
		{name: "string", args: `"a.txt"`, want: []string{"a JSON string, not an object"},
			history: `{"invalid_arguments":"\"a.txt\""}`, providers: fakeProviders[:1]},
		{name: "array", args: `[1,2]`, want: []string{"a JSON array, not an object"},
			history: `{"invalid_arguments":"[1,2]"}`, providers: fakeProviders[:1]},
	}
	for _, tc := range cases {
		for _, p := range tc.providers {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := p.fake(t, llmtest.Calls(llmtest.Call("read_file", tc.args)), llmtest.Say("ok"))
				e := fakeProfileEngine(t, p.name, srv.BaseURL, &Options{Mode: tool.Yolo})
				ev := Events{OnText: func(string) {}}
				ag := newSession(t, e).NewAgent(nil)
				if _, err := ag.RunTurn(turnCtx(t), "read it", &TurnOptions{Events: ev}); err != nil {
					t.Fatal(err)
				}
				hist := ag.History()
				if len(hist) < 3 {
					t.Fatalf("history %+v", hist)
				}
				if got := string(hist[1].ToolCalls[0].Arguments); got != tc.history {
					t.Errorf("history arguments %s, want %s", got, tc.history)
				}
				res := hist[2]
				for _, w := range tc.want {
					if !res.IsError || !strings.Contains(res.Content, w) {
						t.Errorf("result %q does not say %q", res.Content, w)
					}
				}
				if strings.Contains(res.Content, "Go value") || strings.Contains(res.Content, "map[string]interface") {
					t.Errorf("result %q speaks of Go internals", res.Content)
				}
			})
		}
	}
}

func TestToolCallMarshalsInvalidArguments(t *testing.T) {
	b, err := json.Marshal(llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(`{"a":`)}, {ID: "2", Name: "g", Arguments: json.RawMessage(`{"b":1}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","tool_calls":[{"id":"1","name":"f","arguments":"{\"a\":"},{"id":"2","name":"g","arguments":{"b":1}}]}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}
