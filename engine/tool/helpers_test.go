package tool

import (
	"context"
	"sync"
	"testing"

	"tai/engine/llm"
)

// prompter answers consent with allow and questions with answer (or err),
// recording what it was asked.
type prompter struct {
	mu       sync.Mutex
	allow    bool
	answer   string
	err      error
	consents []Consent
	asked    []string
}

func (p *prompter) Confirm(_ context.Context, c Consent) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.consents = append(p.consents, c)
	return p.allow, p.err
}

func (p *prompter) Ask(_ context.Context, q string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, q)
	return p.answer, p.err
}

func (p *prompter) seen() []Consent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Consent(nil), p.consents...)
}

// addTool registers a test tool or fails the test.
func addTool(t testing.TB, r *Registry, tool Tool) {
	t.Helper()
	if err := r.Add(tool); err != nil {
		t.Fatalf("add %s: %v", tool.Name, err)
	}
}

func textTool(name, desc string, safe bool, out string) Tool {
	return Tool{Name: name, Description: desc, Safe: safe, Run: func(context.Context, map[string]any) (Result, error) {
		return TextResult(out), nil
	}}
}

func names(specs []llm.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}
