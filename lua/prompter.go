package lua

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/tool"
)

// openPrompter installs tai.prompter:
//
//	tai.prompter{confirm=fn(consent) -> bool, ask=fn(question) -> answer} | tai.prompter(nil)
func (h *Host) openPrompter(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("prompter", L.NewFunction(h.luaSetPrompter))
}

// prompterState is what tai.prompter installed and the question being
// asked through it.
type prompterState struct {
	mu      sync.Mutex // guards confirm and ask, read from any goroutine
	confirm *glua.LFunction
	ask     *glua.LFunction
	// granting says a prompter runs with stdin not a terminal, and tty is
	// /dev/tty then (nil when there is none); both owner goroutine only.
	granting bool
	tty      *os.File
	// untold says the prompter tried to read an answer while granting
	// with no terminal to read it from; owner goroutine only.
	untold bool
}

// hostPrompter is the engine's Prompter: it asks through the Lua functions
// installed with tai.prompter (the REPL's consent screen), run on the
// goroutine that owns the state. With none installed nobody can answer.
type hostPrompter struct{ h *Host }

func (h *Host) prompterFns() (confirm, ask *glua.LFunction) {
	h.prompter.mu.Lock()
	defer h.prompter.mu.Unlock()
	return h.prompter.confirm, h.prompter.ask
}

// Confirm implements engine.Prompter. Consent is a person's: it is asked
// only at a terminal (see askingTerminal), else refused.
func (p hostPrompter) Confirm(ctx context.Context, c tool.Consent) (bool, error) {
	fn, _ := p.h.prompterFns()
	if fn == nil {
		return false, tool.ErrNoPrompter
	}
	tty, piped := p.h.askingTerminal()
	if tty != nil {
		defer tty.Close()
		if !isTerminal(p.h.opts.Stdout) {
			// Written to the terminal itself, not told: stdout and stderr
			// go elsewhere (a pipe, a file), where tai.notify writes,
			// and the person answering at /dev/tty must see it.
			fmt.Fprintf(tty, "tai: the model asks to run %s (%s); the details are on stdout\n", CleanText(c.Tool, true), CleanText(c.Origin, true))
		}
	}
	var ok bool
	var cerr error
	err := p.h.onLua(ctx, func() {
		p.h.prompter.granting, p.h.prompter.tty, p.h.prompter.untold = piped, tty, false
		defer func() { p.h.prompter.granting, p.h.prompter.tty = false, nil }()
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
		if !ok && p.h.prompter.untold {
			cerr = errNoTerminal
		}
	})
	if err != nil {
		return false, err
	}
	return ok, cerr
}

// Ask implements engine.Prompter. Questions (ask_user, a profile change)
// are answered only at a terminal, like consent.
func (p hostPrompter) Ask(ctx context.Context, question string) (string, error) {
	_, fn := p.h.prompterFns()
	if fn == nil {
		return "", tool.ErrNoPrompter
	}
	tty, piped := p.h.askingTerminal()
	if tty != nil {
		defer tty.Close()
		if !isTerminal(p.h.opts.Stdout) {
			fmt.Fprintf(tty, "? %s\n", CleanText(question, false))
		}
	}
	var answer string
	var aerr error
	err := p.h.onLua(ctx, func() {
		p.h.prompter.granting, p.h.prompter.tty, p.h.prompter.untold = piped, tty, false
		defer func() { p.h.prompter.granting, p.h.prompter.tty = false, nil }()
		out, err := p.h.callLua(fn, 2, glua.LString(question))
		if err != nil {
			aerr = err
			return
		}
		s, ok := out[0].(glua.LString)
		if !ok && p.h.prompter.untold {
			aerr = errNoTerminal
			return
		}
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
	h.prompter.mu.Lock()
	h.prompter.confirm, h.prompter.ask = confirm, ask
	h.prompter.mu.Unlock()
	return 0
}

// errNoTerminal is what a question that grants something (consent, a
// question of the model) gives when stdin is not a terminal and there is
// no /dev/tty either: only a person at a terminal answers it.
var errNoTerminal = tool.ErrNoPrompter

// askingTerminal decides where the answer to a question that grants
// something (consent, ask_user, a profile change) may come from. With
// stdin a terminal, from there (nil, false). Otherwise the question is
// asked piped: never from stdin, where a line piped to tai would pass for
// a person's answer, but from /dev/tty when there is one (returned open;
// the caller closes it) and else from nowhere, so it is refused. rl:read
// and io.read honour that while the prompter runs (Host.granting).
func (h *Host) askingTerminal() (tty *os.File, piped bool) {
	if isTerminal(h.opts.Stdin) {
		return nil, false
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, true
	}
	return tty, true
}

// readGrantLine shows prompt on tty and reads one line typed there, for
// rl:read while a question is asked on /dev/tty. Ending the call's context
// (Ctrl-C) gives up on the line.
func readGrantLine(L *glua.LState, tty *os.File, prompt string) (string, error) {
	fmt.Fprint(tty, prompt)
	done := make(chan readResult, 1)
	go func() {
		line, err := bufio.NewReader(tty).ReadString('\n')
		done <- readResult{line, err}
	}()
	var stop <-chan struct{}
	if ctx := L.Context(); ctx != nil {
		stop = ctx.Done()
	}
	select {
	case r := <-done:
		if r.err != nil && r.line == "" {
			return "", r.err
		}
		return strings.TrimRight(r.line, "\r\n"), nil
	case <-stop:
		return "", errors.New("interrupt")
	}
}
