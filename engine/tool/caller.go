package tool

import (
	"context"

	"tai/engine/llm"
)

// Caller says who makes the tool calls of a context: what the registry
// needs to approve, resolve and audit them, and what the bridge needs to
// decide for whom it acts. Where calls start (a session, an agent's turn,
// a served MCP session, a person's own command) the starter puts one in
// the context with WithCaller; the runtime reads it with CallerFrom and
// never reaches into the session that set it.
type Caller struct {
	// Name names the caller in the audit trail ("mcp:…" for a served
	// session); empty for the local one.
	Name string
	// Approver decides the caller's non-safe calls and answers its
	// questions; nil means the registry's own.
	Approver *Approver
	// Profile returns the name of the caller's profile as it is now (a
	// session may switch mid-turn); nil, or "", means the default.
	Profile func() string
	// ByModel says the calls are a model's, made in an agent's turn.
	ByModel bool
	// ByPerson says the person at the terminal makes the calls themselves
	// (see ByPerson); it counts only outside a model's turn and a served
	// client's call (see PersonsOwn).
	ByPerson bool
	// NativeOnly says only registered native tools resolve: a served
	// client's call never reaches a bridged tool.
	NativeOnly bool
	// Own holds tools of the caller's own (a fork's), resolved before the
	// registry's.
	Own map[string]Tool
	// Live, when set, is shown a tool's output as it comes (the shell's
	// stdout and stderr), redacted; the result still holds it whole.
	Live func(text string)
	// Note, when set, is shown what happened during the call that the
	// person should know (see tool.Note), on the call's line.
	Note func(text string)
	// Spent, when set, counts tokens a model spent for the call (see
	// Spend) in the usage of the turn that made it.
	Spent func(llm.Usage)
	// Progress, when set, is told of a tool's progress as it runs (an MCP
	// server's notifications/progress, a served chat's steps). It must
	// not block: it may be called on the goroutine reading a server.
	Progress func(Progress)
}

// Progress is how far a running tool has come: Progress of Total (0 when
// the total is unknown), and what it is doing now, as shown to a person
// (redacted and made visible by whoever reports it).
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

type callerKey struct{}

// callerCtx carries a Caller in one allocation (context.WithValue would
// take two: the value's box and the context).
type callerCtx struct {
	context.Context
	c Caller
}

func (x *callerCtx) Value(key any) any {
	if key == (callerKey{}) {
		return x
	}
	return x.Context.Value(key)
}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return &callerCtx{ctx, c}
}

// CallerFrom returns the caller of ctx, or the zero Caller (nobody in
// particular: the registry's approver, no audit name, the default
// profile) when none was set.
func CallerFrom(ctx context.Context) Caller {
	if x, ok := ctx.Value(callerKey{}).(*callerCtx); ok {
		return x.c
	}
	return Caller{}
}

// ProfileName returns the caller's profile name now, "" for the default.
func (c Caller) ProfileName() string {
	if c.Profile == nil {
		return ""
	}
	return c.Profile()
}

// PersonsOwn reports whether the calls are the person's own: made by
// them (ByPerson), and neither inside a model's turn (a Lua tool the
// model called that calls another tool) nor under a served client.
func (c Caller) PersonsOwn() bool {
	return c.ByPerson && !c.ByModel && !c.NativeOnly
}

// ByPerson returns ctx saying that the person at the terminal makes the
// calls in it themselves: a command they typed (/mcp call) or their own
// script's tai.call. Prepare does not ask them again to approve what they
// asked for. It does not reach into a turn: a call made inside an agent's
// turn (a Lua tool the model called that calls another tool) or under a
// served client is the model's or the client's, and is approved as one.
// Pins, server drift and spawn consent are not approval and still ask.
func ByPerson(ctx context.Context) context.Context {
	c := CallerFrom(ctx)
	c.ByPerson = true
	return WithCaller(ctx, c)
}
