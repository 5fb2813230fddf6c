package engine

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
