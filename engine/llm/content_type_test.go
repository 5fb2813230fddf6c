package llm

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStreamAnsweredWithJSON checks that a server ignoring "stream" and
// answering whole JSON is read as such, and that any other type is named.
func TestStreamAnsweredWithJSON(t *testing.T) {
	cases := []struct {
		name, provider, ctype, body string
		text, err                   string
	}{
		{name: "openai json", provider: ProviderOpenAI, ctype: "application/json; charset=utf-8",
			body: `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"whole answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			text: "whole answer"},
		{name: "anthropic json", provider: ProviderAnthropic, ctype: "application/json",
			body: `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"whole answer"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}`,
			text: "whole answer"},
		{name: "html", provider: ProviderOpenAI, ctype: "text/html", body: "<html>login</html>",
			err: "the server answered with Content-Type text/html, expected text/event-stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			cfg := ProviderConfig{BaseURL: srv.URL, Model: "m", APIKey: testKey, Retry: RetryPolicy{Attempts: 1}}
			var cl ChatClient = NewOpenAI(cfg)
			if tc.provider == ProviderAnthropic {
				cl = NewAnthropic(cfg)
			}
			var streamed strings.Builder
			resp, err := cl.Complete(testCtx(t), userRequest("hi"), func(d string) { streamed.WriteString(d) })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != tc.text || streamed.String() != tc.text || resp.FinishReason != "stop" {
				t.Errorf("response %+v, streamed %q", resp, streamed.String())
			}
		})
	}
}

// TestNotFoundHints checks that a 404 suggests the base URL only when the
// answer is not an API's error object, and the model name when it is.
func TestNotFoundHints(t *testing.T) {
	cases := []struct {
		name, provider, ctype, body string
		want, not                   string
	}{
		{name: "openai model missing", provider: ProviderOpenAI, ctype: "application/json",
			body: `{"error":{"message":"The model 'nope' does not exist","type":"invalid_request_error","code":"model_not_found"}}`,
			want: `check the model name "nope": set TAI_MODEL or the profile's model`, not: "base URL"},
		{name: "vllm model missing", provider: ProviderOpenAI, ctype: "application/json",
			body: `{"object":"error","message":"The model nope does not exist.","type":"NotFoundError","code":404}`,
			want: "check the model name", not: "base URL"},
		{name: "anthropic model missing", provider: ProviderAnthropic, ctype: "application/json",
			body: `{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}`,
			want: "check the model name", not: "base URL"},
		{name: "openai invalid url", provider: ProviderOpenAI, ctype: "application/json",
			body: `{"error":{"message":"Invalid URL (POST /chat/completions)","type":"invalid_request_error","code":null}}`,
			want: "check the base URL", not: "model name"},
		{name: "plain 404", provider: ProviderOpenAI, ctype: "text/plain", body: "404 page not found",
			want: "check the base URL; OpenAI-compatible servers usually end in /v1", not: "model name"},
		{name: "html 404", provider: ProviderAnthropic, ctype: "text/html", body: "<html>Not Found</html>",
			want: "it is the API root, without /v1", not: "model name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			cfg := ProviderConfig{BaseURL: srv.URL, Model: "nope", Retry: RetryPolicy{Attempts: 1}}
			var cl ChatClient = NewOpenAI(cfg)
			if tc.provider == ProviderAnthropic {
				cl = NewAnthropic(cfg)
			}
			_, err := cl.Complete(testCtx(t), userRequest("hi"), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
				t.Errorf("error %v, want one saying %q and not %q", err, tc.want, tc.not)
			}
		})
	}
}
