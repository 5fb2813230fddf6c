package llm

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
)

const testKey = "sk-test-0123456789abcdef"

// sleepRecorder stands in for RetryPolicy.Sleep: it records the waits asked
// for and returns at once.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *sleepRecorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// provider builds a client of one kind against a fresh fake.
type provider struct {
	name string
	fake func(testing.TB, ...llmtest.Turn) *llmtest.Server
	new  func(ProviderConfig) ChatClient
}

var providers = []provider{
	{"openai", llmtest.NewOpenAI, func(c ProviderConfig) ChatClient { return NewOpenAI(c) }},
	{"anthropic", llmtest.NewAnthropic, func(c ProviderConfig) ChatClient { return NewAnthropic(c) }},
}

func (p provider) start(t testing.TB, turns ...llmtest.Turn) (ChatClient, *llmtest.Server, *sleepRecorder) {
	t.Helper()
	srv := p.fake(t, turns...)
	srv.RequireKey(testKey)
	rec := &sleepRecorder{}
	cl := p.new(ProviderConfig{
		BaseURL: srv.BaseURL, Model: "fake-model", APIKey: testKey,
		Retry: RetryPolicy{Base: 100 * time.Millisecond, Max: 5 * time.Second, Sleep: rec.sleep},
	})
	return cl, srv, rec
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func userRequest(text string) Request {
	return Request{Messages: []Message{{Role: "user", Content: text}}}
}

func TestCompleteAnswers(t *testing.T) {
	cases := []struct {
		name   string
		turn   llmtest.Turn
		text   string
		calls  []ToolCall
		finish string
	}{
		{name: "text", turn: llmtest.Say("Hello there, how are you?"), text: "Hello there, how are you?", finish: "stop"},
		{
			name: "one tool call",
			turn: llmtest.Calls(llmtest.Call("read_file", `{"path":"a.txt","lines":[1,20]}`)),
			calls: []ToolCall{
				{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt","lines":[1,20]}`)},
			},
			finish: "tool_calls",
		},
		{
			name: "text and several tool calls",
			turn: llmtest.Turn{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{
				llmtest.Call("list_dir", `{"path":"."}`),
				llmtest.Call("grep", `{"pattern":"caf\u00e9 \\d+","path":"src"}`),
				llmtest.Call("shell", ``),
			}},
			text: "Let me look.",
			calls: []ToolCall{
				{Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)},
				{Name: "grep", Arguments: json.RawMessage(`{"pattern":"caf\u00e9 \\d+","path":"src"}`)},
				{Name: "shell", Arguments: json.RawMessage(`{}`)},
			},
			finish: "tool_calls",
		},
		{name: "length", turn: llmtest.Turn{Text: "cut", Finish: "length"}, text: "cut", finish: "length"},
		{
			// The limit hit while a call was written: "length" must survive
			// the calls, so the agent knows their arguments may be cut.
			name:   "length with a call",
			turn:   llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("list_dir", `{"path":"."}`)}, Finish: "length"},
			calls:  []ToolCall{{Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)}},
			finish: "length",
		},
	}
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			for _, tc := range cases {
				name := p.name + "/" + map[bool]string{false: "whole", true: "stream"}[stream] + "/" + tc.name
				t.Run(name, func(t *testing.T) {
					turn := tc.turn
					turn.InputTokens, turn.OutputTokens = 17, 9
					if p.name == "anthropic" && turn.Finish == "length" {
						turn.Finish = "max_tokens"
					}
					cl, srv, _ := p.start(t, turn)
					var deltas []string
					var onText func(string)
					if stream {
						onText = func(d string) { deltas = append(deltas, d) }
					}
					resp, err := cl.Complete(testCtx(t), userRequest("hi"), onText)
					if err != nil {
						t.Fatal(err)
					}
					if resp.Message.Role != "assistant" || resp.Message.Content != tc.text {
						t.Errorf("message = %q %q, want assistant %q", resp.Message.Role, resp.Message.Content, tc.text)
					}
					if resp.FinishReason != tc.finish {
						t.Errorf("finish = %q, want %q", resp.FinishReason, tc.finish)
					}
					if resp.Usage != (Usage{InputTokens: 17, OutputTokens: 9}) {
						t.Errorf("usage = %+v, want 17/9", resp.Usage)
					}
					if len(resp.Message.ToolCalls) != len(tc.calls) {
						t.Fatalf("tool calls = %+v, want %d", resp.Message.ToolCalls, len(tc.calls))
					}
					ids := map[string]bool{}
					for i, c := range resp.Message.ToolCalls {
						if c.Name != tc.calls[i].Name || !jsonEqual(c.Arguments, tc.calls[i].Arguments) {
							t.Errorf("call %d = %s %s, want %s %s", i, c.Name, c.Arguments, tc.calls[i].Name, tc.calls[i].Arguments)
						}
						if c.ID == "" || ids[c.ID] {
							t.Errorf("call %d id %q empty or repeated", i, c.ID)
						}
						ids[c.ID] = true
					}
					if stream {
						if strings.Join(deltas, "") != tc.text {
							t.Errorf("deltas %q do not add up to %q", deltas, tc.text)
						}
						if strings.Count(tc.text, " ") > 0 && len(deltas) < 2 {
							t.Errorf("text arrived in %d delta(s), want it streamed", len(deltas))
						}
					} else if len(deltas) != 0 {
						t.Errorf("onText called without streaming")
					}
					reqs := srv.Requests()
					if len(reqs) != 1 || reqs[0].Stream != stream || reqs[0].Model != "fake-model" {
						t.Fatalf("requests = %+v", reqs)
					}
				})
			}
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// conversation has every kind of message: system, user, assistant with
// text and two tool calls, two tool results (one an error), and a user
// follow-up.
func conversation() Request {
	return Request{
		Messages: []Message{
			{Role: "system", Content: "You are terse."},
			{Role: "user", Content: "What is in a.txt and b.txt?"},
			{Role: "assistant", Content: "Reading both.", ToolCalls: []ToolCall{
				{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
				{ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"path":"b.txt"}`)},
			}},
			{Role: "tool", ToolCallID: "c1", Name: "read_file", Content: "alpha"},
			{Role: "tool", ToolCallID: "c2", Name: "read_file", Content: "no such file", IsError: true},
			{Role: "user", Content: "And then?"},
		},
		Tools: []ToolSpec{
			{Name: "read_file", Description: "Read a file.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}},
			{Name: "now", Description: "The time."},
		},
		MaxTokens: 321,
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	for _, stream := range []bool{false, true} {
		cl, srv, _ := providers[0].start(t, llmtest.Say("ok"))
		var onText func(string)
		if stream {
			onText = func(string) {}
		}
		if _, err := cl.Complete(testCtx(t), conversation(), onText); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[0]
		if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("Authorization = %q", got)
		}
		var body struct {
			Model         string           `json:"model"`
			MaxTokens     int              `json:"max_tokens"`
			Stream        bool             `json:"stream"`
			StreamOptions *json.RawMessage `json:"stream_options"`
			Messages      []map[string]any `json:"messages"`
			Tools         []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.MaxTokens != 321 || body.Stream != stream {
			t.Errorf("max_tokens %d stream %v", body.MaxTokens, body.Stream)
		}
		if stream != (body.StreamOptions != nil && string(*body.StreamOptions) == `{"include_usage":true}`) {
			t.Errorf("stream_options = %v with stream %v", body.StreamOptions, stream)
		}
		roles := []string{}
		for _, m := range body.Messages {
			roles = append(roles, m["role"].(string))
		}
		if strings.Join(roles, ",") != "system,user,assistant,tool,tool,user" {
			t.Fatalf("roles = %v", roles)
		}
		asst := body.Messages[2]
		calls := asst["tool_calls"].([]any)
		c0 := calls[0].(map[string]any)
		fn := c0["function"].(map[string]any)
		if c0["id"] != "c1" || c0["type"] != "function" || fn["name"] != "read_file" || fn["arguments"] != `{"path":"a.txt"}` {
			t.Errorf("assistant tool call = %v", c0)
		}
		if body.Messages[3]["tool_call_id"] != "c1" || body.Messages[3]["content"] != "alpha" {
			t.Errorf("tool result = %v", body.Messages[3])
		}
		if c := body.Messages[4]["content"].(string); !strings.HasPrefix(c, "Error") || !strings.Contains(c, "no such file") {
			t.Errorf("error tool result content = %q, want it marked as an error", c)
		}
		if len(body.Tools) != 2 || body.Tools[0]["type"] != "function" {
			t.Fatalf("tools = %v", body.Tools)
		}
		f1 := body.Tools[1]["function"].(map[string]any)
		if f1["name"] != "now" || f1["parameters"].(map[string]any)["type"] != "object" {
			t.Errorf("a tool without parameters must be offered an empty object schema: %v", f1)
		}
	}
}

func BenchmarkComplete(b *testing.B) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			b.Run(p.name+map[bool]string{false: "/whole", true: "/stream"}[stream], func(b *testing.B) {
				srv := p.fake(b)
				srv.SetRule(func(llmtest.Request) llmtest.Turn {
					return llmtest.Turn{Text: "The answer is forty-two, as computed.", ToolCalls: []llmtest.ToolCall{{ID: "x", Name: "read_file", Arguments: `{"path":"a.txt"}`}}}
				})
				cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m"})
				req := conversation()
				var onText func(string)
				if stream {
					onText = func(string) {}
				}
				ctx := context.Background()
				b.ResetTimer()
				for b.Loop() {
					if _, err := cl.Complete(ctx, req, onText); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestToolArgumentsNormalized(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "{}"},
		{"  ", "{}"},
		{`{"a":1}`, `{"a":1}`},
		{` {"a": `, `{"a":`}, // not JSON: kept as sent, for the agent to report
	}
	for _, tc := range cases {
		if got := string(jsonArgs(tc.in)); got != tc.want {
			t.Errorf("jsonArgs(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	cl, _, _ := providers[0].start(t, llmtest.Calls(llmtest.Call("f", `{"broken":`)))
	resp, err := cl.Complete(testCtx(t), userRequest("hi"), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Message.ToolCalls[0].Arguments); got != `{"broken":` {
		t.Errorf("streamed broken arguments = %s", got)
	}
}

func TestNormalizeFinish(t *testing.T) {
	cases := []struct {
		in    string
		calls bool
		want  string
	}{
		{"stop", false, "stop"},
		{"", false, "stop"},
		{"end_turn", false, "stop"},
		{"stop_sequence", false, "stop"},
		{"stop", true, "tool_calls"}, // servers that say stop with tool calls
		{"tool_use", true, "tool_calls"},
		{"length", false, "length"},
		{"max_tokens", false, "length"},
		{"length", true, "length"},
		{"max_tokens", true, "length"},
		{"refusal", false, "refusal"},
		{"content_filter", false, "content_filter"},
		{"function_call", false, "tool_calls"},
		{"tool_calls", true, "tool_calls"},
		{"pause_turn", false, "pause"},
		{"pause_turn", true, "pause"},
		{"model_context_window_exceeded", false, "context_window"},
		{"model_context_window_exceeded", true, "context_window"},
		{"something_new", false, "something_new"},
	}
	for _, tc := range cases {
		if got := normalizeFinish(tc.in, tc.calls); got != tc.want {
			t.Errorf("normalizeFinish(%q, %v) = %q, want %q", tc.in, tc.calls, got, tc.want)
		}
	}
}

func TestOpenAIMaxTokensField(t *testing.T) {
	cases := []struct {
		name, base, model, field string
		want                     string
	}{
		{"api.openai.com", DefaultOpenAIBaseURL, "m", "", FieldMaxCompletionTokens},
		{"local server", "http://127.0.0.1:11434/v1", "llama3.2", "", FieldMaxTokens},
		// Azure OpenAI and proxies: the model decides, not the URL.
		{"o-series behind a proxy", "https://proxy.example/v1", "o3-mini", "", FieldMaxCompletionTokens},
		{"o1 on azure", "https://res.openai.azure.com/openai/v1", "o1", "", FieldMaxCompletionTokens},
		{"gpt-5 on openrouter", "https://openrouter.ai/api/v1", "openai/gpt-5-mini", "", FieldMaxCompletionTokens},
		{"gpt-4.1", "https://proxy.example/v1", "gpt-4.1-mini", "", FieldMaxCompletionTokens},
		{"ollama model named like o", "http://127.0.0.1:11434/v1", "olmo2", "", FieldMaxTokens},
		{"override to the old field", DefaultOpenAIBaseURL, "gpt-5", FieldMaxTokens, FieldMaxTokens},
		{"override for a deployment name", "https://res.openai.azure.com/openai/v1", "my-deployment", FieldMaxCompletionTokens, FieldMaxCompletionTokens},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := userRequest("hi")
			req.MaxTokens = 50
			got := openAIRequest(ProviderConfig{BaseURL: tc.base, Model: tc.model, TokenField: tc.field}, req, false)
			completion, plain := got.MaxCompletion == 50 && got.MaxTokens == 0, got.MaxTokens == 50 && got.MaxCompletion == 0
			if (tc.want == FieldMaxCompletionTokens && !completion) || (tc.want == FieldMaxTokens && !plain) {
				t.Errorf("max_tokens %d, max_completion_tokens %d; want the cap in %s", got.MaxTokens, got.MaxCompletion, tc.want)
			}
		})
	}
	if got := openAIRequest(ProviderConfig{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", MaxTokens: 70}, userRequest("hi"), false); got.MaxTokens != 70 || got.MaxCompletion != 0 {
		t.Errorf("compatible server: %+v, want max_tokens from the profile", got)
	}
	if got := openAIRequest(ProviderConfig{BaseURL: "http://127.0.0.1:11434/v1", Model: "m"}, userRequest("hi"), false); got.MaxTokens != 0 || got.MaxCompletion != 0 {
		t.Errorf("no cap: %+v", got)
	}
}
