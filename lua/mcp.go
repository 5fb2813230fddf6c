package lua

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"
	"weak"

	glua "github.com/yuin/gopher-lua"

	"tai/mcp"
)

const mcpClientType = "tai.mcp.client"

// mcpHandle is the Lua side of one session opened by tai.mcp.connect.
type mcpHandle struct {
	c    *mcp.Client
	name string
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
//	tai.mcp.connect(entry) -> client | nil, err
//	    entry: {name=, transport="stdio"|"http", command=, args=, env=, cwd=,
//	            url=, headers=, allow=, deny=, enabled=, source=}
//	client:tools() -> {{name=, description=, inputSchema=, …}, …} | nil, err
//	client:call(tool [, args]) -> {content={…}, isError=bool, …} | nil, err
//	client:ping() -> true | nil, err
//	client:close()
//	client:info() -> {name=, version=, protocol=}
//
// A JSON-RPC error from the server, a timeout or a closed session is
// nil, message; a tool that ran and failed is a result with isError. The
// session is closed by client:close(), when the host closes, or when the
// garbage collector frees a client the script dropped.
func (h *Host) openMCP(L *glua.LState, tai *glua.LTable) {
	mt := L.NewTypeMetatable(mcpClientType)
	L.SetField(mt, "__index", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"tools": mcpTools,
		"call":  mcpCall,
		"ping":  mcpPing,
		"close": mcpClose,
		"info":  mcpInfo,
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
}

// entryFields are the fields of a canonical entry, for the error on a typo.
const entryFields = "name, transport, command, args, env, cwd, url, headers, allow, deny, enabled, source"

func (h *Host) mcpConnect(L *glua.LState) int {
	fields := argsTable(L, 1, "entry")
	b, err := json.Marshal(fields)
	if err != nil {
		L.ArgError(1, err.Error())
	}
	var entry mcp.Entry
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entry); err != nil {
		L.ArgError(1, "entry fields are "+entryFields+" ("+err.Error()+")")
	}
	if err := entry.Validate(); err != nil {
		L.ArgError(1, err.Error())
	}
	c, err := mcp.Connect(luaContext(L), entry, &mcp.ClientOptions{Version: h.opts.Version})
	if err != nil {
		return fail(L, err.Error())
	}
	handle := &mcpHandle{c: c, name: entry.Label()}
	h.clients.add(handle)
	ud := L.NewUserData()
	ud.Value = handle
	L.SetMetatable(ud, L.GetTypeMetatable(mcpClientType))
	L.Push(ud)
	return 1
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
		return fail(L, err.Error())
	}
	out := L.NewTable()
	for _, t := range tools {
		raw := t.Raw
		if len(raw) == 0 {
			if raw, err = json.Marshal(t); err != nil {
				return fail(L, err.Error())
			}
		}
		v, err := ToLua(L, raw)
		if err != nil {
			return fail(L, "tool "+t.Name+": "+err.Error())
		}
		out.Append(v)
	}
	L.Push(out)
	return 1
}

func mcpCall(L *glua.LState) int {
	c := checkClient(L)
	name := L.CheckString(2)
	args := argsTable(L, 3, "args")
	res, err := c.c.Call(luaContext(L), name, args)
	if err != nil {
		var me *mcp.McpError
		if errors.As(err, &me) {
			return fail(L, me.Error())
		}
		return fail(L, err.Error())
	}
	raw := res.Raw
	if len(raw) == 0 {
		if raw, err = json.Marshal(res); err != nil {
			return fail(L, err.Error())
		}
	}
	v, err := ToLua(L, raw)
	if err != nil {
		return fail(L, err.Error())
	}
	t, ok := v.(*glua.LTable)
	if !ok {
		return fail(L, "the server's result is not an object")
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
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func mcpClose(L *glua.LState) int {
	c := checkClient(L)
	if err := c.c.Close(); err != nil && !errors.Is(err, mcp.ErrClosed) {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func mcpInfo(L *glua.LState) int {
	c := checkClient(L)
	info := c.c.ServerInfo()
	t := L.NewTable()
	t.RawSetString("name", glua.LString(info.Name))
	t.RawSetString("version", glua.LString(info.Version))
	t.RawSetString("protocol", glua.LString(c.c.ProtocolVersion()))
	L.Push(t)
	return 1
}
