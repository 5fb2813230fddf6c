package lua

import (
	"fmt"
	"os"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/llm"
)

// hostEngine is the engine a host builds on first use (see Engine), the
// host's own session of it, and what was asked of it before it was built.
type hostEngine struct {
	profileFlag string // Options.Profile as given: empty means the current one
	eng         *engine.Engine
	sess        *engine.Session // the host's own session, built with eng
	passEnv     []string        // tai.pass_env before the engine was built
}

// Engine returns the host's engine, building it on first use: it opens the
// vault, resolves the profile (Options.Profile, else the current one),
// registers the native tools, the lua tool (backed by RunSandboxed) and the
// tools added so far with tai.tool, and makes the host's session (see
// Session). Nothing is built before a binding
// needs a model or a tool, so start-up does no engine, vault or network
// work. Call it only from the goroutine that owns the host.
func (h *Host) Engine() (*engine.Engine, error) {
	if h.engine.eng != nil {
		return h.engine.eng, nil
	}
	store, err := h.Vault()
	if err != nil {
		return nil, err
	}
	var o engine.Options
	if h.opts.Engine != nil {
		o = *h.opts.Engine
	}
	o.Mode = h.opts.Mode
	o.Profile = h.engine.profileFlag
	o.Prompter = hostPrompter{h}
	o.Client = h.clientOptions()
	o.PassEnv = append(append([]string(nil), o.PassEnv...), h.engine.passEnv...)
	o.SandboxDeny = h.deny.get
	o.CredentialWords = h.credentials.get
	if o.LuaRunner == nil {
		o.LuaRunner = RunSandboxed
	}
	e, err := engine.New(store, &o)
	if err != nil {
		return nil, err
	}
	for _, t := range h.tools.pending {
		if err := e.Tools().Add(t); err != nil {
			return nil, fmt.Errorf("tai.tool %s: %w", t.Name, err)
		}
	}
	s, err := e.NewSession(nil)
	if err != nil {
		return nil, err
	}
	h.tools.pending, h.engine.passEnv = nil, nil
	h.engine.eng, h.engine.sess = e, s
	if h.bridge, err = h.newBridge(e); err != nil {
		return nil, err
	}
	return e, nil
}

// Session returns the host's own session of the engine, building both on
// first use: the REPL, tai -p, scripts, tai.call, tai.complete and tai.chat
// without a profile option run in it, with the host's approval mode and
// prompter. Call it only from the goroutine that owns the host.
func (h *Host) Session() (*engine.Session, error) {
	if _, err := h.Engine(); err != nil {
		return nil, err
	}
	return h.engine.sess, nil
}

// getenv is the engine options' Getenv, else os.Getenv.
func (h *Host) getenv() func(string) string {
	if o := h.opts.Engine; o != nil && o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// openEngine installs what is set on the engine itself:
//
//	tai.pass_env(name, …)   shell commands may see these credential-looking variables
//	tai.mode   the approval mode: "interactive", "auto" or "yolo"
func (h *Host) openEngine(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("pass_env", L.NewFunction(h.luaPassEnv))
	tai.RawSetString("mode", glua.LString(h.opts.Mode.String()))
}

// luaPassEnv is tai.pass_env(name, …): the named variables reach shell
// commands although their names look like credentials. It does not build
// the engine, so init.lua can call it without opening the vault.
func (h *Host) luaPassEnv(L *glua.LState) int {
	var names []string
	for i := 1; i <= L.GetTop(); i++ {
		n := L.CheckString(i)
		if err := llm.ValidPassEnv(n); err != nil {
			L.ArgError(i, err.Error())
		}
		names = append(names, n)
	}
	if h.engine.eng != nil {
		if err := h.engine.eng.PassEnv(names...); err != nil {
			return fail(L, err.Error())
		}
	} else {
		h.engine.passEnv = append(h.engine.passEnv, names...)
	}
	L.Push(glua.LTrue)
	return 1
}
