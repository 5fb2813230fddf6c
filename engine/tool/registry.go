package tool

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"tai/engine/llm"
	"tai/vault"
)

// Registry holds the tools and runs them: Dispatch resolves a name, asks
// for approval, runs the tool, appends an audit entry, redacts the result
// and spills it to a vault record when it is too large. It is safe for
// concurrent use; tools may be added and removed at run time.
type Registry struct {
	store    *vault.Store
	approver *Approver
	now      func() time.Time

	mu       sync.RWMutex
	tools    map[string]*Tool
	fallback Fallback
	source   SpecSource
	index    *wordIndex  // over the registered tools, rebuilt lazily
	extra    *extraIndex // over the SpecSource's tools, refreshed per selection
}

// NewRegistry returns an empty registry that audits, redacts and spills
// through store. Calls whose Caller has an approver are approved by it; approver decides the others, and a nil one
// denies every non-safe call. It panics on a nil store: without one nothing could
// be redacted or audited.
func NewRegistry(store *vault.Store, approver *Approver) *Registry {
	if store == nil {
		panic("tool: NewRegistry needs a vault store")
	}
	if approver == nil {
		approver = NewApprover(Interactive, nil)
	}
	return &Registry{
		store:    store,
		approver: approver,
		now:      time.Now,
		tools:    map[string]*Tool{},
		extra:    &extraIndex{},
	}
}

// Store returns the vault the registry audits, redacts and spills
// through.
func (r *Registry) Store() *vault.Store { return r.store }

// Approver returns the registry's own approver: the one that decides calls
// made by a caller with none of its own (see Caller.Approver).
func (r *Registry) Approver() *Approver { return r.approver }

// ApproverFor returns the approver that decides a call made in ctx: its
// caller's, else the registry's own.
func (r *Registry) ApproverFor(ctx context.Context) *Approver {
	return r.approverOf(CallerFrom(ctx))
}

func (r *Registry) approverOf(c Caller) *Approver {
	if c.Approver != nil {
		return c.Approver
	}
	return r.approver
}

// Lookup is Get as Prepare resolves a name for the caller of ctx: the
// caller's own tools come first; for a NativeOnly caller only registered
// native tools resolve, never the fallback's bridged ones.
func (r *Registry) Lookup(ctx context.Context, name string) (Tool, bool) {
	return r.lookup(CallerFrom(ctx), name)
}

func (r *Registry) lookup(c Caller, name string) (Tool, bool) {
	if t, ok := c.Own[name]; ok {
		return t, true
	}
	if !c.NativeOnly {
		return r.Get(name)
	}
	r.mu.RLock()
	t, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok || t.Origin != "" || t.HostOnly {
		return Tool{}, false
	}
	return *t, true
}

// Add registers t, replacing any tool of the same name.
func (r *Registry) Add(t Tool) error {
	if err := ValidToolName(t.Name); err != nil {
		return err
	}
	if t.Run == nil {
		return fmt.Errorf("tool %q has no run function", t.Name)
	}
	if t.Parameters != nil {
		if typ, _ := t.Parameters["type"].(string); typ != "object" {
			return fmt.Errorf("tool %q: parameters must be a JSON Schema with type \"object\"", t.Name)
		}
	}
	tt := t
	r.mu.Lock()
	r.tools[t.Name] = &tt
	r.index = nil
	r.mu.Unlock()
	return nil
}

// Remove unregisters the named tool and reports whether it was there.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tools[name]
	delete(r.tools, name)
	if ok {
		r.index = nil
	}
	return ok
}

// SetFallback installs the resolver Dispatch consults for names it does not
// hold. Nil removes it.
func (r *Registry) SetFallback(f Fallback) {
	r.mu.Lock()
	r.fallback = f
	r.mu.Unlock()
}

// SetSpecSource installs the provider of extra tool specs SelectTools and
// Search consider beside the registered tools. Nil removes it.
func (r *Registry) SetSpecSource(s SpecSource) {
	r.mu.Lock()
	r.source = s
	r.mu.Unlock()
}

// Get returns the tool registered (or resolvable through the fallback) as
// name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	t, ok := r.tools[name]
	fb := r.fallback
	r.mu.RUnlock()
	if ok {
		return *t, true
	}
	if fb != nil {
		if t, ok := fb(name); ok && t.Run != nil {
			return t, true
		}
	}
	return Tool{}, false
}

// NativeTools returns the registered tools that are not bridged from an MCP
// server (Origin empty) nor reach one (HostOnly), sorted by name: what tai
// may serve as its own.
func (r *Registry) NativeTools() []Tool {
	var out []Tool
	for _, t := range r.Tools() {
		if t.Origin == "" && !t.HostOnly {
			out = append(out, t)
		}
	}
	return out
}

// Tools returns the registered tools sorted by name (without the fallback's).
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, *t)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Specs returns every tool spec a model could be offered: the registered
// tools and the SpecSource's, sorted by name.
func (r *Registry) Specs() []llm.ToolSpec {
	tools := r.Tools()
	out := make([]llm.ToolSpec, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		out = append(out, t.Spec())
		seen[t.Name] = true
	}
	r.mu.RLock()
	src := r.source
	r.mu.RUnlock()
	if src != nil {
		for _, s := range src("") {
			if !seen[s.Name] {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
