package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"tai/mcp/httppolicy"
)

// fakeHTTP is a hand-written Streamable HTTP MCP server for the fault
// tests. It speaks through plain encoding/json maps, independent of this
// package's codec, records every request, and lets a test override how
// tools/call (and GET) are answered.
type fakeHTTP struct {
	t       testing.TB
	sse     bool   // answer requests with an event stream instead of JSON
	version string // protocol version answered to initialize

	// onCall, when set, answers tools/call; it returns false to fall
	// back to the default (echo).
	onCall func(w http.ResponseWriter, r *http.Request, id any, name string, args map[string]any) bool
	// onGet answers a GET that resumes a stream (with Last-Event-ID);
	// nil means 405.
	onGet func(w http.ResponseWriter, r *http.Request)
	// onListen answers the GET that opens the standalone stream (no
	// Last-Event-ID); nil means 405.
	onListen func(w http.ResponseWriter, r *http.Request)
	// notifyStatus and notifyBody answer notifications and responses
	// (default 202, no body).
	notifyStatus int
	notifyBody   string
	// notifyHold keeps the answer to a notification or response open
	// until the client goes away.
	notifyHold bool
	// dropSessions makes every non-initialize request with a session 404.
	dropSessions bool
	// sessionFormat formats new session ids from a counter (default
	// "sess-%d").
	sessionFormat string

	mu       sync.Mutex
	reqs     []fakeReq
	sessions int
	live     map[string]bool
	// fromClient receives every notification and response the client
	// POSTs.
	fromClient chan map[string]any
}

// fakeReq is one request the fake saw.
type fakeReq struct {
	Method string
	Header http.Header
	Body   map[string]any
}

// rpcMethod is the JSON-RPC method of a recorded POST ("" for responses).
func (r fakeReq) rpcMethod() string {
	m, _ := r.Body["method"].(string)
	return m
}

func newFakeHTTP(t testing.TB) *fakeHTTP {
	return &fakeHTTP{t: t, version: MCP_PROTOCOL_VERSION, live: map[string]bool{}, fromClient: make(chan map[string]any, 64)}
}

// start serves the fake on 127.0.0.1 until the test ends.
func (f *fakeHTTP) start() *httptest.Server {
	ts := httptest.NewServer(f)
	f.t.Cleanup(ts.Close)
	return ts
}

func (f *fakeHTTP) requests() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.reqs...)
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m map[string]any
	if len(body) > 0 {
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeReq{Method: r.Method, Header: r.Header.Clone(), Body: m})
	f.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if r.Header.Get("Last-Event-ID") == "" && f.onListen != nil {
			f.onListen(w, r)
			return
		}
		if r.Header.Get("Last-Event-ID") != "" && f.onGet != nil {
			f.onGet(w, r)
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		f.mu.Lock()
		delete(f.live, r.Header.Get("Mcp-Session-Id"))
		f.mu.Unlock()
		return
	}
	method, _ := m["method"].(string)
	id, hasID := m["id"]
	if method == "" || !hasID {
		select {
		case f.fromClient <- m:
		default:
		}
		status := f.notifyStatus
		if status == 0 {
			status = http.StatusAccepted
		}
		w.WriteHeader(status)
		io.WriteString(w, f.notifyBody)
		if f.notifyHold {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
		return
	}
	if method == "initialize" {
		f.mu.Lock()
		f.sessions++
		format := f.sessionFormat
		if format == "" {
			format = "sess-%d"
		}
		sid := fmt.Sprintf(format, f.sessions)
		f.live[sid] = true
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		f.reply(w, id, map[string]any{
			"protocolVersion": f.version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "fake-http", "version": "1"},
		})
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	ok := f.live[sid] && !f.dropSessions
	f.mu.Unlock()
	if !ok {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	switch method {
	case "ping":
		f.reply(w, id, map[string]any{})
	case "tools/list":
		f.reply(w, id, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
	case "tools/call":
		params, _ := m["params"].(map[string]any)
		name, _ := params["name"].(string)
		args, _ := params["arguments"].(map[string]any)
		if f.onCall != nil && f.onCall(w, r, id, name, args) {
			return
		}
		text, _ := args["text"].(string)
		f.reply(w, id, textResult(text))
	default:
		f.replyMsg(w, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "no such method"}})
	}
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

func (f *fakeHTTP) reply(w http.ResponseWriter, id any, result any) {
	f.replyMsg(w, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fakeHTTP) replyMsg(w http.ResponseWriter, msg map[string]any) {
	b, _ := json.Marshal(msg)
	if f.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: r-1\ndata: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// sseWrite writes raw event-stream text and flushes it.
func sseWrite(w http.ResponseWriter, format string, a ...any) {
	fmt.Fprintf(w, format, a...)
	w.(http.Flusher).Flush()
}

func rpcJSON(msg map[string]any) string {
	b, _ := json.Marshal(msg)
	return string(b)
}

// fakeClient starts a Client over HTTP to the fake, closed at cleanup.
func fakeClient(t *testing.T, ts *httptest.Server, hopts *HTTPOptions, opts *ClientOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := connectHTTP(ctx, ts.URL+"/mcp", nil, hopts, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func httpCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestHTTPResume drops a tools/call stream before its answer; the client
// waits the stream's retry delay and resumes with GET + Last-Event-ID.
func TestHTTPResume(t *testing.T) {
	tests := []struct {
		name string
		// post writes the POST stream before it is dropped.
		post string
		// gets are the successive GET streams; the last must carry the result.
		gets []string
		// wantLastIDs are the Last-Event-ID values the GETs must carry.
		wantLastIDs []string
		wantNotes   int
	}{
		{
			name:        "priming event only (sse-retry)",
			post:        "id: e-0\nretry: 20\ndata: \n\n",
			gets:        []string{"id: e-1\ndata: %s\n\n"},
			wantLastIDs: []string{"e-0"},
		},
		{
			name:        "progress then drop",
			post:        "id: e-0\nretry: 5\ndata:\n\nid: e-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":@ID@,\"progress\":1}}\n\n",
			gets:        []string{"id: e-2\ndata: %s\n\n"},
			wantLastIDs: []string{"e-1"},
			wantNotes:   1,
		},
		{
			name:        "dropped twice",
			post:        "retry: 5\nid: e-0\ndata: \n\n",
			gets:        []string{"id: e-1\ndata: " + rpcJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "x"}}) + "\n\n", "id: e-2\r\ndata: %s\r\n\r\n"},
			wantLastIDs: []string{"e-0", "e-1"},
			wantNotes:   1,
		},
		{
			name:        "no retry field uses the default delay",
			post:        "id: e-0\ndata: \n\n",
			gets:        []string{"id: e-1\ndata: %s\n\n"},
			wantLastIDs: []string{"e-0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t)
			var callID any
			var mu sync.Mutex
			gets := 0
			f.onCall = func(w http.ResponseWriter, _ *http.Request, id any, name string, _ map[string]any) bool {
				mu.Lock()
				callID = id
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				token, _ := json.Marshal(id) // the call's progressToken is its id
				sseWrite(w, "%s", strings.ReplaceAll(tc.post, "@ID@", string(token)))
				return true // the handler returns: the stream ends without the answer
			}
			f.onGet = func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n := gets
				gets++
				id := callID
				mu.Unlock()
				if n >= len(tc.gets) {
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				frame := tc.gets[n]
				if strings.Contains(frame, "%s") {
					frame = fmt.Sprintf(frame, rpcJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": textResult("resumed")}))
				}
				sseWrite(w, "%s", frame)
			}
			ts := f.start()
			var notes sync.WaitGroup
			notes.Add(tc.wantNotes)
			c := fakeClient(t, ts, &HTTPOptions{DefaultRetry: 10 * time.Millisecond}, &ClientOptions{OnNotification: func(*Message) { notes.Done() }})
			res, err := c.Call(httpCtx(t), "echo", map[string]any{"text": "x"})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.Text() != "resumed" {
				t.Fatalf("Text() = %q, want the resumed answer", res.Text())
			}
			notes.Wait()
			var lastIDs []string
			sid := c.Transport().(*HTTPTransport).SessionID()
			for _, r := range f.requests() {
				if r.Method != http.MethodGet || r.Header.Get("Last-Event-ID") == "" {
					continue // not a resumption: the standalone stream's GET
				}
				lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
				if r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Mcp-Session-Id") != sid ||
					r.Header.Get("MCP-Protocol-Version") != MCP_PROTOCOL_VERSION {
					t.Errorf("GET headers = %v", r.Header)
				}
			}
			if strings.Join(lastIDs, ",") != strings.Join(tc.wantLastIDs, ",") {
				t.Errorf("GETs carried Last-Event-ID %q, want %q", lastIDs, tc.wantLastIDs)
			}
		})
	}
}

// TestHTTPResumeFailures: streams that end before the answer and cannot
// be resumed fail the call with a clear error, and the session lives on.
func TestHTTPResumeFailures(t *testing.T) {
	tests := []struct {
		name    string
		post    string
		get     func(w http.ResponseWriter, r *http.Request)
		wantErr string
		wantGet int
	}{
		{name: "no event id", post: "retry: 5\ndata: \n\n", wantErr: "no event id to resume from", wantGet: 0},
		{name: "GET refused with 405", post: "id: a\nretry: 5\ndata: \n\n", wantErr: "HTTP 405", wantGet: 1},
		{name: "GET answers JSON", post: "id: a\nretry: 5\ndata: \n\n", get: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}, wantErr: "not text/event-stream", wantGet: 1},
		{name: "resumed streams stay empty", post: "id: a\nretry: 1\ndata: \n\n", get: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, ": nothing yet\n\n")
		}, wantErr: "3 times in a row", wantGet: 2},
		{name: "malformed message", post: "id: a\ndata: {not json\n\n", wantErr: "malformed message", wantGet: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t)
			f.onCall = func(w http.ResponseWriter, _ *http.Request, _ any, name string, _ map[string]any) bool {
				if name != "drop" {
					return false
				}
				w.Header().Set("Content-Type", "text/event-stream")
				sseWrite(w, "%s", tc.post)
				return true
			}
			f.onGet = tc.get
			ts := f.start()
			c := fakeClient(t, ts, &HTTPOptions{MaxResumes: 2}, nil)
			ctx := httpCtx(t)
			_, err := c.Call(ctx, "drop", nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Call err = %v, want one containing %q", err, tc.wantErr)
			}
			gets := 0
			for _, r := range f.requests() {
				if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
					gets++
				}
			}
			if gets != tc.wantGet {
				t.Errorf("%d GETs sent, want %d", gets, tc.wantGet)
			}
			if res, err := c.Call(ctx, "echo", map[string]any{"text": "still here"}); err != nil || res.Text() != "still here" {
				t.Errorf("later call = %v, %v; the session should live on", res, err)
			}
		})
	}
}

// TestHTTPStatusErrors: non-2xx answers become *MCPHTTPError carrying the
// status, WWW-Authenticate and the body's JSON-RPC error.
func TestHTTPStatusErrors(t *testing.T) {
	const challenge = `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="read"`
	tests := []struct {
		name      string
		status    int
		header    string
		body      string
		atInit    bool
		wantCode  int
		wantInMsg string
	}{
		{name: "401 at initialize", status: 401, header: challenge, body: "unauthorized", atInit: true, wantInMsg: "unauthorized"},
		{name: "403 on a call", status: 403, header: `Bearer error="insufficient_scope", scope="write"`},
		{name: "500 with a JSON-RPC error", status: 500, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"boom"}}`, wantCode: -32603, wantInMsg: "boom"},
		{name: "400 with text", status: 400, body: "Bad Request: missing thing\nmore", wantInMsg: "missing thing"},
		{name: "406 at initialize", status: 406, body: "Not Acceptable", atInit: true, wantInMsg: "Not Acceptable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t)
			fail := func(w http.ResponseWriter) {
				if tc.header != "" {
					w.Header().Set("WWW-Authenticate", tc.header)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}
			f.onCall = func(w http.ResponseWriter, _ *http.Request, _ any, _ string, _ map[string]any) bool {
				fail(w)
				return true
			}
			var h http.Handler = f
			if tc.atInit {
				h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fail(w) })
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			ctx := httpCtx(t)
			c, err := connectHTTP(ctx, ts.URL, nil, nil, nil)
			if err == nil {
				defer c.Close()
				_, err = c.Call(ctx, "echo", map[string]any{"text": "x"})
			} else if !tc.atInit {
				t.Fatalf("connect: %v", err)
			}
			var he *MCPHTTPError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v (%T), want *MCPHTTPError", err, err)
			}
			if he.Status != tc.status || he.WWWAuthenticate != tc.header {
				t.Errorf("MCPHTTPError status %d, WWW-Authenticate %q; want %d, %q", he.Status, he.WWWAuthenticate, tc.status, tc.header)
			}
			if he.Unauthorized() != (tc.status == 401) {
				t.Errorf("Unauthorized() = %v", he.Unauthorized())
			}
			if he.Code != tc.wantCode {
				t.Errorf("Code = %d, want %d", he.Code, tc.wantCode)
			}
			if !strings.Contains(err.Error(), tc.wantInMsg) || !strings.Contains(err.Error(), fmt.Sprint(tc.status)) {
				t.Errorf("error %q lacks %q or the status", err, tc.wantInMsg)
			}
		})
	}
}

// TestHTTPBodyCaps: replies over MCP_HTTP_MAX_BODY (JSON with or without a
// length, or one SSE event) are refused with a clear error while memory
// stays bounded, and the session lives on; an over-size message is never
// sent.
func TestHTTPBodyCaps(t *testing.T) {
	const size = 20 << 20
	chunk := []byte(strings.Repeat("a", 64<<10))
	writeHuge := func(w io.Writer, prefix, suffix string) {
		io.WriteString(w, prefix)
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client hung up, as it should
			}
		}
		io.WriteString(w, suffix)
	}
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, id any)
	}{
		{name: "json with length", reply: func(w http.ResponseWriter, id any) {
			prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"content":[{"type":"text","text":"`, id)
			suffix := `"}]}}`
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(prefix)+size+len(suffix)))
			writeHuge(w, prefix, suffix)
		}},
		{name: "json chunked", reply: func(w http.ResponseWriter, id any) {
			w.Header().Set("Content-Type", "application/json")
			w.(http.Flusher).Flush()
			writeHuge(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"content":[{"type":"text","text":"`, id), `"}]}}`)
		}},
		{name: "sse event", reply: func(w http.ResponseWriter, id any) {
			w.Header().Set("Content-Type", "text/event-stream")
			writeHuge(w, fmt.Sprintf(`id: 1`+"\n"+`data: {"jsonrpc":"2.0","id":%v,"result":{"content":[{"type":"text","text":"`, id), "\"}]}}\n\n")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t)
			f.onCall = func(w http.ResponseWriter, _ *http.Request, id any, name string, _ map[string]any) bool {
				if name != "huge" {
					return false
				}
				tc.reply(w, id)
				return true
			}
			ts := f.start()
			c := fakeClient(t, ts, nil, nil)
			ctx := httpCtx(t)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := c.Call(ctx, "huge", nil)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "MCP_HTTP_MAX_BODY") {
				t.Fatalf("Call err = %v, want a refusal naming MCP_HTTP_MAX_BODY", err)
			}
			// The reply is 20 MB; reading to the 10 MB cap may allocate a
			// few times the cap while buffers grow, never the whole reply.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*MCP_HTTP_MAX_BODY {
				t.Errorf("allocated %d MB refusing a %d MB reply", grew>>20, size>>20)
			}
			if res, err := c.Call(ctx, "echo", map[string]any{"text": "after"}); err != nil || res.Text() != "after" {
				t.Errorf("later call = %v, %v", res, err)
			}
		})
	}

	t.Run("oversize message not sent", func(t *testing.T) {
		f := newFakeHTTP(t)
		ts := f.start()
		c := fakeClient(t, ts, nil, nil)
		_, err := c.Call(httpCtx(t), "echo", map[string]any{"text": strings.Repeat("b", MCP_HTTP_MAX_BODY)})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge", err)
		}
		for _, r := range f.requests() {
			if r.rpcMethod() == MethodToolsCall {
				t.Fatal("the over-size tools/call was POSTed")
			}
		}
	})
}

// TestHTTPServerRequests: requests the server sends on a call's stream are
// answered by POSTing a response: ping with {}, anything else -32601.
func TestHTTPServerRequests(t *testing.T) {
	tests := []struct {
		method    string
		wantReply string
	}{
		{method: "ping", wantReply: `{"id":"srv-1","jsonrpc":"2.0","result":{}}`},
		{method: "sampling/createMessage", wantReply: `"code":-32601`},
		{method: "roots/list", wantReply: `"code":-32601`},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			f := newFakeHTTP(t)
			f.onCall = func(w http.ResponseWriter, r *http.Request, id any, _ string, _ map[string]any) bool {
				w.Header().Set("Content-Type", "text/event-stream")
				sseWrite(w, "data: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": tc.method, "params": map[string]any{}}))
				var answer map[string]any
				for answer == nil {
					select {
					case m := <-f.fromClient:
						if m["id"] == "srv-1" {
							answer = m
						}
					case <-r.Context().Done():
						return true
					}
				}
				sseWrite(w, "data: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": textResult(rpcJSON(answer))}))
				return true
			}
			ts := f.start()
			c := fakeClient(t, ts, nil, nil)
			res, err := c.Call(httpCtx(t), "talk", nil)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !strings.Contains(res.Text(), tc.wantReply) {
				t.Fatalf("client answered %s, want %s", res.Text(), tc.wantReply)
			}
		})
	}
}

// TestHTTPOneWayReplies: notifications may be answered 202, 200 with no
// body or 200 with a body (the conformance initialize mock does that).
func TestHTTPOneWayReplies(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		hold   bool
	}{
		{name: "202", status: 202},
		{name: "200 empty", status: 200},
		{name: "200 with body", status: 200, body: `{"jsonrpc":"2.0","result":{}}`},
		{name: "204", status: 204},
		{name: "200 with a stream kept open", status: 200, body: ": open\n\n", hold: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t)
			f.notifyStatus, f.notifyBody, f.notifyHold = tc.status, tc.body, tc.hold
			ts := f.start()
			c := fakeClient(t, ts, nil, nil)
			if err := c.Ping(httpCtx(t)); err != nil {
				t.Fatalf("Ping: %v", err)
			}
		})
	}
	t.Run("refused notification", func(t *testing.T) {
		f := newFakeHTTP(t)
		f.notifyStatus = http.StatusBadRequest
		ts := f.start()
		_, err := connectHTTP(httpCtx(t), ts.URL, nil, nil, nil)
		var he *MCPHTTPError
		if !errors.As(err, &he) || he.Status != http.StatusBadRequest || !strings.Contains(err.Error(), MethodInitialized) {
			t.Fatalf("err = %v, want HTTP 400 naming %s", err, MethodInitialized)
		}
	})
}

// TestHTTPCallTimeout: a call that outlives its timeout gets
// notifications/cancelled with its request id, and the transport stops
// reading its stream (the server sees the request end).
func TestHTTPCallTimeout(t *testing.T) {
	for _, sse := range []bool{true, false} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			f := newFakeHTTP(t)
			callIDs := make(chan any, 1)
			streamGone := make(chan struct{})
			f.onCall = func(w http.ResponseWriter, r *http.Request, id any, _ string, _ map[string]any) bool {
				callIDs <- id
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, "id: h-0\ndata: \n\n")
				}
				<-r.Context().Done()
				close(streamGone)
				return true
			}
			ts := f.start()
			c := fakeClient(t, ts, nil, &ClientOptions{CallTimeout: 100 * time.Millisecond})
			ctx := httpCtx(t)
			_, err := c.Call(ctx, "hang", nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Call err = %v, want a deadline error", err)
			}
			id := <-callIDs
			var cancelled map[string]any
			for cancelled == nil {
				select {
				case m := <-f.fromClient:
					if m["method"] == MethodCancelled {
						cancelled = m
					}
				case <-ctx.Done():
					t.Fatal("no notifications/cancelled reached the server")
				}
			}
			params, _ := cancelled["params"].(map[string]any)
			if params["requestId"] != id || params["reason"] == "" {
				t.Errorf("cancelled params = %v, want requestId %v and a reason", params, id)
			}
			select {
			case <-streamGone:
			case <-ctx.Done():
				t.Fatal("the transport kept the cancelled request's exchange open")
			}
		})
	}
}

// TestHTTPReinitialize: a 404 to a request carrying the session id replays
// initialize and notifications/initialized without it, then resends, once.
func TestHTTPReinitialize(t *testing.T) {
	f := newFakeHTTP(t)
	f.sse = true
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	ctx := httpCtx(t)
	f.mu.Lock()
	f.live = map[string]bool{} // the server forgets every session
	f.mu.Unlock()
	res, err := c.Call(ctx, "echo", map[string]any{"text": "again"})
	if err != nil || res.Text() != "again" {
		t.Fatalf("Call after a lost session = %v, %v", res, err)
	}
	var seq []string
	for _, r := range f.requests() {
		seq = append(seq, fmt.Sprintf("%s %s [%s]", r.Method, r.rpcMethod(), r.Header.Get("Mcp-Session-Id")))
	}
	want := []string{
		"POST initialize []",
		"POST notifications/initialized [sess-1]",
		"GET  [sess-1]", // the standalone stream (405 here)
		"POST tools/call [sess-1]",
		"POST initialize []",
		"POST notifications/initialized [sess-2]",
		"GET  [sess-2]", // the new session's standalone stream
		"POST tools/call [sess-2]",
	}
	if strings.Join(seq, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}

	f.mu.Lock()
	f.dropSessions = true // now every session 404s: re-initialize only once
	f.mu.Unlock()
	_, err = c.Call(ctx, "echo", map[string]any{"text": "lost"})
	var he *MCPHTTPError
	if !errors.As(err, &he) || he.Status != http.StatusNotFound {
		t.Fatalf("err = %v, want HTTP 404 after one re-initialize", err)
	}
	inits := 0
	for _, r := range f.requests() {
		if r.rpcMethod() == MethodInitialize {
			inits++
		}
	}
	if inits != 3 {
		t.Errorf("%d initializes sent, want 3 (one per lost session)", inits)
	}
}

// TestHTTPConcurrentCalls: calls run at once on one session; the fake
// answers only when all of them are in flight.
func TestHTTPConcurrentCalls(t *testing.T) {
	const n = 8
	f := newFakeHTTP(t)
	f.sse = true
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	f.onCall = func(w http.ResponseWriter, r *http.Request, id any, _ string, args map[string]any) bool {
		mu.Lock()
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-r.Context().Done():
			return true
		}
		f.reply(w, id, textResult(args["text"].(string)))
		return true
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	ctx := httpCtx(t)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			want := fmt.Sprint("call-", i)
			res, err := c.Call(ctx, "barrier", map[string]any{"text": want})
			if err == nil && res.Text() != want {
				err = fmt.Errorf("got %q, want %q", res.Text(), want)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestHTTPProtocolVersionHeader: the header carries the version the server
// answered, not the one the client asked for.
func TestHTTPProtocolVersionHeader(t *testing.T) {
	f := newFakeHTTP(t)
	f.version = "2025-03-26"
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	if err := c.Ping(httpCtx(t)); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	for _, r := range reqs[1:] {
		if got := r.Header.Get("MCP-Protocol-Version"); got != "2025-03-26" {
			t.Errorf("%s carried MCP-Protocol-Version %q", r.rpcMethod(), got)
		}
	}
}

// TestHTTPClose: Close fails in-flight calls with ErrClosed, sends DELETE
// with the session id, and later sends fail.
func TestHTTPClose(t *testing.T) {
	f := newFakeHTTP(t)
	started := make(chan struct{})
	f.onCall = func(w http.ResponseWriter, r *http.Request, _ any, _ string, _ map[string]any) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, ": working\n\n")
		close(started)
		<-r.Context().Done()
		return true
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	ctx := httpCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "hang", nil)
		errc <- err
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight call err = %v, want ErrClosed", err)
	}
	reqs := f.requests()
	last := reqs[len(reqs)-1]
	if last.Method != http.MethodDelete || last.Header.Get("Mcp-Session-Id") != "sess-1" {
		t.Errorf("last request %s with session %q, want DELETE sess-1", last.Method, last.Header.Get("Mcp-Session-Id"))
	}
	tr := c.Transport()
	if err := tr.Send(ctx, &Message{Method: MethodInitialized}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	if _, err := tr.Recv(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNewHTTPTransportInput(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		headers map[string]string
		wantErr string
		secret  string
	}{
		{name: "ok", url: "http://127.0.0.1:8765/mcp", headers: map[string]string{"Authorization": "Bearer x"}},
		{name: "no scheme", url: "127.0.0.1:8765/mcp", wantErr: "not an http:// or https:// URL"},
		{name: "ftp", url: "ftp://example.com/", wantErr: "not an http:// or https:// URL"},
		{name: "no host", url: "http:///mcp", wantErr: "with a host"},
		{name: "query secret hidden", url: "ws://host/mcp?token=hunter2", wantErr: "not an http", secret: "hunter2"},
		{name: "bad header name", url: "http://h/", headers: map[string]string{"Bad Name": "v"}, wantErr: `"Bad Name"`},
		{name: "header value with newline", url: "http://h/", headers: map[string]string{"Authorization": "Bearer hunter2\r\nX: y"}, wantErr: `"Authorization"`, secret: "hunter2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := NewHTTPTransport(tc.url, tc.headers, nil)
			if tc.wantErr == "" {
				if err != nil || tr == nil {
					t.Fatalf("err = %v", err)
				}
				tr.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

// TestHTTPErrorsHideSecrets: neither a URL's query nor a header value
// appears in the errors of a failed connection or a refused one.
func TestHTTPErrorsHideSecrets(t *testing.T) {
	const secret = "s3cr3t-token"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://user:" + secret + "@" + ln.Addr().String() + "/mcp?key=" + secret
	ln.Close() // nothing listens there now

	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A careless server echoes what it rejected.
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+r.Header.Get("Authorization")+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "rejected "+r.Header.Get("Authorization")+" for "+r.URL.RawQuery)
	}))
	defer refusing.Close()

	for _, url := range []string{deadURL, refusing.URL + "/mcp?key=" + secret} {
		_, err := connectHTTP(httpCtx(t), url, map[string]string{"Authorization": "Bearer " + secret}, nil, &ClientOptions{ConnectTimeout: 5 * time.Second})
		if err == nil {
			t.Fatalf("connecting to %s succeeded", httppolicy.RedactURL(url))
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the secret: %v", err)
		}
	}
}

// TestHTTPStreamKeptOpen: a server that keeps a stream open after the
// response does not hold up the call, later calls or Close.
func TestHTTPStreamKeptOpen(t *testing.T) {
	f := newFakeHTTP(t)
	f.onCall = func(w http.ResponseWriter, r *http.Request, id any, _ string, args map[string]any) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "event: ping\ndata: {\"ignored\": true}\n\n")
		sseWrite(w, "id: 1\ndata: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": textResult(args["text"].(string))}))
		<-r.Context().Done() // never ends the stream on its own
		return true
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	ctx := httpCtx(t)
	for _, text := range []string{"one", "two", "three"} {
		res, err := c.Call(ctx, "open", map[string]any{"text": text})
		if err != nil || res.Text() != text {
			t.Fatalf("Call = %v, %v; want %q", res, err, text)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHTTPInvalidSessionID: a session id that could not go back on the wire
// fails the handshake with a clear error.
func TestHTTPInvalidSessionID(t *testing.T) {
	f := newFakeHTTP(t)
	f.sessionFormat = "bad id %d"
	ts := f.start()
	_, err := connectHTTP(httpCtx(t), ts.URL, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "Mcp-Session-Id that is not visible ASCII") {
		t.Fatalf("err = %v, want an invalid session id error", err)
	}
}

func TestReadCapped(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		limit int64
		hint  int64
		want  int
	}{
		{name: "unknown length", size: 100000, limit: 1 << 20, hint: -1, want: 100000},
		{name: "exact hint", size: 5000, limit: 1 << 20, hint: 5000, want: 5000},
		{name: "hint too small", size: 5000, limit: 1 << 20, hint: 10, want: 5000},
		{name: "empty", size: 0, limit: 10, hint: 0, want: 0},
		{name: "cut at limit", size: 5000, limit: 1001, hint: -1, want: 1001},
		{name: "hint over limit", size: 5000, limit: 1001, hint: 5000, want: 1001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readCapped(iotest.HalfReader(strings.NewReader(strings.Repeat("z", tc.size))), tc.limit, tc.hint)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want || int64(cap(got)) > tc.limit {
				t.Fatalf("read %d bytes (cap %d), want %d within the limit %d", len(got), cap(got), tc.want, tc.limit)
			}
		})
	}
}

// TestHTTPNullIDError: a JSON reply carrying a JSON-RPC error with "id":
// null (how some servers answer a request they could not parse) fails that
// request with the server's own code and message.
func TestHTTPNullIDError(t *testing.T) {
	f := newFakeHTTP(t)
	f.onCall = func(w http.ResponseWriter, _ *http.Request, _ any, _ string, _ map[string]any) bool {
		f.replyMsg(w, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": "cannot read that"}})
		return true
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	_, err := c.Call(httpCtx(t), "echo", nil)
	var me *WireError
	if !errors.As(err, &me) || me.Code != CodeInvalidRequest || !strings.Contains(err.Error(), "cannot read that") {
		t.Fatalf("err = %v, want the server's -32600", err)
	}
}

// TestHTTPSetHeader: a header changed between calls (a refreshed token)
// goes on every later request; bad names and values are refused.
func TestHTTPSetHeader(t *testing.T) {
	f := newFakeHTTP(t)
	ts := f.start()
	ctx := httpCtx(t)
	c, err := connectHTTP(ctx, ts.URL, map[string]string{"Authorization": "Bearer old-token"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr := c.Transport().(*HTTPTransport)
	if err := tr.SetHeader("Authorization", "Bearer new-token"); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetHeader("Authorization", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.requests() {
		got = append(got, r.Header.Get("Authorization"))
	}
	// initialize, notifications/initialized, the standalone GET, then a
	// ping with each header.
	want := []string{"Bearer old-token", "Bearer old-token", "Bearer old-token", "Bearer new-token", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Authorization per request = %q, want %q", got, want)
	}
	for _, bad := range [][2]string{{"Bad Name", "value-9f2"}, {"X-Token", "tok-9f2\r\nb: c"}} {
		if err := tr.SetHeader(bad[0], bad[1]); err == nil || strings.Contains(err.Error(), bad[1]) {
			t.Errorf("SetHeader(%q) = %v, want an error without the value", bad[0], err)
		}
	}
}
