package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestServerRequestFloodIsBounded: a server pushes 2000 pings during a
// call while holding every answer open. The client answers at most
// MaxServerRequests at once (so its goroutines stay bounded), refuses the
// excess with a JSON-RPC error, warns once, and the session still works.
func TestServerRequestFloodIsBounded(t *testing.T) {
	const pings = 2000
	release := make(chan struct{})
	full := make(chan struct{}) // closed when 16 answers and a refusal are held
	var answered, refused, open, maxOpen atomic.Int32
	var releaseOnce sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		method, _ := m["method"].(string)
		switch {
		case method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}}`,
				m["id"], MCP_PROTOCOL_VERSION)
		case method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range pings {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i)
			}
			// Once the client has read this, it has seen every ping.
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"all sent\"}}\n\n")
			w.(http.Flusher).Flush()
			<-release
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%v,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", m["id"])
		case method == "ping":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{}}`, m["id"])
		case method != "":
			w.WriteHeader(http.StatusAccepted)
		default: // an answer to a ping: held until the test has looked
			n := open.Add(1)
			if n == MaxServerRequests+1 {
				close(full)
			}
			for {
				old := maxOpen.Load()
				if n <= old || maxOpen.CompareAndSwap(old, n) {
					break
				}
			}
			if _, isErr := m["error"]; isErr {
				refused.Add(1)
			} else {
				answered.Add(1)
			}
			<-release
			open.Add(-1)
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer ts.Close()
	defer releaseOnce.Do(func() { close(release) })

	var warnings []string
	var mu sync.Mutex
	seen := make(chan struct{})
	var seenOnce sync.Once
	base := runtime.NumGoroutine()
	c, err := connectHTTP(httpCtx(t), ts.URL+"/mcp", nil, nil, &ClientOptions{

		OnWarning: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() },
		OnNotification: func(m *Message) {
			if m.Method == "notifications/message" {
				seenOnce.Do(func() { close(seen) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		res, err := c.Call(httpCtx(t), "talk", nil)
		if err == nil && res.Text() != "done" {
			err = fmt.Errorf("result %q", res.Text())
		}
		done <- err
	}()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("the call ended before the flood was read: %v", err)
	}
	// Every ping has been dispatched; without a bound each would hold a
	// goroutine (and an HTTP request) here.
	if n := runtime.NumGoroutine() - base; n > 10*MaxServerRequests {
		t.Errorf("%d more goroutines during a flood of %d pings, want a bound near %d", n, pings, MaxServerRequests)
	}
	select {
	case <-full:
	case <-time.After(10 * time.Second):
		t.Fatalf("only %d answers reached the server", open.Load())
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-done; err != nil {
		t.Fatalf("the call after the flood: %v", err)
	}
	if m := maxOpen.Load(); m > MaxServerRequests+1 {
		t.Errorf("%d answers were in flight at once, want at most %d (+1 refusal)", m, MaxServerRequests)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "more than 16 requests") {
		t.Errorf("warnings %q, want exactly one", warnings)
	}
	if answered.Load() == 0 || refused.Load() == 0 {
		t.Errorf("answered %d and refused %d pings, want some of each", answered.Load(), refused.Load())
	}
	if err := c.Ping(httpCtx(t)); err != nil {
		t.Errorf("the session does not work after the flood: %v", err)
	}
	t.Logf("answered %d, refused %d (of %d; the rest dropped while refusals were held)", answered.Load(), refused.Load(), pings)
}
