package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "test-key-0123456789abcdef"

// fakeCatalog serves echo (returns its arguments), fail (a failed result),
// boom (a Go error), and block (waits for release or the end of ctx). It
// records sessions opened and closed and calls made.
type fakeCatalog struct {
	mu       sync.Mutex
	sessions map[string]*fakeSession
	opened   []string
	closed   []string
	calls    []string
	release  chan struct{}
	started  chan string // block's name argument, when it starts
}

func newFakeCatalog() *fakeCatalog {
	return &fakeCatalog{release: make(chan struct{}), started: make(chan string, 100)}
}

func (c *fakeCatalog) Tools() []Tool {
	obj := json.RawMessage(`{"type":"object"}`)
	return []Tool{
		{Name: "echo", Description: "echoes its arguments", InputSchema: obj},
		{Name: "fail", Description: "fails", InputSchema: obj},
		{Name: "boom", Description: "errors", InputSchema: obj},
		{Name: "block", Description: "waits", InputSchema: obj},
	}
}

func (c *fakeCatalog) Open(_ context.Context, id string) (Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opened = append(c.opened, id)
	s := &fakeSession{cat: c, id: id}
	if c.sessions == nil {
		c.sessions = map[string]*fakeSession{}
	}
	c.sessions[id] = s
	return s, nil
}

func (c *fakeCatalog) session(id string) *fakeSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

func (s *fakeSession) overlapped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overlap
}

func (c *fakeCatalog) closedIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.closed...)
}

func (c *fakeCatalog) callLog() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

type fakeSession struct {
	cat *fakeCatalog
	id  string

	mu      sync.Mutex
	inCall  bool
	closed  bool
	overlap bool // a Call began while another ran, or after Close
}

func (s *fakeSession) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	if s.inCall || s.closed {
		s.overlap = true
	}
	s.inCall = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inCall = false
		s.mu.Unlock()
	}()
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	s.cat.mu.Lock()
	s.cat.calls = append(s.cat.calls, fmt.Sprintf("%s:%s:%v", s.id[:4], name, a["n"]))
	s.cat.mu.Unlock()
	switch name {
	case "echo":
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(args)}}})
		return b, nil
	case "fail":
		return json.RawMessage(`{"content":[{"type":"text","text":"it failed"}],"isError":true}`), nil
	case "boom":
		return nil, errors.New("the catalog broke")
	case "progress":
		// Unlisted: reports two steps (and one going back, dropped) when
		// the client asked for progress, then answers.
		if report := ProgressFrom(ctx); report != nil {
			report(1, 2, "first")
			report(0.5, 2, "back")
			report(2, 2, "")
		}
		return json.RawMessage(`{"content":[{"type":"text","text":"progressed"}]}`), nil
	case "block":
		label, _ := a["name"].(string)
		s.cat.started <- label
		select {
		case <-s.cat.release:
			return json.RawMessage(`{"content":[{"type":"text","text":"released"}]}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
}

func (s *fakeSession) Close() {
	s.mu.Lock()
	if s.inCall {
		s.overlap = true
	}
	s.closed = true
	s.mu.Unlock()
	s.cat.mu.Lock()
	s.cat.closed = append(s.cat.closed, s.id)
	s.cat.mu.Unlock()
}

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// startServer runs a Server for cat on an httptest server and returns the
// endpoint URL.
func startServer(t *testing.T, cat Catalog, o *Options) (*Server, string) {
	t.Helper()
	opts := Options{Key: testKey, Version: "test"}
	if o != nil {
		opts = *o
		if opts.Key == "" {
			opts.Key = testKey
		}
	}
	srv, err := New(cat, &opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return srv, hs.URL + DefaultPath
}

// reply is an HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// rpc decodes the body as one JSON-RPC response.
func (r reply) rpc(t *testing.T) (result map[string]any, code int, message string) {
	t.Helper()
	var m struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("the body is not a JSON-RPC message (%v): %q", err, r.body)
	}
	if m.Error != nil {
		return nil, m.Error.Code, m.Error.Message
	}
	return m.Result, 0, ""
}

// do sends one request; headers are name, value pairs; a header value of
// "-" removes a default header.
func do(t *testing.T, method, url string, body io.Reader, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "-" {
			req.Header.Del(headers[i])
			continue
		}
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func post(t *testing.T, url, body string, headers ...string) reply {
	t.Helper()
	return do(t, http.MethodPost, url, strings.NewReader(body), headers...)
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// initSession opens a session and returns its id.
func initSession(t *testing.T, url string) string {
	t.Helper()
	r := post(t, url, initBody)
	if r.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	id := r.header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize answered without Mcp-Session-Id")
	}
	if n := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", id); n.status != http.StatusAccepted || len(n.body) != 0 {
		t.Fatalf("notifications/initialized: %d %q", n.status, n.body)
	}
	return id
}

func call(t *testing.T, url, sid string, id int, tool, args string) reply {
	t.Helper()
	return post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args), "Mcp-Session-Id", sid)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// bodyCounter is a request body of n bytes of JSON-ish filler that counts
// how much of it was read.
type bodyCounter struct {
	mu   sync.Mutex
	n    int64
	read int64
}

func (b *bodyCounter) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.read >= b.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), b.n-b.read)
	copy(p, bytes.Repeat([]byte(" "), int(k)))
	b.read += k
	return int(k), nil
}

func (b *bodyCounter) count() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.read
}
