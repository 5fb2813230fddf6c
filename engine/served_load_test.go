package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"tai/engine/tool"
)

// rawSession opens an MCP session with plain HTTP and returns its id.
func rawSession(t testing.TB, client *http.Client, url string) string {
	t.Helper()
	resp := rawPost(t, client, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	rawPost(t, client, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

func rawPost(t testing.TB, client *http.Client, url, sid, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+servedKey)
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestServedLoad runs 50 concurrent MCP sessions of 200 tools/call each
// against the real catalogue on loopback: every call must succeed, every
// session must end, and the heap must come back to where it was (within
// 32 MiB), so nothing per call or per session is kept.
func TestServedLoad(t *testing.T) {
	const sessions, calls = 50, 200
	e := newEngine(t, nil, nil)
	addTool(t, e.Tools(), tool.Tool{Name: "echo", Description: "echoes text", Safe: true,
		Parameters: tool.Schema([]string{"text"}, map[string]any{"text": tool.Prop("string", "what to echo")}),
		Run: func(_ context.Context, args map[string]any) (tool.Result, error) {
			return tool.TextResult(args["text"].(string)), nil
		}})
	url := serveEngine(t, e)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions}}
	defer client.CloseIdleConnections()
	// Warm up: one session, so the baseline holds what any run allocates once.
	warm := rawSession(t, client, url)
	rawPost(t, client, url, warm, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"w"}}}`)
	before := heapInUse()

	var failed atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := rawSession(t, client, url)
			for i := range calls {
				text := fmt.Sprintf("s%d-c%d", s, i)
				resp := rawPost(t, client, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, i+1, text))
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"text":"`+text+`"`)) || bytes.Contains(b, []byte(`"isError"`)) {
					failed.Add(1)
					firstErr.Do(func() { t.Errorf("session %d call %d: %d %s", s, i, resp.StatusCode, b) })
				}
			}
			req, _ := http.NewRequest("DELETE", url, nil)
			req.Header.Set("Authorization", "Bearer "+servedKey)
			req.Header.Set("Mcp-Session-Id", sid)
			if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
				failed.Add(1)
			} else {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed", n, sessions*calls)
	}
	client.CloseIdleConnections()
	after := heapInUse()
	t.Logf("heap in use: %d KiB before, %d KiB after %d calls", before>>10, after>>10, sessions*calls)
	if after > before+32<<20 {
		t.Fatalf("the heap grew from %d to %d bytes over %d calls: something is kept per call or session", before, after, sessions*calls)
	}
	tail, err := e.Store().AuditTail(1, "")
	if err != nil || len(tail) != 1 || tail[0].Seq < sessions*calls {
		t.Fatalf("the audit trail holds %v (%v), want every call", tail, err)
	}
}
