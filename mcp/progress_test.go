package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// progressSeen collects the notifications/progress a client's handler
// is given, with the ctx value each came with.
type progressSeen struct {
	mu    sync.Mutex
	notes []string
	marks []any
}

type markKey struct{}

func (p *progressSeen) options(timeout, total time.Duration) *ClientOptions {
	return &ClientOptions{CallTimeout: timeout, CallMaxTotal: total, Notifications: map[string]NotificationHandler{
		MethodProgress: func(ctx context.Context, params json.RawMessage) {
			var n struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(params, &n)
			p.mu.Lock()
			p.notes = append(p.notes, n.Message)
			p.marks = append(p.marks, ctx.Value(markKey{}))
			p.mu.Unlock()
		},
	}}
}

func (p *progressSeen) get() ([]string, []any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...), append([]any(nil), p.marks...)
}

// A call whose server keeps reporting progress outlives CallTimeout: each
// progress starts the timeout again. The handler sees each progress once,
// with the ctx of the call it belongs to; progress for a token tai never
// gave, a repeated one and one going back are dropped.
func TestCallProgressRenewsTheTimeout(t *testing.T) {
	var seen progressSeen
	c := connectFake(t, "default", seen.options(300*time.Millisecond, time.Minute))
	ctx := context.WithValue(testCtx(t), markKey{}, "the call")
	start := time.Now()
	res, err := c.Call(ctx, "progress", map[string]any{"steps": 6, "every": 150, "junk": true})
	if err != nil {
		t.Fatalf("a call reporting progress failed: %v", err)
	}
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Fatalf("the call took %s, less than its six steps of 150ms: the test proves nothing", took)
	}
	if res.Text() != "done" {
		t.Errorf("result = %q", res.Text())
	}
	notes, marks := seen.get()
	if got := strings.Join(notes, ","); got != "step 1,step 2,step 3,step 4,step 5,step 6" {
		t.Errorf("progress seen = %q, want each step once", got)
	}
	for i, m := range marks {
		if m != "the call" {
			t.Errorf("progress %d came with ctx value %v, not the call's", i+1, m)
		}
	}
}

// Without progress the same call times out, and says so.
func TestCallWithoutProgressTimesOut(t *testing.T) {
	c := connectFake(t, "default", &ClientOptions{CallTimeout: 300 * time.Millisecond})
	_, err := c.Call(testCtx(t), "progress", map[string]any{"steps": 1, "every": 2000})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 300ms without an answer or progress") {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

// Progress renews the timeout only up to CallMaxTotal; then the call ends
// and the server is told.
func TestCallProgressStopsAtMaxTotal(t *testing.T) {
	var seen progressSeen
	c := connectFake(t, "default", seen.options(200*time.Millisecond, 700*time.Millisecond))
	ctx := testCtx(t)
	start := time.Now()
	_, err := c.Call(ctx, "progress", map[string]any{"steps": 40, "every": 100})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ran past 700ms in all (MCP_CALL_MAX_TOTAL)") {
		t.Fatalf("err = %v, want the total cap", err)
	}
	if took := time.Since(start); took < 700*time.Millisecond {
		t.Errorf("the call ended after %s, before its total of 700ms", took)
	}
	res, err := c.Call(ctx, "last_cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), `"reason":"timed out"`) {
		t.Errorf("cancellations the server saw = %s, want the timed-out call", res.Text())
	}
}

// A call cancelled while it reports progress (Esc, Ctrl-C end the turn's
// ctx) sends notifications/cancelled naming it.
func TestCallCancelledDuringProgressTellsServer(t *testing.T) {
	var seen progressSeen
	first := make(chan struct{})
	var once sync.Once
	opts := seen.options(time.Minute, time.Minute)
	inner := opts.Notifications[MethodProgress]
	opts.Notifications[MethodProgress] = func(ctx context.Context, params json.RawMessage) {
		inner(ctx, params)
		once.Do(func() { close(first) })
	}
	c := connectFake(t, "default", opts)
	ctx := testCtx(t)
	call, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(call, "progress", map[string]any{"steps": 4, "every": 100})
		done <- err
	}()
	within(t, first, "the first progress")
	cancel()
	if err := within(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	res, err := c.Call(ctx, "last_cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), `"reason":"cancelled by the client"`) {
		t.Errorf("cancellations the server saw = %s", res.Text())
	}
}

// Every tools/call asks for progress, with its request id as the token,
// though nobody listens.
func TestEveryCallAsksForProgress(t *testing.T) {
	c, p, _ := startPipe(t, nil)
	go func() { _, _ = c.Call(context.Background(), "tool", nil) }()
	m := within(t, p.toServer, "tools/call")
	if want := `{"name":"tool","_meta":{"progressToken":` + m.ID.String() + `}}`; string(m.Params) != want {
		t.Fatalf("tools/call params = %s, want %s", m.Params, want)
	}
}
