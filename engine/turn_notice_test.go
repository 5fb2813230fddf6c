package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
)

// TestAgentRetryNoticeEvent checks Events.OnRetry reaches the client of an
// engine's turn through a real provider.
func TestAgentRetryNoticeEvent(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.RateLimited("2"), llmtest.Say("done"))
	noWait := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	e := fakeProfileEngine(t, llm.ProviderOpenAI, srv.BaseURL, &Options{Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Sleep: noWait}}})
	var mu sync.Mutex
	var notes []llm.RetryNotice
	ev := Events{OnRetry: func(n llm.RetryNotice) { mu.Lock(); notes = append(notes, n); mu.Unlock() }}
	ag := newSession(t, e).NewAgent(nil)
	turn, err := ag.RunTurn(turnCtx(t), "hi", &TurnOptions{Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "done" {
		t.Errorf("text = %q", turn.Text)
	}
	mu.Lock()
	got := notes
	mu.Unlock()
	if len(got) != 1 || got[0].Wait != 2*time.Second || got[0].Status != 429 {
		t.Errorf("notices = %+v", got)
	}
}

func TestTurnFinishReason(t *testing.T) {
	finish := func(text, reason string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
		return func(context.Context, llm.Request, func(string)) (llm.Response, error) {
			return llm.Response{Message: llm.Message{Role: "assistant", Content: text}, FinishReason: reason}, nil
		}
	}
	cases := []struct {
		name                                string
		step                                func(context.Context, llm.Request, func(string)) (llm.Response, error)
		reason                              string
		filtered, truncated, empty, exhaust bool
	}{
		{name: "stop", step: say("fine"), reason: "stop"},
		{name: "filtered", step: finish("partial", "content_filter"), reason: "content_filter", filtered: true},
		{name: "filtered empty", step: finish("", "content_filter"), reason: "content_filter", filtered: true},
		{name: "length", step: finish("cut", "length"), reason: "length", truncated: true},
		{name: "empty", step: finish("", "stop"), reason: "stop", empty: true},
		{name: "blank", step: finish(" \n", "stop"), reason: "stop", empty: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){tc.step}}, nil)
			turn, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "hi", nil)
			if err != nil {
				t.Fatal(err)
			}
			if turn.FinishReason != tc.reason || turn.Filtered != tc.filtered || turn.Truncated != tc.truncated || turn.Empty != tc.empty {
				t.Errorf("turn = %+v", turn)
			}
		})
	}
}

// TestTurnFinishReasonFromProviders checks that both providers' refusal and
// filter reasons reach Turn.Filtered.
func TestTurnFinishReasonFromProviders(t *testing.T) {
	cases := []struct{ provider, wire, want string }{
		{llm.ProviderOpenAI, "content_filter", llm.FinishFiltered},
		{llm.ProviderAnthropic, "refusal", llm.FinishRefusal},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			fake := llmtest.NewOpenAI
			if tc.provider == llm.ProviderAnthropic {
				fake = llmtest.NewAnthropic
			}
			srv := fake(t, llmtest.Turn{Text: "I can't", Finish: tc.wire}, llmtest.Turn{Finish: tc.wire})
			e := fakeProfileEngine(t, tc.provider, srv.BaseURL, nil)
			ag := newSession(t, e).NewAgent(nil)
			for i, stream := range []bool{true, false} {
				var ev Events
				if stream {
					ev.OnText = func(string) {}
				}
				turn, err := ag.RunTurn(turnCtx(t), "hi", &TurnOptions{Events: ev})
				if err != nil {
					t.Fatal(err)
				}
				if !turn.Filtered || turn.FinishReason != tc.want || turn.Empty {
					t.Errorf("turn %d = %+v, want Filtered", i, turn)
				}
			}
		})
	}
}
