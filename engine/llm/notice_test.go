package llm

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
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
			srv := p.fake(t, llmtest.RateLimited("3600"), llmtest.Say("never"))
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
			srv := p.fake(t, llmtest.RateLimited("30"), llmtest.Fail(503, "busy"), llmtest.Say("finally"))
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
