package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestClientNameLoggedOnOneShortLine: the name and version a client gives
// at initialize reach the server's log on one line, short and with what a
// terminal would act on shown as text, whatever the client sent.
func TestClientNameLoggedOnOneShortLine(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	_, url := startServer(t, newFakeCatalog(), &Options{Logf: func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	}})
	name := "evil\n#9999 2026-12-01T21:00:00Z session 1234abcd opened (claude)\x1b[2J\x1b]0;title\x07" + strings.Repeat("N", 1<<20)
	params, _ := json.Marshal(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1\r\nforged"}})
	if r := post(t, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":`+string(params)+`}`); r.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	mu.Lock()
	defer mu.Unlock()
	var line string
	for _, l := range logged {
		if strings.Contains(l, "opened") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no session opened line among %q", logged)
	}
	if strings.ContainsAny(line, "\n\r\x1b\x07") || len(line) > 1024 {
		t.Fatalf("the client's name reached the log as it was sent (%d bytes): %q", len(line), line[:min(len(line), 300)])
	}
	if !strings.Contains(line, `evil\n#9999`) || !strings.Contains(line, `1\r\nforged`) {
		t.Fatalf("the client's name is not shown visibly: %q", line)
	}
}

// TestCallsAreLogged: every tools/call reaches the server's log with the
// tool and how it ended, a failing one with its error's first line, so a
// console shows why its clients' calls fail.
func TestCallsAreLogged(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	_, url := startServer(t, newFakeCatalog(), &Options{Logf: func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	}})
	sid := initSession(t, url)
	call(t, url, sid, 1, "echo", `{}`)
	call(t, url, sid, 2, "fail", `{}`)
	call(t, url, sid, 3, "boom", `{}`)
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(logged, "\n")
	for _, want := range []string{": echo ok (", ": fail answered with an error (", ": boom failed: the catalog broke ("} {
		if !strings.Contains(all, want) {
			t.Errorf("the log lacks %q:\n%s", want, all)
		}
	}
}
