package lua

import (
	"context"
	"errors"
	"fmt"

	glua "github.com/yuin/gopher-lua"
)

// A Host's Lua state belongs to one goroutine, but the engine calls back
// from others: a Lua tool run by an agent (perhaps beside other tools of
// the same answer), the consent prompt, the streaming text of a turn. Those
// callers send a job to the host's jobs channel and wait; the owning
// goroutine runs the jobs while it waits for the engine (Await). So every
// Lua call happens on the owner, one at a time, in the order sent.

// job is one piece of Lua work sent to the goroutine that owns the state.
type job struct {
	ctx  context.Context
	fn   func()
	done chan struct{}
}

// errNotServed reports a job whose context ended before the Lua state was
// free to run it.
var errNotServed = errors.New("the Lua state was busy and the call's time ran out before it could run")

// onLua runs fn on the goroutine that owns the state, which must be inside
// Await (or a later Await) for the job to be picked up. It waits for fn to
// finish. When ctx ends before the job is taken, fn does not run and the
// error says so. While fn runs, the state's context is ctx, so a cancelled
// call stops the Lua code it runs.
func (h *Host) onLua(ctx context.Context, fn func()) error {
	j := &job{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case h.jobs <- j:
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", errNotServed, ctx.Err())
	}
	<-j.done
	return nil
}

// run runs the job on the owning goroutine with the state's context set to
// the job's.
func (j *job) run(L *glua.LState) {
	defer close(j.done)
	prev := L.Context()
	L.SetContext(j.ctx)
	defer func() {
		if prev != nil {
			L.SetContext(prev)
		} else {
			L.RemoveContext()
		}
	}()
	j.fn()
}

// Await runs work on a new goroutine and, until it returns, runs on the
// calling goroutine the Lua calls that work needs (Lua tools, callbacks,
// prompts). It must be called from the goroutine that owns the host; the
// MCP server and other Go code that dispatches tools which may be written
// in Lua go through it.
func (h *Host) Await(work func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		work()
	}()
	for {
		select {
		case <-done:
			return
		case j := <-h.jobs:
			j.run(h.L)
		}
	}
}

// callLua calls fn with args under a protected call on the owning goroutine
// and returns its results (at most nret; MultRet for all).
func (h *Host) callLua(fn glua.LValue, nret int, args ...glua.LValue) ([]glua.LValue, error) {
	L := h.L
	top := L.GetTop()
	if err := L.CallByParam(glua.P{Fn: fn, NRet: nret, Protect: true, Handler: tracebackHandler(L, 0)}, args...); err != nil {
		L.SetTop(top)
		return nil, luaError(err)
	}
	out := make([]glua.LValue, L.GetTop()-top)
	for i := range out {
		out[i] = L.Get(top + 1 + i)
	}
	L.SetTop(top)
	return out, nil
}

// luaContext returns the state's context (Ctrl-C cancels it inside
// tai.term.protect and top-level runs), or Background.
func luaContext(L *glua.LState) context.Context {
	if ctx := L.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
