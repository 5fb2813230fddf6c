package lua

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"
	"weak"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
	"tai/mcp"
	"tai/mcp/config"
	"tai/vault"
)

const mcpClientType = "tai.mcp.client"

// mcpHandle is the Lua side of one session opened by tai.mcp.connect.
type mcpHandle struct {
	c      *mcp.Client
	name   string
	entry  mcp.Entry           // its allow and deny lists decide what is offered
	redact func(string) string // the vault's Redact, or the identity
	// redactor returns the redaction for one whole result: one look at the
	// vault's secrets however many strings the result holds.
	redactor func() (func(string) string, error)
	// log keeps what the server logs (client:log).
	log *mcp.ServerLog
	// await, when the script answers the server's elicitations
	// (on_elicit), runs a call so that the answer can use the state
	// (Host.Await); nil runs it directly.
	await func(func())
}

// fail returns nil, msg to Lua with every known secret in msg redacted.
func (m *mcpHandle) fail(L *glua.LState, msg string) int {
	return fail(L, m.redact(msg))
}

// toLua converts a JSON document the server sent to Lua in one pass,
// redacting every string in it (keys included) with one look at the
// vault's secrets.
func (m *mcpHandle) toLua(L *glua.LState, raw json.RawMessage) (glua.LValue, error) {
	redact, err := m.redactor()
	if err != nil {
		return nil, err
	}
	return decodeJSON(L, raw, redact)
}

// clientSet remembers the open sessions weakly: Close closes the ones
// still alive, and a session the script dropped is closed when the garbage
// collector frees its handle.
type clientSet struct {
	mu   sync.Mutex
	list []weak.Pointer[mcpHandle]
}

func (s *clientSet) add(h *mcpHandle) {
	runtime.AddCleanup(h, func(c *mcp.Client) { c.Close() }, h.c)
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.list[:0]
	for _, p := range s.list {
		if p.Value() != nil {
			live = append(live, p)
		}
	}
	s.list = append(live, weak.Make(h))
}

func (s *clientSet) closeAll() {
	s.mu.Lock()
	list := s.list
	s.list = nil
	s.mu.Unlock()
	for _, p := range list {
		if h := p.Value(); h != nil {
			h.c.Close()
		}
	}
}

// openMCP installs tai.mcp.connect:
//
//	tai.mcp.connect(entry [, opts]) -> client | nil, err
//	    entry: {name=, transport="stdio"|"http", command=, args=, env=, cwd=,
//	            url=, headers=, allow=, deny=, enabled=, source=}
//	client:tools() -> {{name=, description=, inputSchema=, …}, …} | nil, err
//	    (a tool too deeply nested to convert: {name=, description=,
//	    unreadable=why})
//	client:call(tool [, args]) -> {content={…}, isError=bool, …} | nil, err
//
// opts.on_elicit, a function(request) -> {action=, content=}, answers the
// server's elicitation/create requests itself (see elicit.go for the
// request's table), and makes tai declare the capability; without it the
// session declares none.
//
//	client:ping() -> true | nil, err
//	client:close()
//	client:info() -> {name=, version=, protocol=}
//	client:log([level]) -> {entries={…}, kept=, dropped=, level=, set=, note=} | nil, err
//	    (what the server logged, redacted; with level, asks the server
//	    for it first, as tai.mcp.log does)
//
// transport may be left out when only one of command (stdio) and url
// (http) is given. tools() lists only what allow and deny let through and
// call refuses the rest. A JSON-RPC error from the server, a timeout or a
// closed session is nil, message; a tool that ran and failed is a result
// with isError. Every string of a result and every message has the vault's
// secrets redacted. The session is closed by client:close(), when the host
// closes, or when the garbage collector frees a client the script dropped.
func (h *Host) openMCP(L *glua.LState, tai *glua.LTable) {
	mt := L.NewTypeMetatable(mcpClientType)
	L.SetField(mt, "__index", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"tools": mcpTools,
		"call":  mcpCall,
		"ping":  mcpPing,
		"close": mcpClose,
		"info":  mcpInfo,
		"log":   mcpClientLog,
	}))
	L.SetField(mt, "__tostring", L.NewFunction(func(L *glua.LState) int {
		c := checkClient(L)
		L.Push(glua.LString("mcp client " + c.name))
		return 1
	}))
	mod, ok := tai.RawGetString("mcp").(*glua.LTable)
	if !ok {
		mod = L.NewTable()
		tai.RawSetString("mcp", mod)
	}
	mod.RawSetString("connect", L.NewFunction(h.mcpConnect))
	// A script sets it to a function to answer registered servers'
	// elicitations itself (see elicit.go); false: the person answers.
	mod.RawSetString("on_elicit", glua.LFalse)
}

// entryFields are the fields of a canonical entry, for the error on a typo.
const entryFields = "name, transport, command, args, env, cwd, url, headers, oauth, allow, deny, sandbox, enabled, source"

// entryLists are the entry fields that hold JSON arrays and entryMaps those
// that hold objects: an empty Lua table, which has no JSON shape of its
// own, is taken as whichever the field needs.
var (
	entryLists = []string{"args", "allow", "deny"}
	entryMaps  = []string{"env", "headers"}
)

func (h *Host) mcpConnect(L *glua.LState) int {
	entry := checkEntry(L, 1)
	var onElicit *glua.LFunction
	if opts := L.OptTable(2, nil); opts != nil {
		switch v := opts.RawGetString("on_elicit").(type) {
		case *glua.LFunction:
			onElicit = v
		case *glua.LNilType:
		default:
			L.ArgError(2, "on_elicit must be a function(request) returning {action=, content=}")
		}
	}
	probe, _ := config.Expand(entry, func(string) (string, bool) { return "", false })
	if err := probe.Validate(); err != nil && !strings.Contains(probe.URL, "${") {
		L.ArgError(1, err.Error())
	}
	redact := func(s string) string { return s }
	redactor := func() (func(string) string, error) { return redact, nil }
	vaultPath := ""
	if h.opts.Vault != nil {
		// Results are redacted with the vault's secrets; a vault that
		// cannot be opened cannot redact, so nothing is connected.
		store, err := h.Vault()
		if err != nil {
			return fail(L, "tai.mcp.connect: the vault's secrets are needed to redact what the server sends: "+err.Error())
		}
		redact, redactor = store.Redact, storeRedactor(store)
		vaultPath = store.Path()
	}
	entry, missing := config.Expand(entry, h.ExpandLookup())
	if err := config.MissingError(entry.Label(), missing); err != nil {
		return fail(L, redact(err.Error()))
	}
	if err := entry.Validate(); err != nil {
		return fail(L, redact(err.Error()))
	}
	// A stdio server runs in its sandbox, as the bridge's do.
	policy := bridge.ServerPolicy(entry, nil, "", vaultPath, h.deny.get())
	if err := bridge.RequireSandbox(entry, policy); err != nil {
		return fail(L, redact(err.Error()))
	}
	log := mcp.NewServerLog(redact)
	copts := h.mcpClientOptions(h.opts.Version, func(msg string) { h.mcpWarning(redact(msg)) })
	copts.Redact = redact
	copts.Notifications = map[string]mcp.NotificationHandler{mcp.MethodLogMessage: log.Notify}
	handle := &mcpHandle{name: entry.Label(), entry: entry, redact: redact, redactor: redactor, log: log}
	if onElicit != nil {
		copts.Requests = map[string]mcp.RequestHandler{mcp.MethodElicitationCreate: h.connectElicit(entry.Label(), onElicit)}
		handle.await = h.Await
	}
	c, err := mcp.Connect(luaContext(L), entry, bridge.Sandboxed(copts, entry, policy))
	if err != nil {
		return fail(L, redact(err.Error()))
	}
	handle.c = c
	h.clients.add(handle)
	L.Push(clientValue(L, handle))
	return 1
}

// storeRedactor is a session's redactor when a vault backs the host: the
// vault's current snapshot, failing closed when it cannot be had.
func storeRedactor(store *vault.Store) func() (func(string) string, error) {
	return func() (func(string) string, error) {
		red, err := store.Redactor()
		if err != nil {
			return nil, err
		}
		return red.Func(), nil
	}
}

// clientValue is the Lua value of an open session: userdata with the
// client methods.
func clientValue(L *glua.LState, m *mcpHandle) *glua.LUserData {
	ud := L.NewUserData()
	ud.Value = m
	L.SetMetatable(ud, L.GetTypeMetatable(mcpClientType))
	return ud
}

func checkClient(L *glua.LState) *mcpHandle {
	ud := L.CheckUserData(1)
	c, ok := ud.Value.(*mcpHandle)
	if !ok {
		L.ArgError(1, "mcp client expected (call methods with ':')")
	}
	return c
}

func mcpTools(L *glua.LState) int {
	c := checkClient(L)
	tools, err := c.c.Tools(luaContext(L))
	if err != nil {
		return c.fail(L, err.Error())
	}
	redact, err := c.redactor()
	if err != nil {
		return c.fail(L, err.Error())
	}
	out := L.NewTable()
	for _, t := range tools {
		if c.entry.Offers(t.Name) != nil {
			continue
		}
		raw := t.Raw
		if len(raw) == 0 {
			if raw, err = json.Marshal(t); err != nil {
				return c.fail(L, err.Error())
			}
		}
		v, err := decodeJSON(L, raw, redact)
		if err != nil {
			// A definition Lua cannot hold (nested past what it reads) is
			// listed by its name and why, and the other tools stay usable.
			bad := L.NewTable()
			bad.RawSetString("name", glua.LString(redact(t.Name)))
			if t.Description != "" {
				bad.RawSetString("description", glua.LString(redact(t.Description)))
			}
			bad.RawSetString("unreadable", glua.LString(redact(err.Error())))
			v = bad
		}
		out.Append(v)
	}
	L.Push(out)
	return 1
}

func mcpCall(L *glua.LState) int {
	c := checkClient(L)
	name := L.CheckString(2)
	args := argsJSON(L, 3, "args")
	if err := c.entry.Offers(name); err != nil {
		return c.fail(L, err.Error())
	}
	var res *mcp.CallResult
	var err error
	if c.await != nil {
		ctx := luaContext(L)
		c.await(func() { res, err = c.c.Call(ctx, name, args) })
	} else {
		res, err = c.c.Call(luaContext(L), name, args)
	}
	if err != nil {
		var me *mcp.WireError
		if errors.As(err, &me) {
			return c.fail(L, me.Error())
		}
		return c.fail(L, err.Error())
	}
	raw := res.Raw
	if len(raw) == 0 {
		if raw, err = json.Marshal(res); err != nil {
			return c.fail(L, err.Error())
		}
	}
	v, err := c.toLua(L, raw)
	if err != nil {
		return c.fail(L, err.Error())
	}
	t, ok := v.(*glua.LTable)
	if !ok {
		return c.fail(L, "the server's result is not an object")
	}
	t.RawSetString("isError", glua.LBool(res.IsError))
	if t.RawGetString("content") == glua.LNil {
		t.RawSetString("content", NewArray(L))
	}
	L.Push(t)
	return 1
}

func mcpPing(L *glua.LState) int {
	c := checkClient(L)
	if err := c.c.Ping(luaContext(L)); err != nil {
		return c.fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func mcpClose(L *glua.LState) int {
	c := checkClient(L)
	if err := c.c.Close(); err != nil && !errors.Is(err, mcp.ErrClosed) {
		return c.fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func mcpInfo(L *glua.LState) int {
	c := checkClient(L)
	info := c.c.ServerInfo()
	t := L.NewTable()
	t.RawSetString("name", glua.LString(c.redact(info.Name)))
	t.RawSetString("version", glua.LString(c.redact(info.Version)))
	t.RawSetString("protocol", glua.LString(c.c.ProtocolVersion()))
	L.Push(t)
	return 1
}
