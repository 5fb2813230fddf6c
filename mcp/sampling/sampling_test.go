package sampling

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		params string
		err    string
		check  func(t *testing.T, r Request)
	}{
		{name: "one content object", params: `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":20,"systemPrompt":"be brief",` +
			`"modelPreferences":{"hints":[{"name":"sonnet"}],"speedPriority":0.5}}`,
			check: func(t *testing.T, r Request) {
				if r.Prompt() != "hi" || r.SystemPrompt != "be brief" || r.MaxTokens != 20 || r.ModelPreferences.Hints[0] != "sonnet" || *r.ModelPreferences.SpeedPriority != 0.5 {
					t.Fatalf("%+v", r)
				}
			}},
		{name: "arrays, tools and results", params: `{"messages":[{"role":"user","content":[{"type":"text","text":"weather?"},{"type":"image","data":"aGk=","mimeType":"image/png"}]},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"weather","input":{"city":"Paris"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"rain"}]}]}],` +
			`"maxTokens":99999,"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"}}`,
			check: func(t *testing.T, r Request) {
				if len(r.Messages) != 3 || r.Messages[0].Content[1].Size != 4 || r.Messages[1].Content[0].Name != "weather" ||
					r.Messages[2].Content[0].Text != "rain" || !r.Offers("weather") || r.ToolChoice != "auto" ||
					r.MaxTokens != MaxTokens || r.Lowered != 99999 || r.Prompt() != "" {
					t.Fatalf("%+v", r)
				}
				if l := r.Messages[0].Content[1].Label(); !strings.Contains(l, "image image/png") {
					t.Fatalf("label %q", l)
				}
			}},
		{name: "no messages", params: `{"messages":[],"maxTokens":5}`, err: "no messages"},
		{name: "no maxTokens", params: `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`, err: "positive maxTokens"},
		{name: "bad role", params: `{"messages":[{"role":"system","content":{"type":"text","text":"x"}}],"maxTokens":5}`, err: `role "system"`},
		{name: "unknown content", params: `{"messages":[{"role":"user","content":{"type":"video"}}],"maxTokens":5}`, err: `"video" is not one`},
		{name: "tool_use without id", params: `{"messages":[{"role":"assistant","content":{"type":"tool_use","name":"x"}}],"maxTokens":5}`, err: "needs an id"},
		{name: "not JSON object", params: `[1]`, err: "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(json.RawMessage(tc.params))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, r)
		})
	}
}

// TestParseBounds: a request past a bound is a *TooLargeError, whatever
// the shape of its excess.
func TestParseBounds(t *testing.T) {
	msg := func(text string) map[string]any {
		return map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}
	}
	many := make([]any, MaxMessages+1)
	for i := range many {
		many[i] = msg("x")
	}
	tools := make([]any, MaxTools+1)
	for i := range tools {
		tools[i] = map[string]any{"name": "t", "inputSchema": map[string]any{}}
	}
	for name, p := range map[string]map[string]any{
		"text":     {"messages": []any{msg(strings.Repeat("x", MaxRequestBytes+1))}, "maxTokens": 5},
		"system":   {"messages": []any{msg("x")}, "systemPrompt": strings.Repeat("s", MaxRequestBytes), "maxTokens": 5},
		"messages": {"messages": many, "maxTokens": 5},
		"tools":    {"messages": []any{msg("x")}, "tools": tools, "maxTokens": 5},
	} {
		raw, _ := json.Marshal(p)
		_, err := Parse(raw)
		var big *TooLargeError
		if !errors.As(err, &big) {
			t.Errorf("%s: err = %v, want a TooLargeError", name, err)
		}
	}
}

func TestSetPromptAndResult(t *testing.T) {
	r, err := Parse(json.RawMessage(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"}]},{"role":"assistant","content":{"type":"text","text":"b"}}],"maxTokens":5}`))
	if err != nil {
		t.Fatal(err)
	}
	r.SetPrompt("edited")
	if r.Prompt() != "edited" || len(r.Messages[0].Content) != 2 || r.Messages[0].Content[1].Type != "image" {
		t.Fatalf("%+v", r.Messages)
	}
	one, _ := json.Marshal(Result{Model: "m", Text: "hi", StopReason: EndTurn})
	if string(one) != `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"}` {
		t.Fatalf("%s", one)
	}
	calls, _ := json.Marshal(Result{Model: "m", ToolCalls: []ToolCall{{ID: "c", Name: "w", Input: json.RawMessage("not json")}}, StopReason: ToolUse})
	if string(calls) != `{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"w","input":{}}],"model":"m","stopReason":"toolUse"}` {
		t.Fatalf("%s", calls)
	}
}
