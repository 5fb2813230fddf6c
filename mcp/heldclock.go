package mcp

import (
	"context"
	"sync"
	"time"
)

// heldClock is the connect timeout of an http server's handshake: a timer
// that cancels the start when it fires, stopped while a person logs in
// (HoldStart), so a login in the browser is bounded by MCP_OAUTH_TIMEOUT
// rather than cut off by MCP_CONNECT_TIMEOUT.
type heldClock struct {
	mu     sync.Mutex
	left   time.Duration // what remains while held
	since  time.Time     // when the running timer was armed
	timer  *time.Timer
	holds  int
	fired  bool
	cancel context.CancelFunc
}

type heldClockKey struct{}

func newHeldClock(d time.Duration, cancel context.CancelFunc) *heldClock {
	h := &heldClock{left: d, since: time.Now(), cancel: cancel}
	h.timer = time.AfterFunc(d, h.fire)
	return h
}

func (h *heldClock) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holds > 0 || h.fired {
		return
	}
	h.fired = true
	h.cancel()
}

// expired reports whether the timeout ended the start.
func (h *heldClock) expired() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fired
}

func (h *heldClock) stop() { h.timer.Stop() }

func (h *heldClock) hold() func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holds == 0 && !h.fired {
		h.timer.Stop()
		h.left -= time.Since(h.since)
	}
	h.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.holds--; h.holds == 0 && !h.fired {
				// at least a second more, for the request the login was for
				h.left = max(h.left, time.Second)
				h.since = time.Now()
				h.timer.Reset(h.left)
			}
		})
	}
}

// HoldStart stops the clock of the request ctx belongs to until the
// returned function is called: the connect timeout of an http server's
// handshake, or the deadline of a call (MCP_CALL_TIMEOUT). An Authorizer
// calls it while a person logs in, whose wait MCP_OAUTH_TIMEOUT bounds.
// Elsewhere it does nothing.
func HoldStart(ctx context.Context) func() {
	if h, ok := ctx.Value(heldClockKey{}).(interface{ hold() func() }); ok {
		return h.hold()
	}
	return func() {}
}
