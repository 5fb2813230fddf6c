package lua

import (
	"context"
	"errors"
	"fmt"

	glua "github.com/yuin/gopher-lua"
)

// A Host's Lua state is used by one goroutine at a time, but the engine
// calls back from others: a Lua tool run by an agent or a served MCP call
// (perhaps beside other tools of the same answer), the consent prompt, the
// streaming text of a turn. Whoever uses the state holds the host's baton,
// a channel with room for one token. The goroutine that runs the host holds
// it, and lends it out only while it waits for the engine (Await); a
// caller on another goroutine takes it (onLua), runs its Lua code on its
// own goroutine, and gives it back. So every Lua call still happens one at
// a time, callers waiting in the order they came, and a call costs no hand
// over to another goroutine and back.

// errNotServed reports a call whose context ended before the Lua state was
// free to run it.
var errNotServed = errors.New("the Lua state was busy and the call's time ran out before it could run")

// onLua runs fn with the state, once the goroutine that runs the host lends
// it (inside Await, or a later Await). It waits for fn to finish. When ctx
// ends before the state is free, fn does not run and the error says so.
// While fn runs, the state's context is ctx, so a cancelled call stops the
// Lua code it runs.
func (h *Host) onLua(ctx context.Context, fn func()) error {
	select {
	case h.baton <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", errNotServed, ctx.Err())
	}
	defer func() {
		h.flushNotices()
		<-h.baton
	}()
	if err := ctx.Err(); err != nil {
		// The state came free as the call's time ran out: select took
		// either. A call whose time is up does not run.
		return fmt.Errorf("%w: %w", errNotServed, err)
	}
	L := h.L
	prev := L.Context()
	L.SetContext(ctx)
	defer func() {
		if prev != nil {
			L.SetContext(prev)
		} else {
			L.RemoveContext()
		}
	}()
	fn()
	return nil
}

// Await runs work on a new goroutine and, until it returns, lends the
// state to the Lua calls that work needs (Lua tools, callbacks, prompts).
// It must be called by the holder of the state: the goroutine that runs
// the host, or Lua code running under onLua. The MCP server and other Go
// code that dispatches tools which may be written in Lua go through it.
func (h *Host) Await(work func()) {
	done := make(chan struct{})
	<-h.baton
	go func() {
		defer close(done)
		work()
	}()
	<-done
	h.baton <- struct{}{} // back once a call running now has finished
	h.flushNotices()
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
