package tool

import (
	"context"

	"tai/engine/llm"
	"tai/mcp/sampling"
)

// SampleQuestion is a server's sampling/createMessage as the person is
// shown it: who asks, the request in full, and the model that would
// answer.
type SampleQuestion struct {
	// Server names the server that asks.
	Server string
	// Model names the person's current model, which answers.
	Model string
	// Request is the request as read (bounded, see sampling.Parse).
	Request sampling.Request
}

// Sampler is a Prompter that also puts a server's sampling request to the
// person: the request in full before anything is sent (approve, deny, or
// approve with the prompt edited, with or without the tools it names),
// then the model's answer before it goes back. A Prompter that is not a
// Sampler answers no sampling request.
type Sampler interface {
	// ReviewSample shows q and returns the person's decision.
	ReviewSample(ctx context.Context, q SampleQuestion) (sampling.Decision, error)
	// ReviewAnswer shows the model's answer to q and returns whether it
	// goes back to the server.
	ReviewAnswer(ctx context.Context, q SampleQuestion, answer sampling.Result) (bool, error)
}

// Spend counts u, the tokens a model spent for the call in flight in ctx
// (a server's sampling request), in the usage of the turn that made the
// call (Caller.Spent). A call outside a turn counts nowhere.
func Spend(ctx context.Context, u llm.Usage) {
	if spent := CallerFrom(ctx).Spent; spent != nil {
		spent(u)
	}
}
