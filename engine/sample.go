package engine

import (
	"cmp"
	"context"
	"errors"

	"tai/engine/llm"
)

// Sample has the model of the session whose call is in flight in ctx
// answer req, for a server's sampling request the person approved; it
// returns the answer and the name of the model that gave it. Outside a
// session it is refused: sampling answers for a person's session only.
// Like a turn, it is refused while the vault holds sealed secrets it
// cannot decrypt.
func (e *Engine) Sample(ctx context.Context, req llm.Request) (llm.Response, string, error) {
	s, ok := SessionFrom(ctx)
	if !ok {
		return llm.Response{}, "", errors.New("a sampling request answers only within a session")
	}
	if err := redactionReady(e.store); err != nil {
		return llm.Response{}, "", err
	}
	c, err := s.Client()
	if err != nil {
		return llm.Response{}, "", err
	}
	resp, err := c.Complete(ctx, req, nil)
	p := s.Profile()
	return resp, cmp.Or(p.Model, p.Name), err
}

// SampleModel names the model that would answer a sampling request made
// within ctx's session ("" outside one).
func (e *Engine) SampleModel(ctx context.Context) string {
	if s, ok := SessionFrom(ctx); ok {
		p := s.Profile()
		return cmp.Or(p.Model, p.Name)
	}
	return ""
}
