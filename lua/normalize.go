package lua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/bridge"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/github"
	"tai/vault"
)

// rulesTimeout bounds one run of the repair rules, so a user's rule that
// loops forever fails instead of hanging the paste.
const rulesTimeout = 5 * time.Second

// rulesState runs normalize.lua in a Lua state of its own, built on first
// use and kept for the life of the host: the module is loaded and compiled
// once, and each Normalize call only converts the document and calls
// M:normalize. The mutex makes the Rules value safe to call from any
// goroutine (the bridge's tools run on the agent's).
type rulesState struct {
	h *Host
	moduleState
}

// moduleState is a Lua state of its own running one stdlib module (the
// normalizer's rules, the resolver): built on first use, kept for the
// host's life; mu serializes its use.
type moduleState struct {
	mu  sync.Mutex
	L   *glua.LState
	mod *glua.LTable
	err error
}

// moduleStates are the states of their own that run stdlib modules for Go
// callers, each built on first use.
type moduleStates struct {
	rulesOnce   sync.Once
	rules       *rulesState // normalize.lua's (see NormalizeRules)
	resolveOnce sync.Once
	resolve     *resolveState // resolve.lua's (see Resolver)
}

// NormalizeRules returns the repair rules of stdlib/normalize.lua (or the
// user's lua/normalize.lua, which the module loader finds first) as a
// config.Rules value. The rules run in a state with the standard library
// only, not the tai module.
func (h *Host) NormalizeRules() config.Rules {
	h.modules.rulesOnce.Do(func() { h.modules.rules = &rulesState{h: h} })
	return h.modules.rules.run
}

// Normalizer returns config.Normalize with the Lua repair rules and the
// vault's stored servers (for a bare name) filled in: what
// tai.mcp.normalize calls, for Go callers such as the bridge. It may be
// called from any goroutine.
func (h *Host) Normalizer() func(text, name string) ([]mcp.Entry, []config.Note, error) {
	rules := h.NormalizeRules()
	return func(text, name string) ([]mcp.Entry, []config.Note, error) {
		return config.Normalize(text, &config.Options{Name: name, Rules: rules, Stored: h.storedServer, Denied: h.sandboxDenied(), Hints: configHints})
	}
}

// storedServer looks a server up in the vault by name, for a paste that is
// a bare word.
func (h *Host) storedServer(name string) (mcp.Entry, bool) {
	if h.opts.Vault == nil {
		return mcp.Entry{}, false
	}
	store, err := h.Vault()
	if err != nil {
		return mcp.Entry{}, false
	}
	srv, err := store.ServerGet(name)
	if err != nil {
		return mcp.Entry{}, false
	}
	e := bridge.EntryOf(srv)
	profile := h.opts.Profile
	if h.engine.sess != nil {
		profile = h.engine.sess.Profile().Name
	}
	if profiles, err := store.ServerProfiles(name); err == nil {
		e.Enabled = profiles[profile]
	}
	return e, true
}

// ExpandLookup returns the lookup ${…} references resolve through at
// spawn and connect time: the project-folder variables (the engine's
// folder), then the process environment, then vault secrets. Every value
// it answers from the environment is registered with the vault for
// redaction for the rest of the run (vault secrets are redacted already).
func (h *Host) ExpandLookup() func(name string) (string, bool) {
	getenv := func(name string) (string, bool) { return os.LookupEnv(name) }
	dir := ""
	if h.opts.Engine != nil {
		dir = h.opts.Engine.Dir
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	var store *vault.Store
	if h.opts.Vault != nil {
		store, _ = h.Vault()
	}
	env := func(name string) (string, bool) {
		v, ok := getenv(name)
		if ok && v != "" && store != nil {
			store.AddRedaction(name, v)
		}
		return v, ok
	}
	secret := func(name string) (string, bool) {
		if store == nil {
			return "", false
		}
		v, _, err := store.SecretGet(name)
		if err != nil {
			return "", false
		}
		return v, true
	}
	return config.Chain(config.FolderVars(dir), env, secret)
}

// run is the config.Rules value.
func (r *rulesState) run(doc *config.Document) (*config.Repaired, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.L == nil && r.err == nil {
		r.err = r.open()
	}
	if r.err != nil {
		return nil, r.err
	}
	L := r.L
	ctx, cancel := context.WithTimeout(context.Background(), rulesTimeout)
	defer cancel()
	L.SetContext(ctx)
	defer L.RemoveContext()
	base := L.GetTop()
	defer L.SetTop(base)

	order := L.NewTable()
	value, err := docToLua(L, doc.Value, order, 0)
	if err != nil {
		return nil, err
	}
	d := L.NewTable()
	d.RawSetString("value", value)
	d.RawSetString("format", glua.LString(doc.Format))
	d.RawSetString("goos", glua.LString(doc.GOOS))
	if doc.Name != "" {
		d.RawSetString("name", glua.LString(doc.Name))
	}
	d.RawSetString("order", order)
	fn := L.GetField(r.mod, "normalize")
	if fn.Type() != glua.LTFunction {
		return nil, errors.New("normalize.lua: the module has no normalize function")
	}
	err = func() (err error) {
		defer recoverLua(L, base, &err)
		return L.CallByParam(glua.P{Fn: fn, NRet: 2, Protect: true}, r.mod, d)
	}()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("normalize.lua: the rules ran longer than %s and were stopped", rulesTimeout)
		}
		return nil, fmt.Errorf("normalize.lua: %w", luaError(err))
	}
	entries, err := FromLua(L, L.Get(base+1))
	if err != nil {
		return nil, fmt.Errorf("normalize.lua: entries: %w", err)
	}
	notes, err := FromLua(L, L.Get(base+2))
	if err != nil {
		return nil, fmt.Errorf("normalize.lua: notes: %w", err)
	}
	rep := &config.Repaired{}
	list, _ := entries.([]any)
	if m, ok := entries.(map[string]any); ok && len(m) > 0 {
		return nil, errors.New("normalize.lua: normalize must return a list of entries")
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("normalize.lua: entry %d is a %T, not a table", i+1, e)
		}
		rep.Entries = append(rep.Entries, m)
	}
	rep.Notes = notesFrom(notes)
	return rep, nil
}

// open builds the rules state and loads the normalize module through the
// host's loader (user folder first, then the embedded stdlib).
func (r *rulesState) open() error {
	// the rules see one tai function: the shell word splitter M.split calls
	setup := func(L *glua.LState) {
		mcpMod := L.NewTable()
		mcpMod.RawSetString("split", L.NewFunction(mcpSplit(func(L *glua.LState) *glua.LTable { return L.NewTable() })))
		taiMod := L.NewTable()
		taiMod.RawSetString("mcp", mcpMod)
		L.SetGlobal("tai", taiMod)
	}
	L, mod, err := r.h.loadModule("normalize", setup,
		lib{glua.LoadLibName, glua.OpenPackage},
		lib{glua.BaseLibName, glua.OpenBase},
		lib{glua.TabLibName, glua.OpenTable},
		lib{glua.StringLibName, glua.OpenString},
		lib{glua.MathLibName, glua.OpenMath},
		lib{glua.OsLibName, glua.OpenOs},
		lib{glua.IoLibName, glua.OpenIo},
	)
	r.L, r.mod = L, mod
	return err
}

// loadModule builds a state with libs (and what setup adds) and requires
// tai.module (module.lua) through the host's loader: the user's folder first,
// then the embedded stdlib. The module must return a table.
func (h *Host) loadModule(module string, setup func(*glua.LState), libs ...lib) (*glua.LState, *glua.LTable, error) {
	L := glua.NewState(glua.Options{SkipOpenLibs: true})
	openLibs(L, libs...)
	installMarkers(L)
	if setup != nil {
		setup(L)
	}
	loaders, ok := L.GetField(L.Get(glua.RegistryIndex), "_LOADERS").(*glua.LTable)
	if !ok {
		L.Close()
		return nil, nil, fmt.Errorf("%s.lua: package library not opened", module)
	}
	loaders.Insert(2, L.NewFunction(h.search))
	base := L.GetTop()
	err := func() (err error) {
		defer recoverLua(L, base, &err)
		return L.CallByParam(glua.P{Fn: L.GetGlobal("require"), NRet: 1, Protect: true}, glua.LString("tai."+module))
	}()
	if err != nil {
		L.Close()
		return nil, nil, fmt.Errorf("%s.lua: %w", module, luaError(err))
	}
	mod, ok := L.Get(-1).(*glua.LTable)
	L.Pop(1)
	if !ok {
		L.Close()
		return nil, nil, fmt.Errorf("%s.lua: the module must return a table", module)
	}
	return L, mod, nil
}

// close releases the rules state (nothing when it was never built).
func (r *rulesState) close() {
	if r != nil {
		r.moduleState.close()
	}
}

// close releases the state.
func (m *moduleState) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.L != nil {
		m.L.Close()
		m.L = nil
	}
}

// docToLua converts a parsed document to Lua, recording each object's keys
// in source order in order[table]. JSON null becomes nil (the key is
// absent).
func docToLua(L *glua.LState, v any, order *glua.LTable, depth int) (glua.LValue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("the pasted config is nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return glua.LNil, nil
	case *config.Object:
		t := NewObject(L)
		keys := L.CreateTable(len(x.Keys), 0)
		for _, k := range x.Keys {
			e, err := docToLua(L, x.Values[k], order, depth+1)
			if err != nil {
				return nil, err
			}
			t.RawSetString(k, e)
			keys.Append(glua.LString(k))
		}
		order.RawSet(t, keys)
		return t, nil
	case []any:
		t := NewArray(L)
		for _, e := range x {
			lv, err := docToLua(L, e, order, depth+1)
			if err != nil {
				return nil, err
			}
			if lv == glua.LNil {
				lv = Null(L)
			}
			t.Append(lv)
		}
		return t, nil
	case string:
		return glua.LString(x), nil
	case bool:
		return glua.LBool(x), nil
	case int64:
		return glua.LNumber(x), nil
	case float64:
		return glua.LNumber(x), nil
	}
	return nil, fmt.Errorf("unexpected value %T in the parsed config", v)
}

// openNormalize installs tai.mcp.normalize, tai.mcp.expand and
// tai.mcp.split:
//
//	tai.mcp.normalize(text [, name]) -> entries, notes | nil, err
//	    entries: {{name=, transport=, command=, args=, env=, cwd=, url=,
//	               headers=, allow=, deny=, enabled=, source=}, …}
//	    notes:   {{server=, level="info"|"warn"|"refused", text=}, …}
//	tai.mcp.expand(entry) -> entry, missing
//	    missing: {"NAME", …}, the ${…} names nothing resolved (their
//	    literal stays in the entry)
//	tai.mcp.split(text) -> words | nil, err
//	    text split into words as a POSIX shell would (config.SplitWords)
//
// normalize stores and spawns nothing; name names a bare entry. expand
// resolves through the project folder, the environment, then vault
// secrets, and registers each value from the environment for redaction.
func (h *Host) openNormalize(L *glua.LState, tai *glua.LTable) {
	mod, ok := tai.RawGetString("mcp").(*glua.LTable)
	if !ok {
		mod = L.NewTable()
		tai.RawSetString("mcp", mod)
	}
	mod.RawSetString("normalize", L.NewFunction(h.mcpNormalize))
	mod.RawSetString("expand", L.NewFunction(h.mcpExpand))
	mod.RawSetString("split", L.NewFunction(mcpSplit(NewArray)))
	mod.RawSetString("resolve", L.NewFunction(h.mcpResolve))
	mod.RawSetString("github", L.NewFunction(mcpGitHub))
}

// mcpGitHub is tai.mcp.github(text) -> {owner=, repo=, ref=, path=, url=,
// id=} | nil [, err]: the repository a pasted GitHub URL names; nil alone
// when text is not a GitHub URL, nil and why when it is one that names no
// repository.
func mcpGitHub(L *glua.LState) int {
	text := L.CheckString(1)
	if !github.IsSource(text) {
		L.Push(glua.LNil)
		return 1
	}
	src, err := github.Parse(text)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(sourceToLua(L, src))
	return 1
}

// sourceToLua converts a repository source to {owner=, repo=, ref=,
// path=, url=, id=}.
func sourceToLua(L *glua.LState, src github.Source) *glua.LTable {
	t := L.CreateTable(0, 6)
	t.RawSetString("owner", glua.LString(src.Owner))
	t.RawSetString("repo", glua.LString(src.Repo))
	t.RawSetString("ref", glua.LString(src.Ref))
	t.RawSetString("path", glua.LString(src.Path))
	t.RawSetString("url", glua.LString(src.String()))
	t.RawSetString("id", glua.LString(src.ID()))
	return t
}

// mcpResolve is tai.mcp.resolve(url) -> {entry=, notes=, pass=, file=,
// line=, via=, origin=} | nil, err [, servers]: what the GitHub resolver
// makes of a repository, neither verified nor stored. servers, when the
// repository offers several, lists them as {name=, url=, way=}: each url
// resolves one.
func (h *Host) mcpResolve(L *glua.LState) int {
	ctx := luaContext(L)
	if sess, err := h.Session(); err == nil {
		// the subagent pass forks this session when the files name no
		// server
		ctx = engine.WithSession(ctx, sess)
	}
	res, err := h.Resolver()(ctx, L.CheckString(1))
	if err != nil {
		msg := err.Error()
		if h.opts.Vault != nil {
			if store, serr := h.Vault(); serr == nil {
				msg = store.Redact(msg)
			}
		}
		var several *github.SeveralError
		if errors.As(err, &several) {
			// the third value lists the servers, for the person to pick one
			list := L.CreateTable(len(several.Servers), 0)
			for _, s := range several.Servers {
				t := L.CreateTable(0, 3)
				t.RawSetString("name", glua.LString(s.Name))
				t.RawSetString("url", glua.LString(s.URL))
				t.RawSetString("way", glua.LString(s.Way))
				list.Append(t)
			}
			L.Push(glua.LNil)
			L.Push(glua.LString(msg))
			L.Push(list)
			return 3
		}
		return fail(L, msg)
	}
	e, err := entryToLua(L, res.Entry)
	if err != nil {
		return fail(L, err.Error())
	}
	t := L.CreateTable(0, 7)
	t.RawSetString("entry", e)
	t.RawSetString("notes", notesToLua(L, res.Notes))
	t.RawSetString("pass", glua.LString(res.Pass))
	t.RawSetString("file", glua.LString(res.File))
	t.RawSetString("line", glua.LNumber(res.Line))
	t.RawSetString("via", glua.LString(res.Via))
	t.RawSetString("origin", glua.LString(res.Origin()))
	L.Push(t)
	return 1
}

// mcpSplit returns tai.mcp.split, making its list of words with list (the
// rules state has no array metatable, so it passes a plain table maker).
func mcpSplit(list func(*glua.LState) *glua.LTable) glua.LGFunction {
	return func(L *glua.LState) int {
		words, err := config.SplitWords(L.CheckString(1))
		if err != nil {
			return fail(L, err.Error())
		}
		out := list(L)
		for _, w := range words {
			out.Append(glua.LString(w))
		}
		L.Push(out)
		return 1
	}
}

func (h *Host) mcpNormalize(L *glua.LState) int {
	text := L.CheckString(1)
	name := L.OptString(2, "")
	entries, notes, err := h.Normalizer()(text, name)
	if err != nil {
		return fail(L, err.Error())
	}
	out := NewArray(L)
	for _, e := range entries {
		v, err := entryToLua(L, e)
		if err != nil {
			return fail(L, err.Error())
		}
		out.Append(v)
	}
	L.Push(out)
	L.Push(notesToLua(L, notes))
	return 2
}

// notesToLua converts notes to a list of {server=, level=, text=}.
func notesToLua(L *glua.LState, notes []config.Note) *glua.LTable {
	nt := NewArray(L)
	for _, n := range notes {
		t := L.CreateTable(0, 3)
		t.RawSetString("server", glua.LString(n.Server))
		t.RawSetString("level", glua.LString(n.Level))
		t.RawSetString("text", glua.LString(n.Text))
		nt.Append(t)
	}
	return nt
}

func (h *Host) mcpExpand(L *glua.LState) int {
	e := checkEntry(L, 1)
	out, missing := config.Expand(e, h.ExpandLookup())
	v, err := entryToLua(L, out)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	m := NewArray(L)
	for _, name := range missing {
		m.Append(glua.LString(name))
	}
	L.Push(v)
	L.Push(m)
	return 2
}

// entryToLua converts an entry to a table with its JSON field names.
func entryToLua(L *glua.LState, e mcp.Entry) (glua.LValue, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return ToLua(L, m)
}

// checkEntry reads argument n as a canonical entry (raising on a field
// that is not one, or a value of the wrong kind). transport may be left
// out when only one of command and url is given.
func checkEntry(L *glua.LState, n int) mcp.Entry {
	fields := argsTable(L, n, "entry")
	for _, k := range entryLists {
		if m, ok := fields[k].(map[string]any); ok && len(m) == 0 {
			fields[k] = []any{}
		}
	}
	for _, k := range entryMaps {
		if a, ok := fields[k].([]any); ok && len(a) == 0 {
			fields[k] = map[string]any{}
		}
	}
	if sb, ok := fields["sandbox"].(map[string]any); ok {
		for _, k := range []string{"read", "write"} {
			if m, ok := sb[k].(map[string]any); ok && len(m) == 0 {
				sb[k] = []any{}
			}
		}
	}
	if fields["transport"] == nil {
		_, hasCommand := fields["command"]
		_, hasURL := fields["url"]
		switch {
		case hasCommand && !hasURL:
			fields["transport"] = mcp.TransportStdio
		case hasURL && !hasCommand:
			fields["transport"] = mcp.TransportHTTP
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	var entry mcp.Entry
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entry); err != nil {
		L.ArgError(n, "entry fields are "+entryFields+" ("+err.Error()+")")
	}
	return entry
}

// configHints word what a person does after a paste the normalizer cannot
// take as it is, in the REPL's commands and tai.mcp's functions.
var configHints = config.Hints{
	Resolve: func(url string) string {
		return "/mcp add " + url + " (or tai.mcp.resolve) finds its server entry"
	},
	ClientSecret: func() string { return "log in with /mcp login SERVER --client-secret ${NAME}" },
}
