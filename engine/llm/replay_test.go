package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay serves testdata/replay/name to one request, as the API would: a
// stream (.sse) to a streamed request, a whole answer (.json) to one that
// is not. It returns what the client made of it and the text it streamed.
func replay(t *testing.T, name string) (Response, string, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "replay", name))
	if err != nil {
		t.Fatal(err)
	}
	whole := strings.HasSuffix(name, ".json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if whole {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	cfg := ProviderConfig{BaseURL: srv.URL, Model: "m", APIKey: testKey, Retry: RetryPolicy{Attempts: 1}}
	var cl ChatClient = NewAnthropic(cfg)
	if strings.HasPrefix(name, "openai-") {
		cfg.BaseURL += "/v1"
		cl = NewOpenAI(cfg)
	}
	var streamed strings.Builder
	onText := func(d string) { streamed.WriteString(d) }
	if whole {
		onText = nil
	}
	resp, err := cl.Complete(testCtx(t), userRequest("hi"), onText)
	if whole {
		return resp, resp.Message.Content, err
	}
	return resp, streamed.String(), err
}

// TestReplayDocumentedStreams feeds the clients streams written from the
// providers' documented event sequences, one for every stop reason and
// event type (ping, thinking, signature and citations deltas, an error
// event), and whole answers for the stop reasons and fields a stream does
// not show (a refusal, the deprecated function_call), and checks what each
// becomes.
func TestReplayDocumentedStreams(t *testing.T) {
	cases := []struct {
		file   string
		text   string
		calls  []string // name and arguments of each call
		finish string
		usage  Usage
	}{
		{file: "anthropic-end_turn.sse", text: "Hello, world.", finish: FinishStop, usage: Usage{25, 40}},
		{file: "anthropic-stop_sequence.sse", text: "one two", finish: FinishStop},
		{file: "anthropic-tool_use.sse", text: "Reading it.", calls: []string{`read_file {"path": "a.txt"}`, `list_dir {}`}, finish: FinishToolCalls},
		{file: "anthropic-max_tokens.sse", text: "Writing it.", calls: []string{`write_file {"path":"a.txt","content":"hal`}, finish: FinishLength},
		{file: "anthropic-pause_turn.sse", text: "Searching", finish: FinishPaused},
		{file: "anthropic-refusal.sse", text: "I can", finish: FinishRefusal},
		{file: "anthropic-model_context_window_exceeded.sse", text: "The summary so", finish: FinishContextWindow, usage: Usage{199000, 40}},
		{file: "anthropic-thinking-citations.sse", text: "The sky is blue.", finish: FinishStop},
		{file: "openai-stop.sse", text: "Hello, world.", finish: FinishStop, usage: Usage{30, 12}},
		{file: "openai-length.sse", text: "The list: one, two,", finish: FinishLength},
		{file: "openai-tool_calls.sse", calls: []string{`read_file {"path":"a.txt"}`, `list_dir {}`}, finish: FinishToolCalls},
		{file: "openai-length-in-call.sse", calls: []string{`list_dir {"path":"."}`, `write_file {"path":"a.txt","content":"half`}, finish: FinishLength},
		{file: "openai-content_filter.sse", text: "Here is how", finish: FinishFiltered},
		{file: "openai-function_call.sse", calls: []string{`read_file {"path":"a.txt"}`}, finish: FinishToolCalls},
		{file: "openai-refusal.sse", text: "I'm sorry, I can't help with that.", finish: FinishRefusal},
		// Whole answers, for the stop reasons and blocks streams do not
		// already show whole in the fakes' own tests.
		{file: "anthropic-whole-tool_use.json", text: "Reading it.", calls: []string{`read_file {"path":"a.txt"}`}, finish: FinishToolCalls},
		{file: "anthropic-whole-pause_turn.json", text: "Searching", finish: FinishPaused},
		{file: "anthropic-whole-refusal.json", text: "I can", finish: FinishRefusal},
		{file: "anthropic-whole-model_context_window_exceeded.json", text: "The summary so", finish: FinishContextWindow, usage: Usage{199000, 40}},
		{file: "anthropic-whole-stop_sequence.json", text: "one two", finish: FinishStop},
		{file: "openai-whole-refusal.json", text: "I'm sorry, I can't help with that.", finish: FinishRefusal},
		{file: "openai-whole-function_call.json", calls: []string{`read_file {"path":"a.txt"}`}, finish: FinishToolCalls},
		{file: "openai-whole-content_filter.json", text: "Here is how", finish: FinishFiltered},
		{file: "openai-whole-length.json", calls: []string{`list_dir {"path":"."}`, `write_file {"path":"a.txt","content":"half`}, finish: FinishLength, usage: Usage{30, 12}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			resp, streamed, err := replay(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != tc.text || streamed != tc.text {
				t.Errorf("text %q, streamed %q; want %q", resp.Message.Content, streamed, tc.text)
			}
			if resp.FinishReason != tc.finish {
				t.Errorf("finish %q, want %q", resp.FinishReason, tc.finish)
			}
			var calls []string
			ids := map[string]bool{}
			for _, c := range resp.Message.ToolCalls {
				calls = append(calls, c.Name+" "+string(c.Arguments))
				if c.ID == "" || ids[c.ID] {
					t.Errorf("call id %q is empty or repeated", c.ID)
				}
				ids[c.ID] = true
			}
			if strings.Join(calls, "\n") != strings.Join(tc.calls, "\n") {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
			if tc.usage != (Usage{}) && resp.Usage != tc.usage {
				t.Errorf("usage %+v, want %+v", resp.Usage, tc.usage)
			}
			if CutOff(tc.finish) && len(tc.calls) > 0 {
				last := resp.Message.ToolCalls[len(resp.Message.ToolCalls)-1]
				if json.Valid(last.Arguments) {
					t.Errorf("the call cut off reads as whole: %s", last.Arguments)
				}
			}
		})
	}
	for _, file := range []string{"anthropic-error.sse", "openai-error.sse"} {
		t.Run(file, func(t *testing.T) {
			_, _, err := replay(t, file)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || !apiErr.Retryable() {
				t.Fatalf("err = %v, want a retryable API error", err)
			}
		})
	}
}
