package llm

import (
	"context"
	"fmt"
	"time"
)

// RetryNotice describes one retry a model client is about to wait for, so a
// front end can say why nothing is happening (stderr in -p, the spinner in
// the REPL).
type RetryNotice struct {
	// Provider and Model name the model being asked.
	Provider string
	Model    string
	// Status is the HTTP status of the failed try; 0 for a transport
	// failure (connection refused or reset) or an error inside a stream.
	Status int
	// Reason says what failed, e.g. "rate limited (429)", "server error
	// (503)", "connection refused".
	Reason string
	// Wait is how long the client waits before the next try.
	Wait time.Duration
	// Attempt is the number of the try about to be made (2 for the first
	// retry); Attempts is the total the policy allows.
	Attempt  int
	Attempts int
}

// String renders n for a person: "rate limited (429); retrying in 30s,
// attempt 2/4".
func (n RetryNotice) String() string {
	return fmt.Sprintf("%s; retrying in %v, attempt %d/%d", n.Reason, n.Wait.Round(100*time.Millisecond), n.Attempt, n.Attempts)
}

type retryNoticeKey struct{}

// WithRetryNotice returns a context under which model clients report each
// retry to fn before waiting for it. It takes precedence over
// ClientOptions.OnRetry; the agent sets it from Events.OnRetry for its
// turns, and a front end may set it around Engine.Complete.
func WithRetryNotice(ctx context.Context, fn func(RetryNotice)) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, retryNoticeKey{}, fn)
}

// retryNotifier returns the callback for ctx: the context's, else fallback.
func retryNotifier(ctx context.Context, fallback func(RetryNotice)) func(RetryNotice) {
	if fn, ok := ctx.Value(retryNoticeKey{}).(func(RetryNotice)); ok {
		return fn
	}
	return fallback
}

type modelNoticeKey struct{}

// WithModelNotice returns a context under which a client of a profile that
// names no model tells fn which model it picked (instead of
// ClientOptions.OnModelChosen), so a front end can say it in its own way.
func WithModelNotice(ctx context.Context, fn func(ModelChoice)) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, modelNoticeKey{}, fn)
}

// modelNotifier returns the callback for ctx: the context's, else fallback.
func modelNotifier(ctx context.Context, fallback func(ModelChoice)) func(ModelChoice) {
	if fn, ok := ctx.Value(modelNoticeKey{}).(func(ModelChoice)); ok {
		return fn
	}
	return fallback
}
