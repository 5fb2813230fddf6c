package llm

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
	"tai/mcp/sse"
)

func TestRetry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name  string
		fails []llmtest.Turn
		waits []time.Duration
	}{
		{name: "429 retry-after seconds", fails: []llmtest.Turn{llmtest.RateLimited("3")}, waits: []time.Duration{3 * time.Second}},
		{name: "429 retry-after date", fails: []llmtest.Turn{llmtest.RateLimited(now.Add(2 * time.Second).Format(http.TimeFormat))}, waits: []time.Duration{2 * time.Second}},
		{name: "429 retry-after at the cap", fails: []llmtest.Turn{llmtest.RateLimited("5")}, waits: []time.Duration{5 * time.Second}},
		{name: "500 then 503 backoff", fails: []llmtest.Turn{llmtest.Fail(500, "boom"), llmtest.Fail(503, "busy")}, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{name: "529 overloaded", fails: []llmtest.Turn{{Status: 529, ErrorType: "overloaded_error", Error: "Overloaded"}}, waits: []time.Duration{100 * time.Millisecond}},
		{name: "stream cut before any text", fails: []llmtest.Turn{{Text: "lost", CutAfter: 1}}, waits: []time.Duration{100 * time.Millisecond}},
		{name: "overload event in stream", fails: []llmtest.Turn{{StreamError: "Overloaded"}}, waits: []time.Duration{100 * time.Millisecond}},
	}
	for _, p := range providers {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				turns := append(append([]llmtest.Turn{}, tc.fails...), llmtest.Say("finally"))
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
		turn llmtest.Turn
		want []string
	}{
		{name: "400", turn: llmtest.Turn{Status: 400, ErrorType: "invalid_request_error", Error: "messages: bad"}, want: []string{"HTTP 400", "invalid_request_error", "messages: bad"}},
		{name: "stream cut after text", turn: llmtest.Turn{Text: "one two three four", CutAfter: 4}, want: []string{"stream ended"}},
		{name: "stream error after text", turn: llmtest.Turn{Text: "one two", StreamError: "Overloaded"}, want: []string{"error in stream", "Overloaded"}},
	}
	for _, p := range providers {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				cl, srv, rec := p.start(t, tc.turn, llmtest.Say("never"))
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
			turns := []llmtest.Turn{}
			for range DefaultRetryAttempts {
				turns = append(turns, llmtest.Turn{Status: 503, ErrorType: "server_error", Error: "upstream for key " + testKey + " is down"})
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
			srv := p.fake(t, llmtest.Say("never"))
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
			cl, _, rec := p.start(t, llmtest.Turn{Text: "first words then nothing", Hang: true})
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
	srv := llmtest.NewOpenAI(t, llmtest.RateLimited("1"), llmtest.Say("never"))
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
			srv := p.fake(t, llmtest.Turn{Text: "first then silence", Hang: true})
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

func TestRetryAfterHeaders(t *testing.T) {
	cases := []struct {
		h    http.Header
		want string
	}{
		{http.Header{}, ""},
		{http.Header{"Retry-After": {"4"}}, "4"},
		{http.Header{"Retry-After-Ms": {"1500"}}, "1.500"},
		{http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"1500"}}, "2"},
		{http.Header{"Retry-After-Ms": {"soon"}}, ""},
	}
	for _, tc := range cases {
		if got := retryAfter(tc.h); got != tc.want {
			t.Errorf("retryAfter(%v) = %q, want %q", tc.h, got, tc.want)
		}
	}
}

func TestAttemptTimeout(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.fake(t, llmtest.Turn{Text: "slow answer", Hang: true})
			cl := p.new(ProviderConfig{BaseURL: srv.BaseURL, Model: "m", Timeout: 50 * time.Millisecond, Retry: RetryPolicy{Attempts: 1}})
			_, err := cl.Complete(testCtx(t), userRequest("hi"), func(string) {})
			if err == nil || !strings.Contains(err.Error(), "took longer than 50ms") {
				t.Fatalf("err = %v, want the attempt timeout named", err)
			}
		})
	}
}

func TestBaseURLMistakes(t *testing.T) {
	// An OpenAI base URL without /v1 gets a 404 that says what to check.
	srv := llmtest.NewOpenAI(t)
	_, err := NewOpenAI(ProviderConfig{BaseURL: srv.URL, Model: "m"}).Complete(testCtx(t), userRequest("hi"), nil)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "usually end in /v1") {
		t.Errorf("err = %v, want a 404 with a base URL hint", err)
	}
	// An Anthropic base URL with /v1 still works.
	an := llmtest.NewAnthropic(t, llmtest.Say("ok"))
	resp, err := NewAnthropic(ProviderConfig{BaseURL: an.URL + "/v1/", Model: "m"}).Complete(testCtx(t), userRequest("hi"), nil)
	if err != nil || resp.Message.Content != "ok" {
		t.Errorf("Anthropic base URL with /v1: %+v, %v", resp, err)
	}
}

// TestSSEReader checks the SSE parser as the model providers use it: an
// unnamed event has type "message" (anthropic.go maps it back to ""), a
// stream cut inside an event ends with io.EOF (the incomplete event is
// dropped; both providers treat that as a stream ended too soon), and the
// size error names the model stream's cap, not MCP_HTTP_MAX_BODY.
func TestSSEReader(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string // "event|data"
		end  error
	}{
		{"simple", "data: a\n\ndata: b\n\n", []string{"message|a", "message|b"}, io.EOF},
		{"named and crlf", "event: ping\r\ndata: {}\r\n\r\n", []string{"ping|{}"}, io.EOF},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"message|a\nb"}, io.EOF},
		{"comments and no space", ": keep-alive\ndata:x\n\n", []string{"message|x"}, io.EOF},
		{"event without data is skipped", "event: lone\n\ndata: y\n\n", []string{"message|y"}, io.EOF},
		{"cut inside an event drops it", "data: a\n\ndata: partial", []string{"message|a"}, io.EOF},
		{"cut before blank line drops it", "data: a\n", nil, io.EOF},
		{"cut named event drops it", "event: ping\ndata: a\n", nil, io.EOF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sse.NewParser(strings.NewReader(tc.in), maxSSEEvent, nil)
			var got []string
			var err error
			for {
				var ev sse.Event
				ev, err = r.Next()
				if err != nil {
					break
				}
				got = append(got, ev.Type+"|"+string(ev.Data))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || err != tc.end {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.end)
			}
		})
	}
	huge := "data: " + strings.Repeat("x", maxSSEEvent+1) + "\n\n"
	_, err := sse.NewParser(strings.NewReader(huge), maxSSEEvent, nil).Next()
	if !errors.Is(err, sse.ErrTooLarge) ||
		!strings.Contains(err.Error(), strconv.Itoa(maxSSEEvent)) || strings.Contains(err.Error(), "MCP_HTTP_MAX_BODY") {
		t.Errorf("oversized event: %v; want sse.ErrTooLarge naming the %d-byte cap", err, maxSSEEvent)
	}
}

func TestDefaultSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if err := (RetryPolicy{}).sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep on a done context = %v, want context.Canceled at once", err)
	}
	if err := (RetryPolicy{}).sleep(testCtx(t), time.Nanosecond); err != nil {
		t.Errorf("elapsed sleep = %v", err)
	}
}

func TestClientModel(t *testing.T) {
	if m := NewOpenAI(ProviderConfig{Model: "a"}).Model(); m != "a" {
		t.Errorf("openai Model() = %q", m)
	}
	if m := NewAnthropic(ProviderConfig{Model: "b"}).Model(); m != "b" {
		t.Errorf("anthropic Model() = %q", m)
	}
}
