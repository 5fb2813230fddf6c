package lua

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// Mode says what a Run does after init.lua.
type Mode string

// The modes main.lua dispatches on.
const (
	ModeREPL   Mode = "repl"   // the interactive loop
	ModeScript Mode = "script" // run Invocation.Script with Args
	ModeEval   Mode = "eval"   // run Invocation.Chunk with Args
	ModePrompt Mode = "prompt" // one agent turn on Invocation.Prompt (tai -p)
	ModeServe  Mode = "serve"  // the MCP server for Invocation.Serve (tai --serve-mcp)
)

// Invocation is what the command line asked for.
type Invocation struct {
	Mode   Mode
	Script string       // ModeScript: the file to run; arg[0]
	Chunk  string       // ModeEval: the Lua text of -e
	Args   []string     // arg[1..n] and the chunk's ...
	Prompt string       // ModePrompt: the message of the turn
	Serve  ServeRequest // ModeServe: key, port and bind address
	// Continue (tai -c) resumes the last conversation kept in the working
	// directory, in the REPL and with ModePrompt.
	Continue bool
}

// Exit statuses returned by Run.
const (
	ExitOK          = 0
	ExitError       = 1   // an uncaught Lua error
	ExitUsage       = 2   // bad command-line usage
	ExitInterrupted = 130 // stopped by Ctrl-C
)

// Run hands the invocation to the "tai.main" module (stdlib/main.lua unless the
// user overrides it), which runs init.lua and then the REPL, the script or
// the chunk. It returns the process exit status; errors, with their Lua
// traceback, go to Stderr. SIGINT stops the running script (or, in the
// REPL, the running command) while Run is active; a second SIGINT within
// interruptGrace, while the first has not stopped it (a Go builtin that
// does not watch for Ctrl-C, such as a pathological string.find), exits
// the process with ExitInterrupted.
func (h *Host) Run(ctx context.Context, inv Invocation) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	stop := make(chan struct{})
	defer close(stop)
	go h.watchInterrupts(sigs, stop)

	status, err := h.run(ctx, inv)
	switch {
	case errors.Is(err, ErrInterrupted):
		h.tell(h.L, "error", "tai: interrupted")
		return ExitInterrupted
	case err != nil:
		h.tell(h.L, "error", fmt.Sprintf("tai: %v", err))
		return ExitError
	}
	return status
}

// interruptGrace is how soon a second Ctrl-C must follow the first to exit.
const interruptGrace = 2 * time.Second

// watchInterrupts turns each signal from sigs into Interrupt until stop is
// closed. When a signal comes within interruptGrace of the previous one
// and that one found nothing to stop, or the run it stopped is still going,
// it says so on Stderr and exits with ExitInterrupted.
func (h *Host) watchInterrupts(sigs <-chan os.Signal, stop <-chan struct{}) {
	var last time.Time
	var lastID uint64
	var lastHit bool
	for {
		select {
		case <-sigs:
			now := time.Now()
			if !last.IsZero() && now.Sub(last) < interruptGrace && (!lastHit || h.running(lastID)) {
				// Written, not told: the process ends on the next line,
				// and tai.notify waits for the state a run holds.
				fmt.Fprintln(h.opts.Stderr, "tai: interrupted again; exiting")
				h.exit(ExitInterrupted)
				return
			}
			last = now
			lastID, lastHit = h.interrupt()
		case <-stop:
			return
		}
	}
}

func (h *Host) run(ctx context.Context, inv Invocation) (int, error) {
	L := h.L
	L.SetContext(ctx)
	defer L.RemoveContext()

	var mainFn glua.LValue
	if err := L.CallByParam(glua.P{Fn: L.GetGlobal("require"), NRet: 1, Protect: true}, glua.LString("tai.main")); err != nil {
		return ExitError, luaError(err)
	}
	mainFn = L.Get(-1)
	L.Pop(1)
	if _, ok := mainFn.(*glua.LFunction); !ok {
		return ExitError, fmt.Errorf("module main returned a %s, want a function(invocation)", mainFn.Type())
	}

	t := L.NewTable()
	t.RawSetString("mode", glua.LString(inv.Mode))
	t.RawSetString("script", glua.LString(inv.Script))
	t.RawSetString("chunk", glua.LString(inv.Chunk))
	t.RawSetString("prompt", glua.LString(inv.Prompt))
	t.RawSetString("continue", glua.LBool(inv.Continue))
	t.RawSetString("profile", glua.LString(h.engine.profileFlag))
	args := L.NewTable()
	for _, a := range inv.Args {
		args.Append(glua.LString(a))
	}
	t.RawSetString("args", args)
	if inv.Mode == ModeServe {
		sv := L.NewTable()
		sv.RawSetString("key", glua.LString(inv.Serve.Key))
		sv.RawSetString("port", glua.LNumber(inv.Serve.Port))
		sv.RawSetString("bind", glua.LString(inv.Serve.Bind))
		t.RawSetString("serve", sv)
	}
	if p := h.InitFile(); p != "" {
		t.RawSetString("init", glua.LString(p))
	}

	var results []any
	var err error
	if inv.Mode == ModeREPL {
		// Ctrl-C in the REPL stops only the command that runs under
		// tai.term.protect, never the loop itself.
		results, err = h.callPlain(ctx, mainFn, t)
	} else {
		results, err = h.Call(ctx, mainFn, t)
	}
	if err != nil {
		return ExitError, err
	}
	if len(results) > 0 {
		if n, ok := results[0].(int64); ok {
			return int(n), nil
		}
	}
	return ExitOK, nil
}

// callPlain calls fn under ctx without making it interruptible.
func (h *Host) callPlain(ctx context.Context, fn glua.LValue, args ...glua.LValue) (_ []any, err error) {
	L := h.L
	L.SetContext(ctx)
	base := L.GetTop()
	defer recoverLua(L, base, &err)
	if err := L.CallByParam(glua.P{Fn: fn, NRet: 1, Protect: true, Handler: tracebackHandler(L, 0)}, args...); err != nil {
		return nil, luaError(err)
	}
	v, err := FromLua(L, L.Get(-1))
	L.SetTop(base)
	if err != nil {
		return nil, err
	}
	return []any{v}, nil
}
