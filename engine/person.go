package engine

import "context"

type personKey struct{}

// ByPerson returns ctx saying that the person at the terminal makes the
// calls in it themselves: a command they typed (/mcp call) or their own
// script's tai.call. Prepare does not ask them again to approve what they
// asked for. It does not reach into a turn: a call made inside an agent's
// turn (a Lua tool the model called that calls another tool) or under a
// served client is the model's or the client's, and is approved as one.
// Pins, server drift and spawn consent are not approval and still ask.
func ByPerson(ctx context.Context) context.Context {
	return context.WithValue(ctx, personKey{}, true)
}

// calledByPerson reports whether the call made in ctx is the person's own
// (see ByPerson).
func calledByPerson(ctx context.Context) bool {
	if ctx.Value(personKey{}) == nil {
		return false
	}
	if _, inTurn := AgentFrom(ctx); inTurn {
		return false
	}
	return ctx.Value(nativeOnlyKey{}) == nil
}
