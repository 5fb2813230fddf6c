package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/fakemodel"
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
	fake func(testing.TB, ...fakemodel.Turn) *fakemodel.Server
	new  func(ProviderConfig) ChatClient
}

var providers = []provider{
	{"openai", fakemodel.NewOpenAI, func(c ProviderConfig) ChatClient { return NewOpenAI(c) }},
	{"anthropic", fakemodel.NewAnthropic, func(c ProviderConfig) ChatClient { return NewAnthropic(c) }},
}

func (p provider) start(t testing.TB, turns ...fakemodel.Turn) (ChatClient, *fakemodel.Server, *sleepRecorder) {
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
		turn   fakemodel.Turn
		text   string
		calls  []ToolCall
		finish string
	}{
		{name: "text", turn: fakemodel.Say("Hello there, how are you?"), text: "Hello there, how are you?", finish: "stop"},
		{
			name: "one tool call",
			turn: fakemodel.Calls(fakemodel.Call("read_file", `{"path":"a.txt","lines":[1,20]}`)),
			calls: []ToolCall{
				{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt","lines":[1,20]}`)},
			},
			finish: "tool_calls",
		},
		{
			name: "text and several tool calls",
			turn: fakemodel.Turn{Text: "Let me look.", ToolCalls: []fakemodel.ToolCall{
				fakemodel.Call("list_dir", `{"path":"."}`),
				fakemodel.Call("grep", `{"pattern":"caf\u00e9 \\d+","path":"src"}`),
				fakemodel.Call("shell", ``),
			}},
			text: "Let me look.",
			calls: []ToolCall{
				{Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)},
				{Name: "grep", Arguments: json.RawMessage(`{"pattern":"caf\u00e9 \\d+","path":"src"}`)},
				{Name: "shell", Arguments: json.RawMessage(`{}`)},
			},
			finish: "tool_calls",
		},
		{name: "length", turn: fakemodel.Turn{Text: "cut", Finish: "length"}, text: "cut", finish: "length"},
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
		cl, srv, _ := providers[0].start(t, fakemodel.Say("ok"))
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

func TestAnthropicRequestShape(t *testing.T) {
	cl, srv, _ := providers[1].start(t, fakemodel.Say("ok"))
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
	cl, srv, _ := providers[1].start(t, fakemodel.Say("ok"))
	if _, err := cl.Complete(testCtx(t), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].MaxTokens; got != defaultAnthropicMaxTokens {
		t.Errorf("max_tokens = %d, want %d", got, defaultAnthropicMaxTokens)
	}
}

func TestRetry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name  string
		fails []fakemodel.Turn
		waits []time.Duration
	}{
		{name: "429 retry-after seconds", fails: []fakemodel.Turn{fakemodel.RateLimited("3")}, waits: []time.Duration{3 * time.Second}},
		{name: "429 retry-after date", fails: []fakemodel.Turn{fakemodel.RateLimited(now.Add(2 * time.Second).Format(http.TimeFormat))}, waits: []time.Duration{2 * time.Second}},
		{name: "429 retry-after capped", fails: []fakemodel.Turn{fakemodel.RateLimited("3600")}, waits: []time.Duration{5 * time.Second}},
		{name: "500 then 503 backoff", fails: []fakemodel.Turn{fakemodel.Fail(500, "boom"), fakemodel.Fail(503, "busy")}, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{name: "529 overloaded", fails: []fakemodel.Turn{{Status: 529, ErrorType: "overloaded_error", Error: "Overloaded"}}, waits: []time.Duration{100 * time.Millisecond}},
		{name: "stream cut before any text", fails: []fakemodel.Turn{{Text: "lost", CutAfter: 1}}, waits: []time.Duration{100 * time.Millisecond}},
		{name: "overload event in stream", fails: []fakemodel.Turn{{StreamError: "Overloaded"}}, waits: []time.Duration{100 * time.Millisecond}},
	}
	for _, p := range providers {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				turns := append(append([]fakemodel.Turn{}, tc.fails...), fakemodel.Say("finally"))
				srv := p.fake(t, turns...)
				rec := &sleepRecorder{}
				cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", Retry: RetryPolicy{
					Base: 100 * time.Millisecond, Max: 5 * time.Second, Sleep: rec.sleep, Now: func() time.Time { return now },
				}})
				resp, err := cl.Complete(testCtx(t), userRequest("hi"), func(string) {})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Message.Content != "finally" {
					t.Errorf("content = %q", resp.Message.Content)
				}
				if got := rec.got(); !equalDurations(got, tc.waits) {
					t.Errorf("waits = %v, want %v", got, tc.waits)
				}
				if n := len(srv.Requests()); n != len(turns) {
					t.Errorf("%d requests, want %d", n, len(turns))
				}
			})
		}
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNoRetry(t *testing.T) {
	cases := []struct {
		name string
		turn fakemodel.Turn
		want []string
	}{
		{name: "400", turn: fakemodel.Turn{Status: 400, ErrorType: "invalid_request_error", Error: "messages: bad"}, want: []string{"HTTP 400", "invalid_request_error", "messages: bad"}},
		{name: "stream cut after text", turn: fakemodel.Turn{Text: "one two three four", CutAfter: 4}, want: []string{"stream ended"}},
		{name: "stream error after text", turn: fakemodel.Turn{Text: "one two", StreamError: "Overloaded"}, want: []string{"error in stream", "Overloaded"}},
	}
	for _, p := range providers {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				cl, srv, rec := p.start(t, tc.turn, fakemodel.Say("never"))
				_, err := cl.Complete(testCtx(t), userRequest("hi"), func(string) {})
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range append(tc.want, p.name, `"fake-model"`) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if len(rec.got()) != 0 || len(srv.Requests()) != 1 {
					t.Errorf("retried: waits %v, %d requests", rec.got(), len(srv.Requests()))
				}
			})
		}
	}
}

func TestRetriesExhausted(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			turns := []fakemodel.Turn{}
			for range DefaultRetryAttempts {
				turns = append(turns, fakemodel.Turn{Status: 503, ErrorType: "server_error", Error: "upstream for key " + testKey + " is down"})
			}
			cl, srv, rec := p.start(t, turns...)
			_, err := cl.Complete(testCtx(t), userRequest("hi"), nil)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not an *APIError", err)
			}
			if apiErr.Status != 503 || apiErr.Attempts != DefaultRetryAttempts || apiErr.Provider != p.name || apiErr.Model != "fake-model" {
				t.Errorf("APIError = %+v", apiErr)
			}
			msg := err.Error()
			for _, w := range []string{p.name, "fake-model", "503", "is down", "gave up after 4 attempts", "[REDACTED]"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, testKey) {
				t.Errorf("error reveals the key: %q", msg)
			}
			if len(rec.got()) != DefaultRetryAttempts-1 || len(srv.Requests()) != DefaultRetryAttempts {
				t.Errorf("waits %v, requests %d", rec.got(), len(srv.Requests()))
			}
		})
	}
}

func TestWrongKeyIsRedacted(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.fake(t, fakemodel.Say("never"))
			srv.RequireKey("sk-the-right-one")
			cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", APIKey: testKey})
			_, err := cl.Complete(testCtx(t), userRequest("hi"), nil)
			if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "[REDACTED]") {
				t.Fatalf("err = %v, want a 401 with the echoed key redacted", err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error reveals the key: %v", err)
			}
		})
	}
}

func TestCancelMidStream(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			cl, _, rec := p.start(t, fakemodel.Turn{Text: "first words then nothing", Hang: true})
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			var got []string
			_, err := cl.Complete(ctx, userRequest("hi"), func(d string) {
				got = append(got, d)
				cancel()
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if !strings.Contains(err.Error(), p.name) {
				t.Errorf("error %q does not name the provider", err)
			}
			if len(got) != 1 || got[0] != "first" || len(rec.got()) != 0 {
				t.Errorf("deltas %q, waits %v", got, rec.got())
			}
		})
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := fakemodel.NewOpenAI(t, fakemodel.RateLimited("1"), fakemodel.Say("never"))
	ctx, cancel := context.WithCancel(testCtx(t))
	cl := NewOpenAI(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", Retry: RetryPolicy{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}})
	_, err := cl.Complete(ctx, userRequest("hi"), nil)
	if !errors.Is(err, context.Canceled) || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests, want context.Canceled after 1", err, len(srv.Requests()))
	}
}

func TestIdleStreamTimesOut(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.fake(t, fakemodel.Turn{Text: "first then silence", Hang: true})
			cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", IdleTimeout: 50 * time.Millisecond, Retry: RetryPolicy{Attempts: 1}})
			_, err := cl.Complete(testCtx(t), userRequest("hi"), func(string) {})
			if err == nil || !strings.Contains(err.Error(), "stalled") {
				t.Fatalf("err = %v, want a stalled-stream error", err)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	rec := &sleepRecorder{}
	cl := NewOpenAI(ProviderConfig{BaseURL: "http://" + addr + "/v1", Model: "m", Retry: RetryPolicy{Attempts: 2, Sleep: rec.sleep}})
	_, err = cl.Complete(testCtx(t), userRequest("hi"), nil)
	if err == nil || !strings.Contains(err.Error(), `openai model "m"`) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want a refused connection naming provider and model", err)
	}
	if len(rec.got()) != 1 {
		t.Errorf("waits %v, want one retry", rec.got())
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"7", 7 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tc := range cases {
		got, ok := ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDelayBackoff(t *testing.T) {
	p := RetryPolicy{Base: time.Second, Max: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := p.Delay(i+1, ""); got != w {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := (RetryPolicy{}).Delay(1, ""); got != DefaultRetryBase {
		t.Errorf("zero policy first delay = %v", got)
	}
}

func BenchmarkComplete(b *testing.B) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			b.Run(p.name+map[bool]string{false: "/whole", true: "/stream"}[stream], func(b *testing.B) {
				srv := p.fake(b)
				srv.SetRule(func(fakemodel.Request) fakemodel.Turn {
					return fakemodel.Turn{Text: "The answer is forty-two, as computed.", ToolCalls: []fakemodel.ToolCall{{ID: "x", Name: "read_file", Arguments: `{"path":"a.txt"}`}}}
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
