package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/mcp"
)

func TestNewRefusesWeakKeys(t *testing.T) {
	tests := []struct {
		name, key, want string
	}{
		{"empty", "", "0 characters"},
		{"short", "fifteen-chars15", "15 characters"},
		{"space", "sixteen chars ok", "space"},
		{"non-ASCII", "sixteen-chärs-ok", "non-ASCII"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(newFakeCatalog(), &Options{Key: tc.key})
			if !errors.Is(err, ErrWeakKey) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "openssl rand") {
				t.Fatalf("New(%q) = %v; want ErrWeakKey naming %q and how to make a key", tc.key, err, tc.want)
			}
			if tc.key != "" && strings.Contains(err.Error(), tc.key) {
				t.Fatalf("the error quotes the key: %v", err)
			}
		})
	}
	if _, err := New(newFakeCatalog(), nil); !errors.Is(err, ErrWeakKey) {
		t.Fatalf("New without options: %v", err)
	}
	if _, err := New(newFakeCatalog(), &Options{Key: "sixteen-chars-ok"}); err != nil {
		t.Fatalf("a 16-character key: %v", err)
	}
}

// TestHTTPRules drives the endpoint's rules one request at a time.
func TestHTTPRules(t *testing.T) {
	cat := newFakeCatalog()
	_, url := startServer(t, cat, nil)
	sid := initSession(t, url)
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	tests := []struct {
		name    string
		method  string
		body    string
		headers []string
		status  int
		code    int    // JSON-RPC error code in the body; 0: a result
		want    string // in the body
		header  string // name=value expected in the answer
	}{
		{name: "no key", body: ping, headers: []string{"Authorization", "-", "Mcp-Session-Id", sid}, status: 401, code: mcp.CodeInvalidRequest, want: "Authorization: Bearer", header: "Www-Authenticate=Bearer"},
		{name: "wrong key", body: ping, headers: []string{"Authorization", "Bearer test-key-0123456789abcdeX", "Mcp-Session-Id", sid}, status: 401, header: "Www-Authenticate=Bearer", code: mcp.CodeInvalidRequest},
		{name: "wrong scheme", body: ping, headers: []string{"Authorization", "Basic " + testKey, "Mcp-Session-Id", sid}, status: 401, code: mcp.CodeInvalidRequest},
		{name: "key in the query", method: "POST?key=" + testKey, body: ping, headers: []string{"Authorization", "-", "Mcp-Session-Id", sid}, status: 401, want: "never in the URL", code: mcp.CodeInvalidRequest},
		{name: "query beside a good key", method: "POST?x=1", body: ping, headers: []string{"Mcp-Session-Id", sid}, status: 401, code: mcp.CodeInvalidRequest},
		{name: "scheme in lower case", body: ping, headers: []string{"Authorization", "bearer " + testKey, "Mcp-Session-Id", sid}, status: 200},
		{name: "ping", body: ping, headers: []string{"Mcp-Session-Id", sid}, status: 200},
		{name: "no session id", body: ping, status: 400, code: mcp.CodeInvalidRequest, want: "Mcp-Session-Id"},
		{name: "unknown session", body: ping, headers: []string{"Mcp-Session-Id", "deadbeef"}, status: 404, code: mcp.CodeInvalidRequest},
		{name: "initialize with a session id", body: initBody, headers: []string{"Mcp-Session-Id", sid}, status: 400, code: mcp.CodeInvalidRequest},
		{name: "bad protocol version", body: ping, headers: []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "1999-01-01"}, status: 400, want: "1999-01-01", code: mcp.CodeInvalidRequest},
		{name: "older protocol version", body: ping, headers: []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-03-26"}, status: 200},
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,"method":"pi`, headers: []string{"Mcp-Session-Id", sid}, status: 400, code: mcp.CodeParseError},
		{name: "empty body", body: ``, headers: []string{"Mcp-Session-Id", sid}, status: 400, code: mcp.CodeParseError},
		{name: "not JSON-RPC", body: `{"id":1,"method":"ping"}`, headers: []string{"Mcp-Session-Id", sid}, status: 400, code: mcp.CodeInvalidRequest},
		{name: "batch", body: "[" + ping + "]", headers: []string{"Mcp-Session-Id", sid}, status: 400, code: mcp.CodeInvalidRequest, want: "batch"},
		{name: "form content type", body: ping, headers: []string{"Mcp-Session-Id", sid, "Content-Type", "application/x-www-form-urlencoded"}, status: 415, code: mcp.CodeInvalidRequest},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":8,"method":"resources/list"}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeMethodNotFound},
		{name: "sampling asked of the server", body: `{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeMethodNotFound},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, headers: []string{"Mcp-Session-Id", sid}, status: 202},
		{name: "response", body: `{"jsonrpc":"2.0","id":"s1","result":{}}`, headers: []string{"Mcp-Session-Id", sid}, status: 202},
		{name: "tools/list with a cursor", body: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"x"}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeInvalidParams},
		{name: "unknown tool", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope"}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeInvalidParams, want: "nope"},
		{name: "call without a name", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeInvalidParams},
		{name: "call without params", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call"}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeInvalidParams},
		{name: "arguments not an object", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeInvalidParams},
		{name: "call without arguments", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo"}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200},
		{name: "failed tool", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fail"}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, want: `"isError":true`},
		{name: "catalog error", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"boom"}}`, headers: []string{"Mcp-Session-Id", sid}, status: 200, code: mcp.CodeInternalError},
		{name: "evil origin", body: ping, headers: []string{"Mcp-Session-Id", sid, "Origin", "http://evil.example.com"}, status: 403},
		{name: "evil origin on a loopback port", body: ping, headers: []string{"Mcp-Session-Id", sid, "Origin", "http://evil.example.com:1234"}, status: 403},
		{name: "null origin", body: ping, headers: []string{"Mcp-Session-Id", sid, "Origin", "null"}, status: 403},
		{name: "loopback origin, other port", body: ping, headers: []string{"Mcp-Session-Id", sid, "Origin", "http://localhost:3000"}, status: 200},
		{name: "loopback IP origin", body: ping, headers: []string{"Mcp-Session-Id", sid, "Origin", "http://127.0.0.1:6274"}, status: 200},
		{name: "IPv6 loopback origin", body: ping, headers: []string{"Mcp-Session-Id", sid, "Origin", "http://[::1]:5173"}, status: 200},
		{name: "rebound host name", body: initBody, headers: []string{"Host", "evil.example.com", "Origin", "http://evil.example.com"}, status: 403},
		{name: "rebound host without origin", body: ping, headers: []string{"Mcp-Session-Id", sid, "Host", "evil.example.com:8765"}, status: 403},
		{name: "IP host", body: ping, headers: []string{"Mcp-Session-Id", sid, "Host", "192.0.2.7:8765"}, status: 200},
		{name: "localhost host", body: ping, headers: []string{"Mcp-Session-Id", sid, "Host", "localhost:8765"}, status: 200},
		{name: "GET", method: "GET", headers: []string{"Mcp-Session-Id", sid, "Accept", "text/event-stream"}, status: 405, header: "Allow=POST, DELETE"},
		{name: "PUT", method: "PUT", body: ping, headers: []string{"Mcp-Session-Id", sid}, status: 405},
		{name: "DELETE without a session", method: "DELETE", status: 400},
		{name: "DELETE of an unknown session", method: "DELETE", headers: []string{"Mcp-Session-Id", "deadbeef"}, status: 404},
		{name: "other path", method: "POST/other", body: ping, headers: []string{"Mcp-Session-Id", sid}, status: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method, u := tc.method, url
			if method == "" {
				method = "POST"
			}
			if i := strings.IndexAny(method, "?/"); i > 0 {
				if method[i] == '/' {
					u = strings.TrimSuffix(url, DefaultPath) + method[i:]
				} else {
					u = url + method[i:]
				}
				method = method[:i]
			}
			var body io.Reader
			if tc.body != "" || method == "POST" {
				body = strings.NewReader(tc.body)
			}
			r := do(t, method, u, body, tc.headers...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d; body %s", r.status, tc.status, r.body)
			}
			if tc.header != "" {
				name, value, _ := strings.Cut(tc.header, "=")
				if got := r.header.Get(name); !strings.HasPrefix(got, value) {
					t.Errorf("%s = %q, want %q", name, got, value)
				}
			}
			if tc.want != "" && !strings.Contains(string(r.body), tc.want) {
				t.Errorf("body %s does not contain %q", r.body, tc.want)
			}
			if strings.Contains(string(r.body), testKey) {
				t.Errorf("the answer repeats the key: %s", r.body)
			}
			if r.status == 202 {
				if len(r.body) != 0 {
					t.Errorf("202 with a body: %q", r.body)
				}
				return
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q; every answer is one JSON message", ct)
			}
			_, code, _ := r.rpc(t)
			if tc.code != code && (tc.code != 0 || r.status == 200) {
				t.Errorf("error code %d, want %d; body %s", code, tc.code, r.body)
			}
		})
	}
	// DELETE ends the session; it is unknown afterwards.
	if r := do(t, "DELETE", url, nil, "Mcp-Session-Id", sid); r.status != 200 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if r := post(t, url, ping, "Mcp-Session-Id", sid); r.status != 404 {
		t.Fatalf("after DELETE: %d %s", r.status, r.body)
	}
	if got := cat.closedIDs(); len(got) != 1 || got[0] != sid {
		t.Fatalf("closed sessions %v, want %s", got, sid)
	}
}

func TestInitialize(t *testing.T) {
	_, url := startServer(t, newFakeCatalog(), &Options{Version: "9.9", Instructions: "be kind"})
	tests := []struct {
		name, asked, want string
	}{
		{"current", "2025-11-25", "2025-11-25"},
		{"older supported", "2025-06-18", "2025-06-18"},
		{"oldest supported", "2025-03-26", "2025-03-26"},
		{"unknown", "2099-01-01", mcp.MCP_PROTOCOL_VERSION},
	}
	ids := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, tc.asked))
			res, code, msg := r.rpc(t)
			if code != 0 {
				t.Fatalf("error %d %s", code, msg)
			}
			if res["protocolVersion"] != tc.want {
				t.Errorf("protocolVersion %v, want %s", res["protocolVersion"], tc.want)
			}
			caps, _ := res["capabilities"].(map[string]any)
			if _, ok := caps["tools"]; !ok {
				t.Errorf("capabilities %v lack tools", caps)
			}
			info, _ := res["serverInfo"].(map[string]any)
			if info["name"] != "tai" || info["version"] != "9.9" || res["instructions"] != "be kind" {
				t.Errorf("initialize result %v", res)
			}
			id := r.header.Get("Mcp-Session-Id")
			if len(id) != 64 || ids[id] || strings.Trim(id, "0123456789abcdef") != "" {
				t.Errorf("session id %q is not 64 fresh hex digits", id)
			}
			ids[id] = true
		})
	}
	if r := post(t, url, `{"jsonrpc":"2.0","method":"initialize","params":{}}`); r.status != 400 {
		t.Errorf("initialize as a notification: %d %s", r.status, r.body)
	}
	if r := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}`); r.status != 200 {
		t.Errorf("initialize with bad params: %d", r.status)
	} else if _, code, _ := r.rpc(t); code != mcp.CodeInvalidParams {
		t.Errorf("initialize with bad params: code %d", code)
	}
}

// TestBodyCap checks that a body over the cap gets 413 from its
// Content-Length, or after one byte past the cap when it has none, and
// that the rest is not read.
func TestBodyCap(t *testing.T) {
	_, url := startServer(t, newFakeCatalog(), nil)
	sid := initSession(t, url)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			body := &bodyCounter{n: 11 << 20}
			req, err := http.NewRequestWithContext(testCtx(t), "POST", url, body)
			if err != nil {
				t.Fatal(err)
			}
			if !chunked {
				req.ContentLength = body.n
			}
			req.Header.Set("Authorization", "Bearer "+testKey)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Session-Id", sid)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// The server may close the connection before the client
				// finished sending; the status must still have come.
				t.Fatalf("request: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "MCP_HTTP_MAX_BODY") {
				t.Fatalf("status %d %s", resp.StatusCode, b)
			}
			if got := body.count(); got > mcp.MCP_HTTP_MAX_BODY+(1<<20) {
				t.Fatalf("the server read %d bytes of an %d-byte body", got, body.n)
			}
		})
	}
	// A body just under the cap is read and answered.
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + strings.Repeat("x", mcp.MCP_HTTP_MAX_BODY-200) + `"}}}`
	if r := post(t, url, big, "Mcp-Session-Id", sid); r.status != 200 {
		t.Fatalf("a body under the cap: %d", r.status)
	}
}

func TestIdleSessionsExpire(t *testing.T) {
	clock := &testClock{now: time.Unix(1_000_000, 0)}
	cat := newFakeCatalog()
	srv, url := startServer(t, cat, &Options{SessionIdle: time.Hour, Now: clock.Now})
	old := initSession(t, url)
	abandoned := initSession(t, url)
	clock.advance(59 * time.Minute)
	if r := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Session-Id", old); r.status != 200 {
		t.Fatalf("before the idle limit: %d", r.status)
	}
	clock.advance(59 * time.Minute) // old was seen 59 min ago, abandoned 118
	if r := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Session-Id", old); r.status != 200 {
		t.Fatalf("a session in use expired: %d", r.status)
	}
	if srv.Sessions() != 2 {
		t.Fatalf("%d sessions before the sweep", srv.Sessions())
	}
	// The abandoned one is dropped by the sweep that an initialize runs.
	fresh := initSession(t, url)
	if srv.Sessions() != 2 || !slices.Contains(cat.closedIDs(), abandoned) {
		t.Fatalf("after the sweep: %d sessions, closed %v", srv.Sessions(), cat.closedIDs())
	}
	if r := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Session-Id", abandoned); r.status != 404 {
		t.Fatalf("an expired session: %d", r.status)
	}
	// An expired session is also dropped on its next access.
	clock.advance(61 * time.Minute)
	if r := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Session-Id", fresh); r.status != 404 {
		t.Fatalf("expired on access: %d", r.status)
	}
	if !slices.Contains(cat.closedIDs(), fresh) {
		t.Fatalf("an expired session was not closed: %v", cat.closedIDs())
	}
}

func TestMaxSessions(t *testing.T) {
	_, url := startServer(t, newFakeCatalog(), &Options{MaxSessions: 2})
	initSession(t, url)
	initSession(t, url)
	r := post(t, url, initBody)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("a third session: %d %s", r.status, r.body)
	}
}

// TestSessionsRunConcurrentlyAndInOrder blocks a call in one session and
// checks that another session's ping and calls go on, that the blocked
// session's next request waits its turn, and that requests of one session
// run one at a time in the order sent.
func TestSessionsRunConcurrentlyAndInOrder(t *testing.T) {
	cat := newFakeCatalog()
	_, url := startServer(t, cat, nil)
	a, b := initSession(t, url), initSession(t, url)
	done := make(chan reply, 2)
	go func() { done <- call(t, url, a, 1, "block", `{"name":"first"}`) }()
	if got := <-cat.started; got != "first" {
		t.Fatalf("started %q", got)
	}
	go func() { done <- call(t, url, a, 2, "echo", `{"n":2}`) }()
	// Session b is not held up, nor is a's ping.
	if r := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Session-Id", b); r.status != 200 {
		t.Fatalf("ping on b: %d", r.status)
	}
	if r := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "Mcp-Session-Id", a); r.status != 200 {
		t.Fatalf("ping on a while a call runs: %d", r.status)
	}
	for i := range 5 {
		if r := call(t, url, b, 10+i, "echo", fmt.Sprintf(`{"n":%d}`, i)); r.status != 200 {
			t.Fatalf("echo on b: %d", r.status)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("a's second call did not wait for the first: %s", r.body)
	default:
	}
	close(cat.release)
	for range 2 {
		if r := <-done; r.status != 200 {
			t.Fatalf("a's calls: %d %s", r.status, r.body)
		}
	}
	var aCalls []string
	for _, c := range cat.callLog() {
		if strings.HasPrefix(c, a[:4]) {
			aCalls = append(aCalls, c)
		}
	}
	if strings.Join(aCalls, ",") != a[:4]+":block:<nil>,"+a[:4]+":echo:2" {
		t.Fatalf("session a ran %v", aCalls)
	}
}

func TestOrderWithinASession(t *testing.T) {
	cat := newFakeCatalog()
	srv, url := startServer(t, cat, nil)
	sid := initSession(t, url)
	// A blocked call holds the session; requests queued behind it run in
	// the order they arrived, one at a time.
	first := make(chan reply, 1)
	go func() { first <- call(t, url, sid, 1, "block", `{"name":"gate"}`) }()
	<-cat.started
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call(t, url, sid, 100+i, "echo", fmt.Sprintf(`{"n":%d}`, i))
		}()
		// Each request reaches the queue before the next is sent.
		waitFor(t, func() bool { return queued(srv, sid) == i+1 })
	}
	close(cat.release)
	<-first
	wg.Wait()
	var got []string
	for _, c := range cat.callLog() {
		got = append(got, strings.TrimPrefix(c, sid[:4]+":"))
	}
	want := []string{"block:<nil>"}
	for i := range 8 {
		want = append(want, fmt.Sprintf("echo:%d", i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("calls ran as %v, want %v", got, want)
	}
}

// queued reports how many requests wait for the session's turn.
func queued(srv *Server, sid string) int {
	sess := srv.tab.get(sid)
	if sess == nil {
		return -1
	}
	return sess.turn.queued()
}

// TestQueueCap fills one session's queue behind a blocked call: one more
// request gets 429, a ping still passes, and the queue drains in order.
func TestQueueCap(t *testing.T) {
	cat := newFakeCatalog()
	srv, url := startServer(t, cat, nil)
	sid := initSession(t, url)
	first := make(chan reply, 1)
	go func() { first <- call(t, url, sid, 1, "block", `{"name":"gate"}`) }()
	<-cat.started
	var wg sync.WaitGroup
	statuses := make(chan int, MaxQueued)
	for i := range MaxQueued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- call(t, url, sid, 100+i, "echo", `{}`).status
		}()
	}
	waitFor(t, func() bool { return queued(srv, sid) == MaxQueued })
	if r := call(t, url, sid, 999, "echo", `{}`); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("request %d: %d %s", MaxQueued+2, r.status, r.body)
	}
	if r := post(t, url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, "Mcp-Session-Id", sid); r.status != 200 {
		t.Fatalf("ping with a full queue: %d", r.status)
	}
	close(cat.release)
	<-first
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != 200 {
			t.Fatalf("a queued request got %d", s)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCancelNotificationStopsTheCall(t *testing.T) {
	cat := newFakeCatalog()
	_, url := startServer(t, cat, nil)
	sid := initSession(t, url)
	done := make(chan reply, 1)
	go func() { done <- call(t, url, sid, 42, "block", `{"name":"c"}`) }()
	<-cat.started
	if r := post(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"user"}}`, "Mcp-Session-Id", sid); r.status != 202 {
		t.Fatalf("cancel: %d", r.status)
	}
	r := <-done
	if _, code, msg := r.rpc(t); code != mcp.CodeInternalError || !strings.Contains(msg, "cancelled") {
		t.Fatalf("cancelled call answered %s", r.body)
	}
}

// TestDeleteDuringACall ends a session while its call runs: the call is
// cancelled and the state closed after it returned, never during.
func TestDeleteDuringACall(t *testing.T) {
	cat := newFakeCatalog()
	_, url := startServer(t, cat, nil)
	sid := initSession(t, url)
	done := make(chan reply, 1)
	go func() { done <- call(t, url, sid, 1, "block", `{"name":"d"}`) }()
	<-cat.started
	if r := do(t, "DELETE", url, nil, "Mcp-Session-Id", sid); r.status != 200 {
		t.Fatalf("DELETE: %d", r.status)
	}
	r := <-done
	if _, code, _ := r.rpc(t); code != mcp.CodeInternalError {
		t.Fatalf("the call of a deleted session answered %s", r.body)
	}
	waitFor(t, func() bool { return len(cat.closedIDs()) == 1 })
	if cat.session(sid).overlapped() {
		t.Fatal("the session was closed while its call ran")
	}
}

// TestServeShutsDownGracefully cancels Serve's context with a call in
// flight: Serve returns within the grace period plus a bound, the call is
// cancelled, and every session is closed.
func TestServeShutsDownGracefully(t *testing.T) {
	cat := newFakeCatalog()
	srv, err := New(cat, &Options{Key: testKey, ShutdownGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String() + DefaultPath
	a, b := initSession(t, url), initSession(t, url)
	done := make(chan reply, 1)
	go func() { done <- call(t, url, a, 1, "block", `{"name":"s"}`) }()
	<-cat.started
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10s of its context ending")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	r := <-done
	if _, code, _ := r.rpc(t); code != mcp.CodeInternalError {
		t.Fatalf("the in-flight call answered %s", r.body)
	}
	closed := cat.closedIDs()
	if !slices.Contains(closed, a) || !slices.Contains(closed, b) {
		t.Fatalf("closed %v, want both sessions", closed)
	}
}
