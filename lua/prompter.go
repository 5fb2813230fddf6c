package lua

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/tool"
	"tai/mcp/sampling"
)

// openPrompter installs tai.prompter:
//
//	tai.prompter{confirm=fn(consent) -> bool, ask=fn(question) -> answer,
//	        sample=fn(q) -> "approve"|"deny"|{action=, prompt=, tools=},
//	        sample_answer=fn(q, answer) -> bool,
//	        elicit=fn(request) -> {action=, content=}} | tai.prompter(nil)
//
// elicit, sample and sample_answer are optional. elicit puts a server's
// elicitation to the person (see elicit.go); sample and sample_answer
// review a server's sampling request ({server=, model=, request={messages=, systemPrompt=,
// maxTokens=, modelPreferences=, tools=, …}}) and then the model's answer
// ({model=, text=, tool_calls=, stop_reason=}); without them nobody
// answers sampling.
func (h *Host) openPrompter(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("prompter", L.NewFunction(h.luaSetPrompter))
}

// prompterState is what tai.prompter installed and the question being
// asked through it.
type prompterState struct {
	mu      sync.Mutex // guards confirm and ask, read from any goroutine
	confirm *glua.LFunction
	ask     *glua.LFunction
	// sample and sampleAnswer review a server's sampling request and the
	// model's answer to it (optional: without them, nobody does).
	sample, sampleAnswer *glua.LFunction
	// elicit puts a server's elicitation to the person (optional).
	elicit *glua.LFunction
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

// luaSetPrompter is tai.prompter{confirm=fn, ask=fn [, elicit=fn]} (nil
// removes them).
func (h *Host) luaSetPrompter(L *glua.LState) int {
	var confirm, ask, sample, sampleAnswer, elicit *glua.LFunction
	if v := L.Get(1); v != glua.LNil {
		t := L.CheckTable(1)
		var ok bool
		if confirm, ok = t.RawGetString("confirm").(*glua.LFunction); !ok {
			L.ArgError(1, "confirm must be a function(consent) returning true to allow the call")
		}
		if ask, ok = t.RawGetString("ask").(*glua.LFunction); !ok {
			L.ArgError(1, "ask must be a function(question) returning the answer")
		}
		sample, ok = t.RawGetString("sample").(*glua.LFunction)
		if !ok && t.RawGetString("sample") != glua.LNil {
			L.ArgError(1, "sample must be a function(request) returning approve, deny or {action=, prompt=, tools=}")
		}
		sampleAnswer, ok = t.RawGetString("sample_answer").(*glua.LFunction)
		if !ok && t.RawGetString("sample_answer") != glua.LNil {
			L.ArgError(1, "sample_answer must be a function(request, answer) returning true to send the answer back")
		}
		if (sample == nil) != (sampleAnswer == nil) {
			L.ArgError(1, "sample and sample_answer go together: give both or neither")
		}
		switch v := t.RawGetString("elicit").(type) {
		case *glua.LFunction:
			elicit = v
		case *glua.LNilType:
		default:
			L.ArgError(1, "elicit must be a function(request) returning {action=, content=}")
		}
	}
	h.prompter.mu.Lock()
	h.prompter.confirm, h.prompter.ask = confirm, ask
	h.prompter.sample, h.prompter.sampleAnswer = sample, sampleAnswer
	h.prompter.elicit = elicit
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

// sampleFns returns the sampling functions tai.prompter installed (nil
// when none).
func (h *Host) sampleFns() (review, answer *glua.LFunction) {
	h.prompter.mu.Lock()
	defer h.prompter.mu.Unlock()
	return h.prompter.sample, h.prompter.sampleAnswer
}

// sampleQuestion is a SampleQuestion as Lua gets it.
type sampleQuestion struct {
	Server  string           `json:"server"`
	Model   string           `json:"model"`
	Request sampling.Request `json:"request"`
}

// sampleAnswer is a sampling.Result as Lua gets it.
type sampleAnswer struct {
	Model      string              `json:"model"`
	Text       string              `json:"text"`
	ToolCalls  []sampling.ToolCall `json:"tool_calls,omitempty"`
	StopReason string              `json:"stop_reason"`
}

// askSample runs fn (a tai.prompter sampling function) with args made
// Lua values from JSON, as Ask does: at a terminal only, on the host's
// goroutine; it returns fn's first result.
func (p hostPrompter) askSample(ctx context.Context, fn *glua.LFunction, args ...any) (glua.LValue, error) {
	if fn == nil {
		return nil, tool.ErrNoPrompter
	}
	tty, piped := p.h.askingTerminal()
	if tty != nil {
		defer tty.Close()
		if !isTerminal(p.h.opts.Stdout) {
			fmt.Fprintf(tty, "tai: a server asks for sampling; the details are on stdout\n")
		}
	}
	var out glua.LValue
	var aerr error
	err := p.h.onLua(ctx, func() {
		p.h.prompter.granting, p.h.prompter.tty, p.h.prompter.untold = piped, tty, false
		defer func() { p.h.prompter.granting, p.h.prompter.tty = false, nil }()
		L := p.h.L
		vals := make([]glua.LValue, len(args))
		for i, a := range args {
			raw, err := json.Marshal(a)
			if err != nil {
				aerr = err
				return
			}
			if vals[i], err = ToLua(L, json.RawMessage(raw)); err != nil {
				aerr = err
				return
			}
		}
		res, err := p.h.callLua(fn, 1, vals...)
		if err != nil {
			aerr = err
			return
		}
		out = res[0]
		if p.h.prompter.untold {
			aerr = errNoTerminal
		}
	})
	if err != nil {
		return nil, err
	}
	return out, aerr
}

// ReviewSample implements tool.Sampler through tai.prompter's sample
// function: it returns "approve" or "deny", or {action=, prompt=, tools=}.
func (p hostPrompter) ReviewSample(ctx context.Context, q tool.SampleQuestion) (sampling.Decision, error) {
	fn, _ := p.h.sampleFns()
	v, err := p.askSample(ctx, fn, sampleQuestion{Server: q.Server, Model: q.Model, Request: q.Request})
	if err != nil {
		return sampling.Decision{Action: sampling.Deny}, err
	}
	switch v := v.(type) {
	case glua.LString:
		return sampling.Decision{Action: sampling.Action(v)}, nil
	case *glua.LTable:
		d := sampling.Decision{Action: sampling.Action(glua.LVAsString(v.RawGetString("action"))), Tools: glua.LVAsBool(v.RawGetString("tools"))}
		if s, ok := v.RawGetString("prompt").(glua.LString); ok {
			text := string(s)
			d.Prompt = &text
		}
		return d, nil
	}
	return sampling.Decision{Action: sampling.Deny}, nil
}

// ReviewAnswer implements tool.Sampler through tai.prompter's
// sample_answer function, which returns true to send the answer back.
func (p hostPrompter) ReviewAnswer(ctx context.Context, q tool.SampleQuestion, a sampling.Result) (bool, error) {
	_, fn := p.h.sampleFns()
	v, err := p.askSample(ctx, fn, sampleQuestion{Server: q.Server, Model: q.Model, Request: q.Request},
		sampleAnswer{Model: a.Model, Text: a.Text, ToolCalls: a.ToolCalls, StopReason: a.StopReason})
	if err != nil {
		return false, err
	}
	return v == glua.LTrue, nil
}
