package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// nameSchema is a form with one string field.
var nameSchema = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}

// standaloneCallKey marks the context of a call, so a handler can tell it got it.
type standaloneCallKey struct{}

// TestSDKHTTPStandaloneStream: the go-sdk server in JSON mode sends what a
// tool asks while it runs on the standalone GET stream (a JSON reply
// cannot carry it); the request reaches the client's handler with the
// context of the one call in flight, and the answer reaches the tool. A
// request sent with no call in flight reaches the handler too, belonging
// to no call.
func TestSDKHTTPStandaloneStream(t *testing.T) {
	srv := newSDKServer()
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "asks the client for a form"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "name?", RequestedSchema: nameSchema})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + res.Content["name"].(string)}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	rec := &recorder{next: h}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)

	var mu sync.Mutex
	var seen []string // the call value each request's handler saw
	answer := func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		v, _ := ctx.Value(standaloneCallKey{}).(string)
		mu.Lock()
		seen = append(seen, v)
		mu.Unlock()
		return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
	}
	ctx := httpCtx(t)
	c, err := connectHTTP(ctx, ts.URL, nil, nil, &ClientOptions{Requests: map[string]RequestHandler{MethodElicitationCreate: answer}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(context.WithValue(ctx, standaloneCallKey{}, "the call"), "ask", nil)
	if err != nil || res.Text() != "accept Ada" {
		t.Fatalf("Call = %v, %v; want the form's answer", res, err)
	}

	// Outside any call: the server's session asks on its own.
	var ss *sdk.ServerSession
	for s := range srv.Sessions() {
		ss = s
	}
	if ss == nil {
		t.Fatal("the go-sdk server has no session")
	}
	if _, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "again?", RequestedSchema: nameSchema}); err != nil {
		t.Fatalf("Elicit outside a call: %v", err)
	}
	mu.Lock()
	got := strings.Join(seen, "|")
	mu.Unlock()
	if got != "the call|" {
		t.Errorf("handlers saw calls %q, want the call, then none", got)
	}
	gets := 0
	for _, r := range rec.requests() {
		if r.Method == http.MethodGet {
			gets++
			if r.Accept != "text/event-stream" || r.Session == "" || r.LastEventID != "" {
				t.Errorf("GET = %+v, want the standalone stream's", r)
			}
		}
	}
	if gets != 1 {
		t.Errorf("%d GETs, want 1", gets)
	}
}

// TestHTTPStandalone405: a server that offers no standalone stream (405)
// gets one GET, never another, and the session works.
func TestHTTPStandalone405(t *testing.T) {
	f := newFakeHTTP(t)
	ts := f.start()
	c := fakeClient(t, ts, &HTTPOptions{DefaultRetry: time.Millisecond}, nil)
	ctx := httpCtx(t)
	for range 3 {
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := c.Call(ctx, "echo", map[string]any{"text": "hi"}); err != nil || res.Text() != "hi" {
		t.Fatalf("Call = %v, %v", res, err)
	}
	c.Close()
	if n := countGETs(f); n != 1 {
		t.Errorf("%d GETs, want 1 (405 means none, for good)", n)
	}
}

func countGETs(f *fakeHTTP) int {
	n := 0
	for _, r := range f.requests() {
		if r.Method == http.MethodGet {
			n++
		}
	}
	return n
}

// TestHTTPStandaloneResume: a standalone stream that ends is reopened
// after its retry delay with Last-Event-ID, and what the reopened stream
// carries (a server request) reaches its handler.
func TestHTTPStandaloneResume(t *testing.T) {
	f := newFakeHTTP(t)
	f.onListen = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "retry: 5\nid: s-1\ndata: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "first"}}))
	} // returns: the stream ends
	asked := make(chan string, 1)
	f.onGet = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "id: s-2\ndata: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
			"params": map[string]any{"message": "resumed " + r.Header.Get("Last-Event-ID"), "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}))
		<-r.Context().Done() // stays open until the client closes
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, &ClientOptions{Requests: map[string]RequestHandler{MethodElicitationCreate: func(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
		var p struct{ Message string }
		json.Unmarshal(params, &p)
		asked <- p.Message
		return json.RawMessage(`{"action":"decline"}`), nil
	}}})
	select {
	case m := <-asked:
		if m != "resumed s-1" {
			t.Errorf("the request said %q, want it sent on the GET with Last-Event-ID s-1", m)
		}
	case <-httpCtx(t).Done():
		t.Fatal("the request on the reopened stream never reached its handler")
	}
	for answered := false; !answered; {
		select {
		case got := <-f.fromClient:
			if got["method"] != nil {
				continue // notifications/initialized
			}
			answered = true
			if got["id"] != "srv-1" || got["result"] == nil {
				t.Errorf("the client answered %v", got)
			}
		case <-httpCtx(t).Done():
			t.Fatal("no answer to the server's request")
		}
	}
	c.Close()
}

// TestHTTPStandaloneHostile: standalone streams that send garbage, answer
// 200 with JSON, flood one event past the size cap, or end at once each
// time are bounded and closed; the session lives on.
func TestHTTPStandaloneHostile(t *testing.T) {
	tests := []struct {
		name    string
		listen  func(w http.ResponseWriter, r *http.Request)
		maxGETs int // GETs the client may send before it stops
	}{
		{name: "garbage", listen: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "data: {not json\n\n")
			<-r.Context().Done() // held open: the client must hang up
		}, maxGETs: 1},
		{name: "200 with a JSON body", listen: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}, maxGETs: 1},
		{name: "one event past the cap", listen: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := "data: " + strings.Repeat("x", 4096) + "\n"
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}, maxGETs: 1},
		{name: "ends at once, every time", listen: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "retry: 1\n\n")
		}, maxGETs: 1 + 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHTTP(t)
			f.onListen = tc.listen
			ts := f.start()
			c := fakeClient(t, ts, &HTTPOptions{MaxBody: 64 << 10, MaxResumes: 3, DefaultRetry: time.Millisecond}, nil)
			tr := c.Transport().(*HTTPTransport)
			waitListenEnd(t, tr)
			if res, err := c.Call(httpCtx(t), "echo", map[string]any{"text": "alive"}); err != nil || res.Text() != "alive" {
				t.Fatalf("Call = %v, %v; the session should live on", res, err)
			}
			if n := countGETs(f); n > tc.maxGETs {
				t.Errorf("%d GETs, want at most %d", n, tc.maxGETs)
			}
		})
	}
}

// waitListenEnd waits, bounded, until the standalone stream's goroutine
// has given up on its own.
func waitListenEnd(t *testing.T, tr *HTTPTransport) {
	t.Helper()
	tr.mu.Lock()
	end := tr.listenEnd
	tr.mu.Unlock()
	select {
	case <-end:
	case <-time.After(10 * time.Second):
		t.Fatal("the standalone stream's goroutine is still running")
	}
}

// listening reports whether any standalone stream goroutine runs.
func listening() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Contains(string(buf), "(*HTTPTransport).listen(")
}

// TestHTTPStandaloneClose: Close ends a standalone stream the server
// never ends, and leaves no goroutine reading it.
func TestHTTPStandaloneClose(t *testing.T) {
	f := newFakeHTTP(t)
	f.onListen = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, ": open\n\n")
		<-r.Context().Done()
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	tr := c.Transport().(*HTTPTransport)
	tr.mu.Lock()
	end := tr.listenEnd
	tr.mu.Unlock()
	select {
	case <-end:
		t.Fatal("the standalone stream ended before Close")
	default:
	}
	c.Close()
	select {
	case <-end:
	default:
		t.Fatal("Close returned with the standalone stream's goroutine running")
	}
	if listening() {
		t.Fatal("a standalone stream goroutine is left after Close")
	}
}

// stubAuthorizer hands out a token and counts challenges.
type stubAuthorizer struct {
	mu         sync.Mutex
	token      string
	challenges int
}

func (a *stubAuthorizer) Authorization(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return "Bearer " + a.token, nil
}

func (a *stubAuthorizer) Challenge(_ context.Context, status int, _, _ string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.challenges++
	a.token = "fresh-token-42"
	return status == http.StatusUnauthorized, nil
}

// TestHTTPStandaloneAuth: the standalone GET carries the bearer token a
// POST does; a 401 on it goes to the authorizer once, and the GET is
// retried with the new token. A second 401 ends the stream.
func TestHTTPStandaloneAuth(t *testing.T) {
	for _, always := range []bool{false, true} {
		f := newFakeHTTP(t)
		var mu sync.Mutex
		var tokens []string
		f.onListen = func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			tokens = append(tokens, r.Header.Get("Authorization"))
			mu.Unlock()
			if always || r.Header.Get("Authorization") != "Bearer fresh-token-42" {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
		ts := f.start()
		a := &stubAuthorizer{token: "first-token-42"}
		c := fakeClient(t, ts, &HTTPOptions{Authorizer: a, DefaultRetry: time.Millisecond}, nil)
		waitListenEnd(t, c.Transport().(*HTTPTransport))
		mu.Lock()
		got := strings.Join(tokens, "|")
		mu.Unlock()
		if got != "Bearer first-token-42|Bearer fresh-token-42" || a.challenges != 1 {
			t.Errorf("always 401 %v: GETs carried %q after %d challenges, want the first token, then the fresh one after one", always, got, a.challenges)
		}
		if err := c.Ping(httpCtx(t)); err != nil {
			t.Errorf("Ping: %v", err)
		}
		c.Close()
	}
}

// TestHTTPStandaloneFlood: a standalone stream that sends notifications
// and pings without end does not stop calls from being answered, and
// Close still ends it with no goroutine left.
func TestHTTPStandaloneFlood(t *testing.T) {
	f := newFakeHTTP(t)
	f.onListen = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		note := rpcJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": strings.Repeat("x", 512)}})
		for i := 0; r.Context().Err() == nil; i++ {
			msg := note
			if i%10 == 0 {
				msg = rpcJSON(map[string]any{"jsonrpc": "2.0", "id": i, "method": "ping"})
			}
			if _, err := io.WriteString(w, "data: "+msg+"\n\n"); err != nil {
				return
			}
		}
	}
	ts := f.start()
	c := fakeClient(t, ts, nil, nil)
	ctx := httpCtx(t)
	for i := range 5 {
		want := strings.Repeat("y", i+1)
		if res, err := c.Call(ctx, "echo", map[string]any{"text": want}); err != nil || res.Text() != want {
			t.Fatalf("Call under a flood = %v, %v", res, err)
		}
	}
	tr := c.Transport().(*HTTPTransport)
	tr.mu.Lock()
	end := tr.listenEnd
	tr.mu.Unlock()
	c.Close()
	select {
	case <-end:
	default:
		t.Fatal("Close returned with the flooding stream's goroutine running")
	}
	if listening() {
		t.Fatal("a standalone stream goroutine is left after Close")
	}
}
