package lua

import (
	"context"
	"errors"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
)

// hostPrompter is the engine's Prompter: it asks through the Lua functions
// installed with tai.prompter (the REPL's consent screen), run on the
// goroutine that owns the state. With none installed nobody can answer.
type hostPrompter struct{ h *Host }

func (h *Host) prompterFns() (confirm, ask *glua.LFunction) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.confirmFn, h.askFn
}

// Confirm implements engine.Prompter.
func (p hostPrompter) Confirm(ctx context.Context, c engine.Consent) (bool, error) {
	fn, _ := p.h.prompterFns()
	if fn == nil {
		return false, engine.ErrNoPrompter
	}
	var ok bool
	var cerr error
	err := p.h.onLua(ctx, func() {
		L := p.h.L
		t := L.NewTable()
		t.RawSetString("tool", glua.LString(c.Tool))
		t.RawSetString("origin", glua.LString(c.Origin))
		t.RawSetString("digest", glua.LString(c.Digest))
		if args, err := ToLua(L, c.Args); err == nil {
			t.RawSetString("args", args)
		}
		out, err := p.h.callLua(fn, 1, t)
		if err != nil {
			cerr = err
			return
		}
		ok = glua.LVAsBool(out[0])
	})
	if err != nil {
		return false, err
	}
	return ok, cerr
}

// Ask implements engine.Prompter.
func (p hostPrompter) Ask(ctx context.Context, question string) (string, error) {
	_, fn := p.h.prompterFns()
	if fn == nil {
		return "", engine.ErrNoPrompter
	}
	var answer string
	var aerr error
	err := p.h.onLua(ctx, func() {
		out, err := p.h.callLua(fn, 2, glua.LString(question))
		if err != nil {
			aerr = err
			return
		}
		s, ok := out[0].(glua.LString)
		if !ok {
			msg := "no answer"
			if e, isStr := out[1].(glua.LString); isStr {
				msg = string(e)
			}
			aerr = errors.New("the person gave no answer: " + msg)
			return
		}
		answer = string(s)
	})
	if err != nil {
		return "", err
	}
	return answer, aerr
}

// luaSetPrompter is tai.prompter{confirm=fn, ask=fn} (nil removes them).
func (h *Host) luaSetPrompter(L *glua.LState) int {
	var confirm, ask *glua.LFunction
	if v := L.Get(1); v != glua.LNil {
		t := L.CheckTable(1)
		var ok bool
		if confirm, ok = t.RawGetString("confirm").(*glua.LFunction); !ok {
			L.ArgError(1, "confirm must be a function(consent) returning true to allow the call")
		}
		if ask, ok = t.RawGetString("ask").(*glua.LFunction); !ok {
			L.ArgError(1, "ask must be a function(question) returning the answer")
		}
	}
	h.mu.Lock()
	h.confirmFn, h.askFn = confirm, ask
	h.mu.Unlock()
	return 0
}
