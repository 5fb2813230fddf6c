package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/mcp/sse"
)

// echoHandler is a minimal Streamable HTTP MCP server for the benchmarks:
// it answers initialize, accepts notifications with 202 and echoes
// tools/call's text, as one JSON body or as a one-event SSE stream. It
// parses with encoding/json, independent of this package's codec.
type echoHandler struct{ sse bool }

func (h echoHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result []byte
	switch req.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "bench")
		result = []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}`)
	case "tools/call":
		text, _ := json.Marshal(req.Params.Arguments.Text)
		result = append(append([]byte(`{"content":[{"type":"text","text":`), text...), "}]}"...)
	default:
		result = []byte(`{}`)
	}
	body := append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), req.ID...), `,"result":`...), result...), '}')
	if h.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(append(append([]byte("event: message\ndata: "), body...), "\n\n"...))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// BenchmarkHTTPCall measures sequential tools/call echo round trips over
// Streamable HTTP on loopback. On each server, "tai" is this package's
// client, "go-sdk" the official Go SDK's client on the same server in the
// same run, and "raw" a bare POST of a prepared tools/call body whose reply
// is read and dropped (no JSON-RPC, no client logic): the floor.
func BenchmarkHTTPCall(b *testing.B) {
	servers := []struct {
		name    string
		handler func() http.Handler
	}{
		{"echo-json", func() http.Handler { return echoHandler{} }},
		{"echo-sse", func() http.Handler { return echoHandler{sse: true} }},
		{"gosdk-json", func() http.Handler {
			s := newSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
		}},
		{"gosdk-sse", func() http.Handler {
			s := newSDKServer()
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
		}},
	}
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			ts := httptest.NewServer(srv.handler())
			defer ts.Close()
			b.Run("tai", func(b *testing.B) { benchTai(b, ts.URL) })
			b.Run("go-sdk", func(b *testing.B) { benchSDKClient(b, ts.URL) })
			b.Run("raw", func(b *testing.B) { benchRawPOST(b, ts.URL) })
		})
	}
}

func benchTai(b *testing.B, url string) {
	ctx := context.Background()
	c, err := connectHTTP(ctx, url, nil, nil, &ClientOptions{Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"text": "hello"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := c.Call(ctx, "echo", args)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Content) != 1 {
			b.Fatalf("content = %s", res.Raw)
		}
	}
}

func benchSDKClient(b *testing.B, url string) {
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := sess.CallTool(ctx, params)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Content) != 1 {
			b.Fatalf("content = %v", res.Content)
		}
	}
}

func benchRawPOST(b *testing.B, url string) {
	ctx := context.Background()
	// The raw leg needs a session on servers that keep them.
	c, err := connectHTTP(ctx, url, nil, nil, &ClientOptions{Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	sid := c.Transport().(*HTTPTransport).SessionID()
	defer c.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	buf := make([]byte, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", MCP_PROTOCOL_VERSION)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.ReadFull(resp.Body, buf)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("HTTP %d, %d bytes", resp.StatusCode, n)
		}
	}
}

// BenchmarkSSEParser measures the event-stream parser on a body of many
// small message events.
func BenchmarkSSEParser(b *testing.B) {
	var body bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&body, "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i, i)
	}
	data := body.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := sse.NewParser(bytes.NewReader(data), MCP_HTTP_MAX_BODY, ErrTooLarge)
		for {
			if _, err := p.Next(); err != nil {
				break
			}
		}
	}
}
