package lua

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"tai/engine/sandbox"
)

// TestMain lets the test binary double as a small MCP server over stdio
// (newline-delimited JSON-RPC) when TAI_LUA_TEST_MCP is set.
// TestMain also lets this test binary be the shell keeper and the Lua
// sandbox that the tests start, as tai's main does.
func TestMain(m *testing.M) {
	sandbox.RunKeeperIfAsked()
	RunSandboxIfAsked()
	if os.Getenv("TAI_LUA_TEST_MCP") == sandboxRSSMode {
		os.Exit(sandboxRSS())
	}
	if os.Getenv("TAI_LUA_TEST_MCP") == "leak" {
		fmt.Fprintln(os.Stderr, "fatal: bad token "+os.Getenv("LEAK"))
		os.Exit(1)
	}
	if kind := os.Getenv(servePeerEnv); kind != "" {
		if err := servePeer(kind); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("TAI_LUA_TEST_MCP") == elicitorMode {
		serveElicitor()
		os.Exit(0)
	}
	if os.Getenv("TAI_LUA_TEST_MCP") == samplerMode {
		serveSampler()
		os.Exit(0)
	}
	if os.Getenv("TAI_LUA_TEST_MCP") == "bench" {
		serveBenchMCP()
		os.Exit(0)
	}
	if v := os.Getenv("TAI_LUA_TEST_MCP"); v == "1" || v == "deep" || v == "logging" || v == "prompts" {
		serveStdioMCP(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// answerMCP is the fake server's behaviour: one echo tool, one tool that
// fails as a result, and a JSON-RPC error for unknown tools.
func answerMCP(m rpcMsg) (result any, rerr *rpcError) {
	switch m.Method {
	case "initialize":
		caps := map[string]any{"tools": map[string]any{}}
		if os.Getenv("TAI_LUA_TEST_MCP") == "logging" {
			caps["logging"] = map[string]any{}
		}
		init := map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    caps,
			"serverInfo":      map[string]any{"name": "fake-mcp", "version": "1.2.3"},
		}
		if os.Getenv("TAI_LUA_TEST_MCP") == "prompts" {
			caps["prompts"] = map[string]any{}
			init["instructions"] = "Call echo before sulk."
		}
		return init, nil
	case "prompts/list":
		return map[string]any{"prompts": []any{map[string]any{"name": "look", "description": "looks at a picture"}}}, nil
	case "prompts/get":
		return map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "What is in this picture?"}},
			map[string]any{"role": "user", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(promptPNG)}},
		}}, nil
	case "logging/setLevel":
		return map[string]any{}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		tools := []any{
			map[string]any{"name": "echo", "description": "echoes text", "inputSchema": map[string]any{
				"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
			map[string]any{"name": "sulk", "description": "always fails", "inputSchema": map[string]any{"type": "object"}},
		}
		if os.Getenv("TAI_LUA_TEST_MCP") == "deep" {
			// Nested past what a Lua table conversion reads.
			var schema any = map[string]any{"type": "string"}
			for range 300 {
				schema = map[string]any{"type": "object", "properties": map[string]any{"a": schema}}
			}
			tools = append(tools, map[string]any{"name": "deep", "description": "nested deeply", "inputSchema": schema})
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p)
		switch p.Name {
		case "echo":
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("echo: %v", p.Arguments["text"])}}}, nil
		case "sulk":
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "not today"}}, "isError": true}, nil
		}
		return nil, &rpcError{Code: -32602, Message: "unknown tool " + p.Name}
	}
	return nil, &rpcError{Code: -32601, Message: "method not found: " + m.Method}
}

func reply(m rpcMsg) []byte {
	result, rerr := answerMCP(m)
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		out["error"] = rerr
	} else {
		out["result"] = result
	}
	b, _ := json.Marshal(out)
	return b
}

// serveStdioMCP serves answerMCP over newline-delimited JSON. In mode
// "logging" each tools/call first logs its params at info, unless
// logging/setLevel asked for a level above info.
func serveStdioMCP(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	quiet := false
	for sc.Scan() {
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue // notifications and answers need no reply
		}
		if m.Method == "logging/setLevel" {
			quiet = !strings.Contains(string(m.Params), `"debug"`) && !strings.Contains(string(m.Params), `"info"`)
		}
		if m.Method == "tools/call" && os.Getenv("TAI_LUA_TEST_MCP") == "logging" && !quiet {
			note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
				"params": map[string]any{"level": "info", "logger": "calls", "data": "called with " + string(m.Params)}})
			out.Write(append(note, '\n'))
		}
		out.Write(append(reply(m), '\n'))
	}
}

func httpMCP(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("X-Test") != "yes" {
			http.Error(w, "missing header", http.StatusUnauthorized)
			return
		}
		var m rpcMsg
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "s-1")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply(m))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestMCPConnect(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := httpMCP(t)
	entries := map[string]string{
		"stdio": fmt.Sprintf(`{name = "fake", transport = "stdio", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = "1"}}`, exe),
		"http":  fmt.Sprintf(`{name = "web", transport = "http", url = %q, headers = {["X-Test"] = "yes"}}`, srv.URL),
	}
	for name, entry := range entries {
		t.Run(name, func(t *testing.T) {
			h := newHost(t, Options{}, nil)
			got := mustRun(t, h, `
				local c = assert(tai.mcp.connect(`+entry+`))
				local tools = assert(c:tools())
				local echo = assert(c:call("echo", {text = "hi"}))
				local sulk = assert(c:call("sulk"))
				local none, err = c:call("nope", {})
				local info = c:info()
				local pong = c:ping()
				c:close()
				local after, cerr = c:ping()
				return #tools, tools[1].name, tools[1].inputSchema.properties.text.type,
					echo.content[1].text, echo.isError, sulk.isError, sulk.content[1].text,
					none, err:match("unknown tool nope") ~= nil, info.name, info.protocol, pong, after, cerr ~= nil`)
			want := []any{int64(2), "echo", "string", "echo: hi", false, true, "not today", nil, true, "fake-mcp", "2025-11-25", true, nil, true}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		})
	}
}

// TestMCPToolsKeepsOthersBesideADeepTool: a tool nested too deeply to
// convert comes back as its name, description and why, and the server's
// other tools are listed and callable as ever.
func TestMCPToolsKeepsOthersBesideADeepTool(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, fmt.Sprintf(`
		local c = assert(tai.mcp.connect{name = "fake", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = "deep"}})
		local tools = assert(c:tools())
		local echo = assert(c:call("echo", {text = "hi"}))
		c:close()
		return #tools, tools[1].name, tools[3].name, tools[3].description, tools[3].inputSchema,
			tools[3].unreadable ~= nil and tools[3].unreadable:match("deep") ~= nil, echo.content[1].text`, exe))
	want := []any{int64(3), "echo", "deep", "nested deeply", nil, true, "echo: hi"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestMCPConnectErrors(t *testing.T) {
	h := newHost(t, Options{}, nil)
	for _, bad := range []string{
		`tai.mcp.connect{name = "x", transport = "sse", url = "http://127.0.0.1:1/"}`,
		`tai.mcp.connect{name = "x", transport = "stdio"}`,
		`tai.mcp.connect{name = "x", transport = "stdio", command = "x", comand = "typo"}`,
		`tai.mcp.connect("stdio")`,
	} {
		if _, err := h.DoString(ctxT(t), bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
	got := mustRun(t, h, `return tai.mcp.connect{name = "gone", transport = "stdio", command = "/nonexistent/server"}`)
	if got[0] != nil || !strings.Contains(got[1].(string), "/nonexistent/server") {
		t.Fatalf("got %v", got)
	}
}

func TestMCPSessionsCloseWithHost(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, fmt.Sprintf(`c = assert(tai.mcp.connect{name = "fake", transport = "stdio", command = %q, env = {TAI_LUA_TEST_MCP = "1"}}) return c:ping()`, exe))
	if got[0] != true {
		t.Fatalf("ping: %v", got)
	}
	h.clients.mu.Lock()
	handle := h.clients.list[0].Value()
	h.clients.mu.Unlock()
	if handle == nil {
		t.Fatal("the session is not tracked")
	}
	h.Close()
	if err := handle.c.Ping(ctxT(t)); err == nil {
		t.Fatal("the session is still open after the host closed")
	}
}

func TestMCPConnectRedactsVaultSecrets(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Tr0ub4dor&3<x>"
	h := newHost(t, Options{Vault: openTestVault(t, "pw")}, nil)
	mustRun(t, h, fmt.Sprintf(`assert(tai.vault.secret_set("gh", %q))`, secret))
	got := mustRun(t, h, fmt.Sprintf(`
		local none, err = tai.mcp.connect{name = "leaky", command = %[1]q, env = {TAI_LUA_TEST_MCP = "leak", LEAK = %[2]q}}
		local c = assert(tai.mcp.connect{name = "fake", command = %[1]q, env = {TAI_LUA_TEST_MCP = "1"}})
		local echo = assert(c:call("echo", {text = %[2]q}))
		c:close()
		return none, err, echo.content[1].text`, exe, secret))
	if got[0] != nil {
		t.Fatalf("the leaky server connected: %v", got)
	}
	for i, s := range got[1:] {
		text, _ := s.(string)
		if strings.Contains(text, secret) || !strings.Contains(text, "[REDACTED:gh]") {
			t.Errorf("value %d = %q: want the secret replaced by [REDACTED:gh]", i+2, text)
		}
	}
}

func TestMCPConnectAllowDeny(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, filter string
		tools        string // the names tools() lists
		echo, sulk   bool   // whether each may be called
		refusal      string // what the refused call's error mentions
	}{
		{"no lists", ``, "echo,sulk", true, true, ""},
		{"empty lists", `allow = {}, deny = {}`, "echo,sulk", true, true, ""},
		{"allow", `allow = {"echo"}`, "echo", true, false, "allow"},
		{"deny", `deny = {"sulk"}`, "echo", true, false, "deny"},
		{"deny wins", `allow = {"echo", "sulk"}, deny = {"sulk"}`, "echo", true, false, "deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, Options{}, nil)
			got := mustRun(t, h, fmt.Sprintf(`
				local c = assert(tai.mcp.connect{name = "fake", command = %q, args = {}, env = {TAI_LUA_TEST_MCP = "1"}, %s})
				local names = {}
				for _, tool in ipairs(assert(c:tools())) do names[#names + 1] = tool.name end
				local echo, eerr = c:call("echo", {text = "x"})
				local sulk, serr = c:call("sulk")
				c:close()
				return table.concat(names, ","), echo ~= nil, sulk ~= nil, eerr or serr or ""`, exe, tt.filter))
			if got[0] != tt.tools || got[1] != tt.echo || got[2] != tt.sulk {
				t.Fatalf("tools %v, echo callable %v, sulk callable %v; want %s, %v, %v", got[0], got[1], got[2], tt.tools, tt.echo, tt.sulk)
			}
			if msg := got[3].(string); tt.refusal != "" && (!strings.Contains(msg, "sulk") || !strings.Contains(msg, tt.refusal)) {
				t.Fatalf("refusal %q should name the tool and the %s list", msg, tt.refusal)
			}
		})
	}
}

func TestMCPConnectInfersTransport(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := httpMCP(t)
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, fmt.Sprintf(`
		local s = assert(tai.mcp.connect{command = %q, env = {TAI_LUA_TEST_MCP = "1"}})
		local w = assert(tai.mcp.connect{url = %q, headers = {["X-Test"] = "yes"}})
		local a, b = s:ping(), w:ping()
		s:close() w:close()
		return a, b`, exe, srv.URL))
	if !reflect.DeepEqual(got, []any{true, true}) {
		t.Fatalf("got %v", got)
	}
	if _, err := h.DoString(ctxT(t), `tai.mcp.connect{command = "x", url = "http://127.0.0.1:1/"}`, "both"); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Fatalf("command and url: got %v, want an error asking for one of them", err)
	}
}
