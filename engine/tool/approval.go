package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Mode says how calls of non-safe tools are approved.
type Mode int

// The approval modes.
const (
	// Interactive asks the person for every non-safe call (the default).
	Interactive Mode = iota
	// Auto approves every call without asking and tells the front end
	// about each one (--auto).
	Auto
	// Yolo approves every call silently (--yolo, and the MCP server, where
	// nobody is present to ask).
	Yolo
)

// String returns the mode's flag-style name.
func (m Mode) String() string {
	switch m {
	case Interactive:
		return "interactive"
	case Auto:
		return "auto"
	case Yolo:
		return "yolo"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode turns "interactive", "auto" or "yolo" into a Mode.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "interactive", "":
		return Interactive, nil
	case "auto":
		return Auto, nil
	case "yolo":
		return Yolo, nil
	}
	return 0, fmt.Errorf("approval mode %q is not known: use interactive, auto or yolo", s)
}

// Consent is what a person is asked to approve: the tool, where it really
// lives when it is bridged, the argument digest, and the arguments in full
// for a front end that shows them on request.
type Consent struct {
	Tool   string
	Origin string // "server/tool" for a bridged MCP tool; empty for native tools
	Digest string
	Args   map[string]any
}

// Prompter is the person at the terminal, as the REPL presents them.
// Implementations return an error when nobody can answer (no TTY), which
// counts as a refusal.
type Prompter interface {
	// Confirm asks whether the call described by c may run.
	Confirm(ctx context.Context, c Consent) (bool, error)
	// Ask puts a free-form question to the person and returns the answer.
	Ask(ctx context.Context, question string) (string, error)
}

// ErrNoPrompter reports that nobody is available to answer: no prompter was
// installed (a served session, a script without a terminal).
var ErrNoPrompter = errors.New("no terminal to ask: use --auto or a rule")

// Approver decides whether non-safe tool calls run. Prompts are asked one
// at a time, in the order calls arrive, even when several goroutines ask at
// once. It is safe for concurrent use.
type Approver struct {
	mu       sync.RWMutex
	mode     Mode
	prompter Prompter
	notify   func(Consent)
	rules    Rules

	ask sync.Mutex // serializes prompts
}

// NewApprover returns an approver in mode asking through p (nil: nobody to
// ask, so Interactive denies).
func NewApprover(mode Mode, p Prompter) *Approver {
	return &Approver{mode: mode, prompter: p}
}

// Mode returns the current approval mode.
func (a *Approver) Mode() Mode {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.mode
}

// SetMode changes the approval mode.
func (a *Approver) SetMode(m Mode) {
	a.mu.Lock()
	a.mode = m
	a.mu.Unlock()
}

// Prompter returns the installed prompter, or nil.
func (a *Approver) Prompter() Prompter {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.prompter
}

// SetPrompter installs p (nil removes it).
func (a *Approver) SetPrompter(p Prompter) {
	a.mu.Lock()
	a.prompter = p
	a.mu.Unlock()
}

// SetNotify installs the function Auto mode calls for every call it
// approves, so the front end can show what ran. Nil removes it.
func (a *Approver) SetNotify(f func(Consent)) {
	a.mu.Lock()
	a.notify = f
	a.mu.Unlock()
}

// SetRules installs the kept permission rules Interactive mode consults
// before it asks (see Rules). Nil removes them.
func (a *Approver) SetRules(r Rules) {
	a.mu.Lock()
	a.rules = r
	a.mu.Unlock()
}

// Approve reports whether the call c may run. Interactive mode runs a call
// a kept rule covers (see SetRules) without a question and asks the
// prompter about the others (nil prompter, an error or a cancelled ctx:
// no); Auto says yes and notifies; Yolo says yes.
func (a *Approver) Approve(ctx context.Context, c Consent) (bool, error) {
	a.mu.RLock()
	mode, p, notify, rules := a.mode, a.prompter, a.notify, a.rules
	a.mu.RUnlock()
	switch mode {
	case Yolo:
		return true, nil
	case Auto:
		if notify != nil {
			notify(c)
		}
		return true, nil
	}
	if rules != nil && rules(c) {
		return true, nil
	}
	if p == nil {
		return false, ErrNoPrompter
	}
	a.ask.Lock()
	defer a.ask.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return p.Confirm(ctx, c)
}

// Ask puts question to the person through the prompter. With no prompter it
// fails with ErrNoPrompter. Mode does not matter: --yolo approves tools, it
// cannot answer questions.
func (a *Approver) Ask(ctx context.Context, question string) (string, error) {
	p := a.Prompter()
	if p == nil {
		return "", ErrNoPrompter
	}
	a.ask.Lock()
	defer a.ask.Unlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return p.Ask(ctx, question)
}

// Decide puts a yes/no question to the person, whatever the mode: it is for
// decisions that --auto and --yolo do not cover, such as a model changing
// where an API key is sent. Only an answer of "y" or "yes" (any case) is a
// yes; with no prompter it fails with ErrNoPrompter, which counts as no.
func (a *Approver) Decide(ctx context.Context, question string) (bool, error) {
	answer, err := a.Ask(ctx, question)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
