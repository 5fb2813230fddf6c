package engine

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/fakemodel"
)

// noticeRecorder collects retry notices.
type noticeRecorder struct {
	mu sync.Mutex
	ns []RetryNotice
}

func (r *noticeRecorder) add(n RetryNotice) {
	r.mu.Lock()
	r.ns = append(r.ns, n)
	r.mu.Unlock()
}

func (r *noticeRecorder) got() []RetryNotice {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RetryNotice(nil), r.ns...)
}

func TestRetryAfterBeyondCapFailsAtOnce(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.fake(t, fakemodel.RateLimited("3600"), fakemodel.Say("never"))
			rec, notes := &sleepRecorder{}, &noticeRecorder{}
			cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", OnRetry: notes.add,
				Retry: RetryPolicy{Max: 60 * time.Second, Sleep: rec.sleep}})
			_, err := cl.Complete(testCtx(t), userRequest("hi"), func(string) {})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range []string{"rate limited", "the API asks to wait 1h0m0s", "1m0s", "try again later"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != 429 {
				t.Errorf("error %v does not wrap the 429 APIError", err)
			}
			if len(rec.got()) != 0 || len(notes.got()) != 0 || len(srv.Requests()) != 1 {
				t.Errorf("waited anyway: waits %v, notices %v, %d requests", rec.got(), notes.got(), len(srv.Requests()))
			}
		})
	}
}

func TestRetryNotices(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.fake(t, fakemodel.RateLimited("30"), fakemodel.Fail(503, "busy"), fakemodel.Say("finally"))
			rec, fallback, notes := &sleepRecorder{}, &noticeRecorder{}, &noticeRecorder{}
			cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", OnRetry: fallback.add,
				Retry: RetryPolicy{Base: time.Second, Max: 60 * time.Second, Sleep: rec.sleep}})
			ctx := WithRetryNotice(testCtx(t), notes.add)
			if _, err := cl.Complete(ctx, userRequest("hi"), func(string) {}); err != nil {
				t.Fatal(err)
			}
			got := notes.got()
			want := []RetryNotice{
				{Provider: p.name, Model: "m", Status: 429, Reason: "rate limited (429)", Wait: 30 * time.Second, Attempt: 2, Attempts: 4},
				{Provider: p.name, Model: "m", Status: 503, Reason: "server error (503)", Wait: 2 * time.Second, Attempt: 3, Attempts: 4},
			}
			if len(got) != len(want) {
				t.Fatalf("notices = %+v, want %+v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("notice %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			if s := got[0].String(); s != "rate limited (429); retrying in 30s, attempt 2/4" {
				t.Errorf("String() = %q", s)
			}
			if len(fallback.got()) != 0 {
				t.Errorf("the client's own OnRetry was called although the context carried one: %v", fallback.got())
			}
		})
	}
}

func TestRetryNoticeConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	rec, notes := &sleepRecorder{}, &noticeRecorder{}
	cl := NewOpenAI(ProviderConfig{BaseURL: base, Model: "m", OnRetry: notes.add, Retry: RetryPolicy{Attempts: 2, Sleep: rec.sleep}})
	if _, err := cl.Complete(testCtx(t), userRequest("hi"), nil); err == nil {
		t.Fatal("no error from a closed server")
	}
	got := notes.got()
	if len(got) != 1 || got[0].Status != 0 || !strings.Contains(got[0].Reason, "connection refused") || strings.Contains(got[0].Reason, `model "m"`) {
		t.Errorf("notices = %+v, want one naming the refused connection", got)
	}
}

// TestAgentRetryNoticeEvent checks Events.OnRetry reaches the client of an
// engine's turn through a real provider.
func TestAgentRetryNoticeEvent(t *testing.T) {
	srv := fakemodel.NewOpenAI(t, fakemodel.RateLimited("2"), fakemodel.Say("done"))
	rec := &sleepRecorder{}
	e := fakeProfileEngine(t, ProviderOpenAI, srv.BaseURL, &Options{Client: &ClientOptions{Retry: RetryPolicy{Sleep: rec.sleep}}})
	notes := &noticeRecorder{}
	ev := Events{OnRetry: notes.add}
	ag := newSession(t, e).NewAgent(nil)
	turn, err := ag.RunTurn(turnCtx(t), "hi", &TurnOptions{Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "done" {
		t.Errorf("text = %q", turn.Text)
	}
	if got := notes.got(); len(got) != 1 || got[0].Wait != 2*time.Second || got[0].Status != 429 {
		t.Errorf("notices = %+v", got)
	}
}

func TestTurnFinishReason(t *testing.T) {
	finish := func(text, reason string) func(context.Context, Request, func(string)) (Response, error) {
		return func(context.Context, Request, func(string)) (Response, error) {
			return Response{Message: Message{Role: "assistant", Content: text}, FinishReason: reason}, nil
		}
	}
	cases := []struct {
		name                                string
		step                                func(context.Context, Request, func(string)) (Response, error)
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
			e := newEngine(t, &scripted{steps: []func(context.Context, Request, func(string)) (Response, error){tc.step}}, nil)
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
	cases := []struct{ provider, wire string }{
		{ProviderOpenAI, "content_filter"},
		{ProviderAnthropic, "refusal"},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			fake := fakemodel.NewOpenAI
			if tc.provider == ProviderAnthropic {
				fake = fakemodel.NewAnthropic
			}
			srv := fake(t, fakemodel.Turn{Text: "I can't", Finish: tc.wire}, fakemodel.Turn{Finish: tc.wire})
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
				if !turn.Filtered || turn.FinishReason != "content_filter" || turn.Empty {
					t.Errorf("turn %d = %+v, want Filtered", i, turn)
				}
			}
		})
	}
}
