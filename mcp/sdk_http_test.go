package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newSDKHTTPServer builds the go-sdk test server with tools that talk back
// over the request's stream: ping_client pings the client, roots asks it
// for roots/list (which tai does not offer), notify sends a progress
// notification before answering.
func newSDKHTTPServer() *sdk.Server {
	s := newSDKServer()
	sdk.AddTool(s, &sdk.Tool{Name: "ping_client", Description: "pings the client"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "asks the client for roots"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			//lint:ignore SA1019 roots/list is the server request go-sdk sends without checking client capabilities, which this test needs
			_, err := req.Session.ListRoots(ctx, nil)
			if err == nil {
				return nil, nil, errors.New("roots/list unexpectedly answered")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "notify", Description: "notifies, then answers"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	return s
}

// recordedRequest is what the recording middleware saw of one request.
type recordedRequest struct {
	Method, Accept, ContentType, Session, Version, Custom, LastEventID string
}

// recorder wraps a handler and keeps every request's protocol headers.
type recorder struct {
	mu   sync.Mutex
	reqs []recordedRequest
	next http.Handler
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, recordedRequest{
		Method: r.Method, Accept: r.Header.Get("Accept"), ContentType: r.Header.Get("Content-Type"),
		Session: r.Header.Get("Mcp-Session-Id"), Version: r.Header.Get("MCP-Protocol-Version"),
		Custom: r.Header.Get("X-Tai-Test"), LastEventID: r.Header.Get("Last-Event-ID"),
	})
	rc.mu.Unlock()
	rc.next.ServeHTTP(w, r)
}

func (rc *recorder) requests() []recordedRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recordedRequest(nil), rc.reqs...)
}

// connectHTTP connects a Client to url through a canonical http entry.
func connectHTTP(ctx context.Context, url string, headers map[string]string, hopts *HTTPOptions, opts *ClientOptions) (*Client, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	o.HTTP = hopts
	return Connect(ctx, Entry{Name: "http-peer", Transport: TransportHTTP, URL: url, Headers: headers}, &o)
}

// startSDKHTTP serves the go-sdk server over Streamable HTTP on 127.0.0.1.
func startSDKHTTP(t testing.TB, opts *sdk.StreamableHTTPOptions) (*httptest.Server, *recorder) {
	t.Helper()
	srv := newSDKHTTPServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, opts)
	rec := &recorder{next: h}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	return ts, rec
}

// sdkCall is one tools/call case against the go-sdk server.
type sdkCall struct {
	name     string
	tool     string
	args     any
	wantText string
	isError  bool
	wantCode int // JSON-RPC error code; 0 means a result
}

func TestSDKHTTPServer(t *testing.T) {
	modes := []struct {
		name string
		opts *sdk.StreamableHTTPOptions
		// talkBack: the mode carries server-to-client requests on the
		// request's stream (SSE only).
		talkBack bool
		stateful bool
	}{
		{name: "json", opts: &sdk.StreamableHTTPOptions{JSONResponse: true}, stateful: true},
		{name: "sse", opts: &sdk.StreamableHTTPOptions{}, talkBack: true, stateful: true},
		{name: "sse stateless", opts: &sdk.StreamableHTTPOptions{Stateless: true}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ts, rec := startSDKHTTP(t, mode.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var notes []string
			var notesMu sync.Mutex
			c, err := connectHTTP(ctx, ts.URL, map[string]string{"X-Tai-Test": "yes"}, nil, &ClientOptions{Version: "test", OnNotification: func(m *Message) {
				notesMu.Lock()
				notes = append(notes, m.Method)
				notesMu.Unlock()
			}})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := c.ProtocolVersion(); got != MCP_PROTOCOL_VERSION {
				t.Errorf("ProtocolVersion = %q", got)
			}
			if got := c.ServerInfo().Name; got != "go-sdk-peer" {
				t.Errorf("ServerInfo().Name = %q", got)
			}
			ht := c.Transport().(*HTTPTransport)
			sid := ht.SessionID()
			if mode.stateful && sid == "" {
				t.Fatal("no Mcp-Session-Id captured from the initialize answer")
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			tools, err := c.Tools(ctx)
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			if len(tools) != 13 {
				t.Fatalf("Tools over pages of %d: got %d, want 13", sdkPageSize, len(tools))
			}
			// Resources over the same leg: listed over pages, a template, a blob read.
			if res, _, err := c.Resources(ctx); err != nil || len(res) != 3 {
				t.Fatalf("Resources: %d, %v", len(res), err)
			}
			if tmpl, _, err := c.ResourceTemplates(ctx); err != nil || len(tmpl) != 1 {
				t.Fatalf("ResourceTemplates: %d, %v", len(tmpl), err)
			}
			if parts, err := c.ReadResource(ctx, "test://bin/logo"); err != nil || len(parts) != 1 || !parts[0].IsBlob || string(parts[0].Blob) != "\x89PNG\r\n" {
				t.Fatalf("ReadResource: %+v, %v", parts, err)
			}

			calls := []sdkCall{
				{name: "echo", tool: "echo", args: map[string]any{"text": "héllo\nworld"}, wantText: "héllo\nworld"},
				{name: "add", tool: "add", args: json.RawMessage(`{"a": 2, "b": 40}`), wantText: "42"},
				{name: "tool error is a result", tool: "fail", isError: true, wantText: "the tool ran and failed"},
				{name: "unknown tool is a protocol error", tool: "nope", args: map[string]any{}, wantCode: CodeInvalidParams},
				{name: "notifications before the answer", tool: "notify", wantText: "done"},
			}
			if mode.talkBack {
				calls = append(calls,
					sdkCall{name: "server pings the client", tool: "ping_client", wantText: "pong"},
					sdkCall{name: "unsupported server request gets -32601", tool: "roots", wantText: "not supported"})
			}
			for _, tc := range calls {
				t.Run(tc.name, func(t *testing.T) {
					res, err := c.Call(ctx, tc.tool, tc.args)
					if tc.wantCode != 0 {
						var me *WireError
						if !errors.As(err, &me) || me.Code != tc.wantCode {
							t.Fatalf("Call err = %v, want WireError %d", err, tc.wantCode)
						}
						return
					}
					if err != nil {
						t.Fatalf("Call: %v", err)
					}
					if res.IsError != tc.isError {
						t.Fatalf("IsError = %v, want %v (%s)", res.IsError, tc.isError, res.Raw)
					}
					if !strings.Contains(res.Text(), tc.wantText) {
						t.Errorf("Text() = %q, want %q", res.Text(), tc.wantText)
					}
				})
			}

			res, err := c.Call(ctx, "image", nil)
			if err != nil {
				t.Fatal(err)
			}
			var img struct{ Type, Data, MimeType string }
			if len(res.Content) != 1 || json.Unmarshal(res.Content[0], &img) != nil ||
				img.Type != "image" || img.MimeType != "image/png" || img.Data != "iVBORw==" {
				t.Errorf("image content = %s", res.Content)
			}

			// Several calls in flight on one session.
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := strings.Repeat("x", i+1)
					res, err := c.Call(ctx, "echo", map[string]any{"text": want})
					if err == nil && res.Text() != want {
						err = errors.New("echo answered " + res.Text() + ", want " + want)
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("concurrent call: %v", err)
				}
			}

			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			reqs := rec.requests()
			checkHeaders(t, reqs, sid)
			if mode.stateful {
				last := reqs[len(reqs)-1]
				if last.Method != http.MethodDelete || last.Session != sid {
					t.Errorf("last request = %+v, want DELETE with session %q", last, sid)
				}
			}
			notesMu.Lock()
			defer notesMu.Unlock()
			if mode.talkBack && !contains(notes, MethodProgress) {
				t.Errorf("notifications seen = %v, want the progress notification", notes)
			}
		})
	}
}

// checkHeaders asserts the Streamable HTTP header rules over a recorded
// session: POST Accept and Content-Type, the stored header everywhere,
// session id and protocol version on everything after initialize, one GET
// (the standalone stream).
func checkHeaders(t *testing.T, reqs []recordedRequest, sid string) {
	t.Helper()
	gets := 0
	if len(reqs) < 3 {
		t.Fatalf("only %d requests recorded", len(reqs))
	}
	for i, r := range reqs {
		if r.Custom != "yes" {
			t.Errorf("request %d (%s) lacks the stored header", i, r.Method)
		}
		switch r.Method {
		case http.MethodPost:
			if r.Accept != "application/json, text/event-stream" || r.ContentType != "application/json" {
				t.Errorf("POST %d: Accept %q, Content-Type %q", i, r.Accept, r.ContentType)
			}
		case http.MethodGet:
			if gets++; gets > 1 || r.Accept != "text/event-stream" {
				t.Errorf("GET %d: Accept %q; want one GET, for the standalone stream, with Accept: text/event-stream", i, r.Accept)
			}
		}
		if i == 0 {
			if r.Session != "" || r.Version != "" {
				t.Errorf("initialize carried session %q / version %q", r.Session, r.Version)
			}
			continue
		}
		if r.Session != sid {
			t.Errorf("request %d (%s): Mcp-Session-Id %q, want %q", i, r.Method, r.Session, sid)
		}
		if r.Version != MCP_PROTOCOL_VERSION {
			t.Errorf("request %d (%s): MCP-Protocol-Version %q", i, r.Method, r.Version)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSDKHTTPSessionLost drops the go-sdk session under the client (a DELETE
// from outside); the next call gets 404, re-initializes once and succeeds.
func TestSDKHTTPSessionLost(t *testing.T) {
	for _, json := range []bool{true, false} {
		name := "sse"
		if json {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			ts, rec := startSDKHTTP(t, &sdk.StreamableHTTPOptions{JSONResponse: json})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := connectHTTP(ctx, ts.URL, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ht := c.Transport().(*HTTPTransport)
			old := ht.SessionID()
			req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, ts.URL, nil)
			req.Header.Set("Mcp-Session-Id", old)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			res, err := c.Call(ctx, "echo", map[string]any{"text": "again"})
			if err != nil {
				t.Fatalf("Call after the session was dropped: %v", err)
			}
			if res.Text() != "again" {
				t.Errorf("Text() = %q", res.Text())
			}
			if nw := ht.SessionID(); nw == "" || nw == old {
				t.Errorf("session after re-initialize = %q (old %q)", nw, old)
			}
			var saw404Init bool
			for _, r := range rec.requests() {
				if r.Method == http.MethodPost && r.Session == "" && r.Version == "" {
					saw404Init = true
				}
			}
			if !saw404Init {
				t.Error("no initialize without a session id was replayed")
			}
		})
	}
}
