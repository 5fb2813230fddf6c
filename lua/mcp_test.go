package lua

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestMain lets the test binary double as a small MCP server over stdio
// (newline-delimited JSON-RPC) when TAI_LUA_TEST_MCP is set.
func TestMain(m *testing.M) {
	if os.Getenv("TAI_LUA_TEST_MCP") == "1" {
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
		return map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "fake-mcp", "version": "1.2.3"},
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []any{
			map[string]any{"name": "echo", "description": "echoes text", "inputSchema": map[string]any{
				"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
			map[string]any{"name": "sulk", "description": "always fails", "inputSchema": map[string]any{"type": "object"}},
		}}, nil
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

func serveStdioMCP(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue // notifications and answers need no reply
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
