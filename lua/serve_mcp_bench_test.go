package lua

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/tool"
	"tai/mcp/server"
)

const benchKey = "bench-key-0123456789abcdef"

// echoInitLua is the init.lua of the benchmark: one Lua echo tool.
const echoInitLua = `tai.tool{name = "echo", description = "echoes its text", safe = true,
  parameters = {type = "object", properties = {text = {type = "string"}}, required = {"text"}},
  run = function(args) return args.text end}
`

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveHost runs tai's server on a host whose init.lua adds the Lua echo
// tool, and returns its URL; the server stops when the benchmark ends.
func serveHost(b *testing.B) string {
	b.Helper()
	h := newHost(b, Options{Vault: openTestVault(b, "")}, map[string]string{"init.lua": echoInitLua})
	fn, err := h.L.LoadFile(h.InitFile())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.Call(context.Background(), fn); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- h.Serve(ctx, ServeRequest{Key: benchKey, Port: 0, Bind: "127.0.0.1", Ready: func(u string) { ready <- u }})
	}()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		b.Fatalf("serve: %v", err)
	}
	b.Cleanup(func() {
		cancel()
		<-done
	})
	return url
}

// serveGoEcho is tai's server and engine with the echo tool written in Go:
// what the Lua state's round trip costs shows beside tai-lua-echo.
func serveGoEcho(b *testing.B) string {
	b.Helper()
	h := newHost(b, Options{Vault: openTestVault(b, "")}, nil)
	e, err := h.Engine()
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Tools().Add(tool.Tool{Name: "echo", Description: "echoes its text", Safe: true,
		Run: func(_ context.Context, args map[string]any) (tool.Result, error) {
			s, _ := args["text"].(string)
			return tool.TextResult(s), nil
		}}); err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(e.Served(nil), &server.Options{Key: benchKey})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return ts.URL + server.DefaultPath
}

// sdkEchoServer is the go-sdk server with the equivalent Go tool.
func sdkEchoServer(b *testing.B, jsonResponse bool) string {
	b.Helper()
	ts := httptest.NewServer(sdkEchoHandler(jsonResponse))
	b.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// sdkEchoHandler is the go-sdk server's handler with the echo tool.
func sdkEchoHandler(jsonResponse bool) http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "gosdk-bench", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes its text"},
		func(_ context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: jsonResponse})
}

// floorServer answers every POST with a canned tools/call result: the cost
// of HTTP alone.
func floorServer(b *testing.B) string {
	b.Helper()
	ts := httptest.NewServer(floorHandler())
	b.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// floorHandler is the floor's handler.
func floorHandler() http.Handler {
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Mcp-Session-Id", "floor")
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	})
}

// rawClient is the one client all three servers get: prepared bodies, one
// keep-alive connection, the reply read whole.
type rawClient struct {
	url, sid string
	client   *http.Client
}

func newRawClient(b *testing.B, url string) *rawClient {
	b.Helper()
	c := &rawClient{url: url, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
	b.Cleanup(c.client.CloseIdleConnections)
	resp, body := c.post(b, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
	c.sid = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || c.sid == "" {
		b.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	c.post(b, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return c
}

func (c *rawClient) post(b *testing.B, body []byte) (*http.Response, []byte) {
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+benchKey)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	return resp, out
}

// BenchmarkServeToolCall measures sequential tools/call round trips of a
// cheap echo tool over keep-alive HTTP on loopback, with the same raw
// client against: tai serving a Lua echo tool from init.lua (registry,
// audit, redaction and the Lua state included), the go-sdk server with the
// equivalent Go tool (JSON and SSE answers), and the floor, a handler that
// answers a canned result.
//
//	go test -bench ServeToolCall -run '^$' -benchtime 2000x ./lua/
func BenchmarkServeToolCall(b *testing.B) {
	servers := []struct {
		name string
		url  func(*testing.B) string
	}{
		{"tai-lua-echo", serveHost},
		{"tai-go-echo", serveGoEcho},
		{"gosdk-json", func(b *testing.B) string { return sdkEchoServer(b, true) }},
		{"gosdk-sse", func(b *testing.B) string { return sdkEchoServer(b, false) }},
		{"floor", floorServer},
	}
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			c := newRawClient(b, srv.url(b))
			if resp, body := c.post(b, call); resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"hello"`)) {
				b.Fatalf("%d %s", resp.StatusCode, body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for b.Loop() {
				resp, body := c.post(b, call)
				if resp.StatusCode != 200 || len(body) == 0 {
					b.Fatalf("%d %s", resp.StatusCode, body)
				}
			}
			// Wall time on a shared machine includes waiting for a CPU;
			// the process's CPU time per call (client and server, in
			// this one process) is the work each server costs.
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
