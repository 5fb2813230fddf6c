package lua

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

func TestChatDetailsSayHowTheAnswerEnded(t *testing.T) {
	tests := []struct {
		name string
		turn llmtest.Turn
		want []any // text, finish_reason, truncated, filtered, empty
	}{
		{"complete", llmtest.Say("all of it"), []any{"all of it", "stop", false, false, false}},
		{"cut off", llmtest.Turn{Text: "half", Finish: "length"}, []any{"half", "length", true, false, false}},
		{"filtered", llmtest.Turn{Text: "Here is", Finish: "content_filter"}, []any{"Here is", "content_filter", false, true, false}},
		{"empty", llmtest.Say(""), []any{"", "stop", false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, _ := modelHost(t, tool.Interactive, tt.turn)
			got := mustRun(t, h, `local text, d = tai.chat("go") return text, d.finish_reason, d.truncated, d.filtered, d.empty`)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChatReportsRetriesToOnRetry(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.RateLimited("7"), llmtest.Fail(503, "overloaded"), llmtest.Say("at last"))
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
	var waits []time.Duration
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Engine: &engine.Options{
			Dir:    t.TempDir(),
			Getenv: func(k string) string { return env[k] },
			Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 3, Base: 2 * time.Second,
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}},
		},
	}, nil)
	got := mustRun(t, h, `
		local seen = {}
		local text = tai.chat("hi", {on_retry = function(n)
			seen[#seen + 1] = string.format("%s|%s|%d|%g|%d/%d|%s", n.text, n.reason, n.status, n.wait, n.attempt, n.attempts, n.model)
		end})
		return text, seen[1], seen[2], #seen`)
	want := []any{"at last",
		"rate limited (429); retrying in 7s, attempt 2/3|rate limited (429)|429|7|2/3|fake-model",
		"server error (503); retrying in 4s, attempt 3/3|server error (503)|503|4|3/3|fake-model",
		int64(2)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(waits, []time.Duration{7 * time.Second, 4 * time.Second}) {
		t.Fatalf("waits %v", waits)
	}

	// tai.complete takes the same callback.
	srv.Push(llmtest.RateLimited("1"), llmtest.Say("done"))
	got = mustRun(t, h, `
		local seen = {}
		local text = tai.complete({{role = "user", content = "hi"}}, {on_retry = function(n) seen[#seen + 1] = n.text end})
		return text, table.concat(seen, ";")`)
	if want := []any{"done", "rate limited (429); retrying in 1s, attempt 2/3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tai.complete: got %q, want %q", got, want)
	}
	if _, err := h.DoString(ctxT(t), `tai.complete({{role = "user", content = "x"}}, {on_retry = 1})`, "bad"); err == nil || !strings.Contains(err.Error(), "on_retry must be a function") {
		t.Fatalf("a bad on_retry gives %v", err)
	}
	if h.errOut.Len() != 0 {
		t.Fatalf("retries with on_retry also went to stderr: %q", h.errOut)
	}

	// Without on_retry, retries are reported on stderr rather than waited
	// out in silence.
	srv.Push(llmtest.RateLimited("2"), llmtest.Say("ok"))
	got = mustRun(t, h, `return (tai.chat("again"))`)
	if got[0] != "ok" || h.errOut.String() != "tai: rate limited (429); retrying in 2s, attempt 2/3\n" {
		t.Fatalf("got %v, stderr %q", got, h.errOut)
	}
}
