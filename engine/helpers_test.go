package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// scripted is a ChatClient answering from a list of responses, in order,
// and recording a deep copy of every request.
type scripted struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error)
	reqs  []llm.Request
}

func (s *scripted) Complete(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	s.mu.Lock()
	raw, _ := json.Marshal(req)
	var cp llm.Request
	_ = json.Unmarshal(raw, &cp)
	s.reqs = append(s.reqs, cp)
	n := len(s.reqs)
	if n > len(s.steps) {
		s.mu.Unlock()
		return llm.Response{}, fmt.Errorf("scripted client: request %d, but only %d answers are scripted", n, len(s.steps))
	}
	step := s.steps[n-1]
	s.mu.Unlock()
	return step(ctx, req, onText)
}

func (s *scripted) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

// say answers text (streamed as two deltas).
func say(text string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return func(_ context.Context, _ llm.Request, onText func(string)) (llm.Response, error) {
		if onText != nil && text != "" {
			half := len(text) / 2
			onText(text[:half])
			onText(text[half:])
		}
		return llm.Response{Message: llm.Message{Role: "assistant", Content: text}, FinishReason: "stop", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
}

// calls answers with tool calls; each pair is name, JSON arguments.
func calls(pairs ...string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return func(context.Context, llm.Request, func(string)) (llm.Response, error) {
		var tcs []llm.ToolCall
		for i := 0; i+1 < len(pairs); i += 2 {
			tcs = append(tcs, llm.ToolCall{ID: fmt.Sprintf("c%d", i/2), Name: pairs[i], Arguments: json.RawMessage(pairs[i+1])})
		}
		return llm.Response{Message: llm.Message{Role: "assistant", ToolCalls: tcs}, FinishReason: "tool_calls", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
}

// prompter is a Prompter with canned answers that records what it was
// asked.
type prompter struct {
	mu       sync.Mutex
	allow    bool
	answer   string
	err      error
	consents []tool.Consent
	asked    []string
}

func (p *prompter) Confirm(_ context.Context, c tool.Consent) (bool, error) {
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

func (p *prompter) seen() []tool.Consent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]tool.Consent(nil), p.consents...)
}

func noEnv(string) string { return "" }

// newEngine builds an Engine on a fresh vault whose model is client, with
// its working directory in a temporary folder.
func newEngine(t testing.TB, client llm.ChatClient, o *Options) *Engine {
	t.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Getenv == nil {
		opts.Getenv = noEnv
	}
	if opts.NewClient == nil {
		opts.NewClient = func(llm.Profile) (llm.ChatClient, error) { return client, nil }
	}
	e, err := New(vaulttest.Open(t), &opts)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	return e
}

// addTool registers a test tool or fails the test.
func addTool(t testing.TB, r *tool.Registry, toolName tool.Tool) {
	t.Helper()
	if err := r.Add(toolName); err != nil {
		t.Fatalf("add %s: %v", toolName.Name, err)
	}
}

func textTool(name, desc string, safe bool, out string) tool.Tool {
	return tool.Tool{Name: name, Description: desc, Safe: safe, Run: func(context.Context, map[string]any) (tool.Result, error) {
		return tool.TextResult(out), nil
	}}
}

// newSession makes a session on e with default options, or fails the test.
func newSession(t testing.TB, e *Engine) *Session {
	t.Helper()
	s, err := e.NewSession(nil)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	return s
}

// fakeProvider names a provider and starts a fake of its API.
type fakeProvider struct {
	name string
	fake func(testing.TB, ...llmtest.Turn) *llmtest.Server
}

// fakeProviders are the providers whose turns the tests run through a
// fake of their API.
var fakeProviders = []fakeProvider{
	{llm.ProviderOpenAI, llmtest.NewOpenAI},
	{llm.ProviderAnthropic, llmtest.NewAnthropic},
}

func names(specs []llm.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}
