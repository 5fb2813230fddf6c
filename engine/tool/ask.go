package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"tai/mcp/elicit"
)

// Answerer is who answers a request a server sends in the middle of a
// call (elicitation/create, sampling/createMessage): the person of that
// call through its prompter, or nobody, with the reason. Registry.Answerer
// resolves it from the context the request arrives with (the context of
// the call in flight, see mcp.RequestHandler).
type Answerer struct {
	// Prompter asks the person; nil when nobody answers.
	Prompter Prompter
	// Refusal says, when Prompter is nil, why nobody answers, in words
	// for the call's line ("--auto answers no server's questions").
	Refusal string

	approver *Approver
}

// Refusals an Answerer gives, for tests and front ends that tell them
// apart; each is the whole sentence shown.
const (
	// RefusedUnattended: --auto or --yolo is on, so nobody is asked.
	RefusedUnattended = "--%s answers no server's questions"
	// RefusedServed: a served session has nobody to ask.
	RefusedServed = "nobody is present to answer in a served session"
	// RefusedNoCall: the request belongs to no call tai can tell (several
	// calls in flight on one stdio server, or none).
	RefusedNoCall = "the request came outside any call tai can tell it belongs to"
	// RefusedOthers: the request belongs to no one call, and the calls in
	// flight on its server are not all one person's (a served session's
	// and the REPL's), so tai cannot tell whom to ask.
	RefusedOthers = "it came while calls of different sessions ran on that server, and tai cannot tell whose it is"
	// RefusedNoTerminal: no prompter, or no terminal to ask at.
	RefusedNoTerminal = "no terminal to ask"
)

// Answerer returns who answers a request a server sent with ctx, the
// context of the call in flight it belongs to. The person answers only
// in Interactive mode, for a caller with a prompter; --auto and --yolo,
// served sessions, a request outside any call and a missing prompter
// give nobody, each with its reason. A Prompter may still fail with
// ErrNoPrompter when it finds no terminal (tai -p piped): Ask turns that
// into a refusal too.
func (r *Registry) Answerer(ctx context.Context) Answerer {
	x, ok := ctx.Value(callerKey{}).(*callerCtx)
	if !ok {
		return Answerer{Refusal: RefusedNoCall}
	}
	a := r.approverOf(x.c)
	p := a.Prompter()
	switch {
	case strings.HasPrefix(x.c.Name, "mcp:"): // a served session's calls, its chat's included
		return Answerer{Refusal: RefusedServed}
	case a.Mode() != Interactive:
		return Answerer{Refusal: fmt.Sprintf(RefusedUnattended, a.Mode())}
	case p == nil:
		return Answerer{Refusal: RefusedNoTerminal}
	}
	return Answerer{Prompter: p, approver: a}
}

// AnswererOf returns who answers a request that belongs to no one call
// but came while calls (their contexts) were in flight on its server:
// their Answerer when they all have the same (one person, asked at one
// prompter, in one mode), else nobody (RefusedOthers). With no calls it
// is Answerer(ctx) of a context with no caller: nobody (RefusedNoCall).
func (r *Registry) AnswererOf(calls []context.Context) Answerer {
	if len(calls) == 0 {
		return Answerer{Refusal: RefusedNoCall}
	}
	first := r.Answerer(calls[0])
	for _, ctx := range calls[1:] {
		if a := r.Answerer(ctx); a.approver != first.approver || a.Refusal != first.Refusal {
			return Answerer{Refusal: RefusedOthers}
		}
	}
	return first
}

// ErrNobody is what Ask returns when nobody answers; it wraps
// ErrNoPrompter, and its text is the Answerer's Refusal.
type ErrNobody struct{ Refusal string }

func (e *ErrNobody) Error() string { return e.Refusal }

// Unwrap makes errors.Is(err, ErrNoPrompter) hold.
func (e *ErrNobody) Unwrap() error { return ErrNoPrompter }

// Ask runs fn with the person's prompter, one question at a time with
// the approver's other prompts (consent, ask_user), once ctx is checked.
// With nobody to ask, or a prompter that finds no terminal, it returns an
// *ErrNobody saying why.
func (a Answerer) Ask(ctx context.Context, fn func(Prompter) error) error {
	if a.Prompter == nil {
		return &ErrNobody{Refusal: a.Refusal}
	}
	a.approver.ask.Lock()
	defer a.approver.ask.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	err := fn(a.Prompter)
	var nobody *ErrNobody
	if errors.Is(err, ErrNoPrompter) && !errors.As(err, &nobody) {
		return &ErrNobody{Refusal: RefusedNoTerminal}
	}
	return err
}

// Note says, on the line of the call in flight in ctx, what happened
// while it ran that the person should know (a server's question declined
// under --auto, a URL opened). Each note is one short line. A call with
// no line (see Caller.Note) keeps its notes to itself.
func Note(ctx context.Context, text string) {
	if note := CallerFrom(ctx).Note; note != nil {
		note(text)
	}
}

// Elicitor is a Prompter that also puts a server's elicitation/create to
// the person (or to the script that answers for them): the form's
// questions, or the URL to open. It returns the person's answer; a form's
// content is checked again by the caller against q.Form.
type Elicitor interface {
	Elicit(ctx context.Context, q elicit.Question) (elicit.Result, error)
}
