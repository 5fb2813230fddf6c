package lua

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/sandbox"
	"tai/mcp"
	"tai/mcp/config"
	"tai/vault/secret"
)

// settableList is a list of strings a script may replace, read from any
// goroutine, so it is guarded; until one is set it is a default.
type settableList struct {
	mu    sync.Mutex
	set   bool
	items []string
}

// getOr returns the list set, or def() until one is.
func (s *settableList) getOr(def func() []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.set {
		return def()
	}
	return slices.Clone(s.items)
}

func (s *settableList) put(items []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set, s.items = true, slices.Clone(items)
}

// denyList is tai.sandbox.deny: the folders no sandbox grants, which the
// normalizer reads.
type denyList struct{ settableList }

// get returns the list (sandbox.DefaultDeny until one is set).
func (d *denyList) get() []string { return d.getOr(sandbox.DefaultDeny) }

// runtimeEnvList is tai.sandbox.runtime_env: the environment variables
// that change what a runtime runs, which the bridge reads.
type runtimeEnvList struct{ settableList }

// get returns the list (sandbox.RuntimeEnv until one is set).
func (r *runtimeEnvList) get() []string { return r.getOr(sandbox.RuntimeEnv) }

// credentialList is tai.vault.credential_words: the words that mark a
// variable's name as a credential's, which the engine and the bridge
// read.
type credentialList struct{ settableList }

// get returns the list (secret.CredentialWords until one is set).
func (c *credentialList) get() []string { return c.getOr(secret.CredentialWords) }

// name reports whether name is a credential's by the list in force.
func (c *credentialList) name(name string) bool { return secret.Credentials(c.get()).Name(name) }

// openSandbox installs tai.sandbox:
//
//	tai.sandbox.available() -> abi | nil, why
//	    the Landlock ABI version the sandbox uses here, or nil and why
//	    there is none (an older kernel, Landlock off, another system, or
//	    $TAI_LANDLOCK_ABI=0): then servers and shell commands run with all
//	    of the person's rights, and an entry that requires the sandbox
//	    does not start
//	tai.sandbox.deny([folders]) -> folders
//	    the folders no sandbox grants: shell commands cannot read them,
//	    and an entry whose sandbox grants one (or a folder holding one)
//	    is refused. With a list, it replaces the list (each folder
//	    absolute or under ~); it returns the list in force. The vault's
//	    folder is never granted, listed or not.
//	tai.sandbox.runtime_env([names]) -> names
//	    the environment variables that change what a runtime or launcher
//	    runs (NODE_OPTIONS, PYTHONPATH, LD_PRELOAD, npm_config_*; a name
//	    ending in * stands for every name it begins): a server entry
//	    setting one is warned about on the consent screen, and one a
//	    model adds with nobody asked is refused. With a list, it replaces
//	    the list; it returns the list in force.
//	tai.sandbox.session_off([off]) -> off
//	    whether the model's shell commands run outside the sandbox for the
//	    rest of this process (its own sessions; served ones keep it): true
//	    lifts it, false puts it back; it returns what is in force. The
//	    REPL's /sandbox off and /sandbox on call it. The lua tool the model
//	    calls runs in a process of its own with only tai.version, tai.json
//	    and tai.toml: it cannot reach it.
func (h *Host) openSandbox(L *glua.LState, tai *glua.LTable) {
	mod, ok := tai.RawGetString("sandbox").(*glua.LTable)
	if !ok {
		mod = L.NewTable()
		tai.RawSetString("sandbox", mod)
	}
	mod.RawSetString("deny", L.NewFunction(h.luaSandboxDeny))
	mod.RawSetString("runtime_env", L.NewFunction(h.luaSandboxRuntimeEnv))
	mod.RawSetString("available", L.NewFunction(luaSandboxAvailable))
	mod.RawSetString("session_off", L.NewFunction(h.luaSandboxSessionOff))
}

func (h *Host) luaSandboxSessionOff(L *glua.LState) int {
	set := L.GetTop() >= 1 && L.Get(1) != glua.LNil
	if !set && h.engine.eng == nil {
		// Nothing lifted it yet: asking builds no engine (the prompt asks).
		L.Push(glua.LFalse)
		return 1
	}
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	if set {
		e.LiftShellSandbox(L.CheckBool(1))
	}
	L.Push(glua.LBool(e.ShellSandboxLifted()))
	return 1
}

func luaSandboxAvailable(L *glua.LState) int {
	abi, err := sandbox.Available()
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LNumber(abi))
	return 1
}

func (h *Host) luaSandboxDeny(L *glua.LState) int {
	return settableLua(L, "tai.sandbox.deny", "folders", &h.deny.settableList, h.deny.get, func(i int, s string) (string, error) {
		if err := mcp.ValidGrant(s); err != nil {
			return "", fmt.Errorf("tai.sandbox.deny[%d] %v", i, err)
		}
		return s, nil
	})
}

func (h *Host) luaSandboxRuntimeEnv(L *glua.LState) int {
	return settableLua(L, "tai.sandbox.runtime_env", "variable names", &h.runtimeEnv.settableList, h.runtimeEnv.get, func(i int, s string) (string, error) {
		if !envPattern(s) {
			return "", fmt.Errorf("tai.sandbox.runtime_env[%d] is not a variable name (letters, digits and _, with * at the end for every name it begins)", i)
		}
		return s, nil
	})
}

// settableLua is a Lua function over list, named name: given a list of
// strings (what they are: items), each checked by check (which returns
// the item as kept), it replaces the list; it returns the list in force,
// get's.
func settableLua(L *glua.LState, name, items string, list *settableList, get func() []string, check func(i int, s string) (string, error)) int {
	if L.GetTop() >= 1 && L.Get(1) != glua.LNil {
		t := L.CheckTable(1)
		keys := 0
		t.ForEach(func(glua.LValue, glua.LValue) { keys++ })
		if keys != t.Len() {
			L.ArgError(1, name+" takes a list of "+items)
		}
		out := make([]string, 0, keys)
		for i := 1; i <= keys; i++ {
			s, ok := t.RawGetInt(i).(glua.LString)
			if !ok {
				L.ArgError(1, fmt.Sprintf("%s[%d] is a %s, not a string", name, i, t.RawGetInt(i).Type()))
			}
			v, err := check(i, string(s))
			if err != nil {
				L.ArgError(1, err.Error())
			}
			out = append(out, v)
		}
		list.put(out)
	}
	out := NewArray(L)
	for _, v := range get() {
		out.Append(glua.LString(v))
	}
	L.Push(out)
	return 1
}

// envPattern reports a variable name, or the start of one followed by *.
func envPattern(s string) bool {
	s = strings.TrimSuffix(s, "*")
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// sandboxDenied is what no sandbox grant may reach: the vault's folder
// (when the vault is open) and tai.sandbox.deny.
func (h *Host) sandboxDenied() []config.Denied {
	var out []config.Denied
	if h.opts.Vault != nil {
		if store, err := h.Vault(); err == nil && store.Path() != "" {
			out = append(out, config.Denied{Path: filepath.Dir(store.Path()), Why: "the vault's folder"})
		}
	}
	for _, p := range h.deny.get() {
		out = append(out, config.Denied{Path: p, Why: config.DenyListed})
	}
	return out
}
