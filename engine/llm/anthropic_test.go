package llm

import (
	"encoding/json"
	"testing"

	"tai/engine/llm/llmtest"
)

func TestAnthropicRequestShape(t *testing.T) {
	cl, srv, _ := providers[1].start(t, llmtest.Say("ok"))
	if _, err := cl.Complete(testCtx(t), conversation(), func(string) {}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("x-api-key") != testKey || r.Header.Get("anthropic-version") != AnthropicVersion {
		t.Errorf("headers = %v", r.Header)
	}
	var body struct {
		System    string `json:"system"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.System != "You are terse." || body.MaxTokens != 321 {
		t.Errorf("system %q max_tokens %d", body.System, body.MaxTokens)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("messages = %+v, want user, assistant, user (tool results and follow-up merged)", body.Messages)
	}
	a := body.Messages[1]
	if a.Role != "assistant" || len(a.Content) != 3 || a.Content[0]["type"] != "text" || a.Content[1]["type"] != "tool_use" || a.Content[2]["id"] != "c2" {
		t.Errorf("assistant = %+v", a)
	}
	u := body.Messages[2]
	if u.Role != "user" || len(u.Content) != 3 {
		t.Fatalf("merged user message = %+v", u)
	}
	if u.Content[0]["type"] != "tool_result" || u.Content[0]["tool_use_id"] != "c1" || u.Content[0]["is_error"] != nil {
		t.Errorf("first tool result = %v", u.Content[0])
	}
	if u.Content[1]["tool_use_id"] != "c2" || u.Content[1]["is_error"] != true || u.Content[1]["content"] != "no such file" {
		t.Errorf("error tool result = %v", u.Content[1])
	}
	if u.Content[2]["type"] != "text" || u.Content[2]["text"] != "And then?" {
		t.Errorf("follow-up = %v", u.Content[2])
	}
	if len(body.Tools) != 2 || body.Tools[1]["input_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("tools = %v", body.Tools)
	}
	// The fake parses tool_result blocks back into tool messages.
	res := r.ToolResults()
	if len(res) != 2 || res[0].ToolCallID != "c1" || res[0].Text != "alpha" || res[0].IsError || !res[1].IsError {
		t.Errorf("fake's view of the tool results = %+v", res)
	}
	if r.LastUser() != "And then?" {
		t.Errorf("fake's last user text = %q", r.LastUser())
	}
}

func TestAnthropicDefaultMaxTokens(t *testing.T) {
	cl, srv, _ := providers[1].start(t, llmtest.Say("ok"))
	if _, err := cl.Complete(testCtx(t), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].MaxTokens; got != defaultAnthropicMaxTokens {
		t.Errorf("max_tokens = %d, want %d", got, defaultAnthropicMaxTokens)
	}
}

func TestAnthropicMessageMerging(t *testing.T) {
	req := Request{Messages: []Message{
		{Role: "system", Content: "one"},
		{Role: "user", Content: "a"},
		{Role: "system", Content: "two"},
		{Role: "user", Content: "b"},
		{Role: "assistant"}, // empty: dropped
		{Role: "user", Content: "c"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "t1", Name: "f", Arguments: json.RawMessage(`"not an object"`)}}},
		{Role: "tool", ToolCallID: "t1", Content: ""},
	}}
	got := anthropicRequest("m", 0, req, false)
	if got.System != "one\n\ntwo" {
		t.Errorf("system = %q", got.System)
	}
	if len(got.Messages) != 3 || got.Messages[0].Role != "user" || len(got.Messages[0].Content) != 3 {
		t.Fatalf("messages = %+v, want the three user texts merged, then assistant, then user", got.Messages)
	}
	use := got.Messages[1].Content[0]
	if use.Type != "tool_use" || string(use.Input) != "{}" {
		t.Errorf("tool_use = %+v, want a non-object input sent as {}", use)
	}
	res := got.Messages[2].Content[0]
	if res.Type != "tool_result" || res.Content != "(no output)" {
		t.Errorf("tool_result = %+v, want empty output marked", res)
	}
	if got.MaxTokens != defaultAnthropicMaxTokens {
		t.Errorf("max_tokens = %d", got.MaxTokens)
	}
}
