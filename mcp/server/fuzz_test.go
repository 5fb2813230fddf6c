package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzHandler sends random bodies and headers to the handler and checks
// the invariants every answer keeps: no panic, a known status, a JSON body
// (or none for 202), no success without the key, the key never echoed.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), true, "", "", "", initBody)
	f.Add(uint8(0), true, "", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	f.Add(uint8(0), true, "", "2025-11-25", "application/json", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	f.Add(uint8(1), false, "http://evil.example.com", "", "", `{}`)
	f.Add(uint8(2), true, "", "x", "text/plain", "\x00\xff{")
	f.Add(uint8(0), true, "http://localhost:1", "", "", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"n":1e999}}}`)
	f.Add(uint8(0), true, "", "", "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`)
	f.Add(uint8(3), true, "", "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}`)

	cat := newFakeCatalog()
	close(cat.release) // block returns at once
	srv, err := New(cat, &Options{Key: testKey, MaxSessions: 64})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	// A session for the fuzzed requests to use.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer "+testKey)
	srv.ServeHTTP(rec, req)
	sid := rec.Header().Get("Mcp-Session-Id")
	if sid == "" {
		f.Fatal("no session")
	}
	methods := []string{"POST", "GET", "DELETE", "PUT", "OPTIONS"}
	f.Fuzz(func(t *testing.T, sel uint8, auth bool, origin, version, ctype, body string) {
		method := methods[int(sel)%len(methods)]
		req := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+testKey)
		}
		if sel&8 != 0 {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if sel&16 != 0 {
			req.Host = "evil.example.com"
		}
		for name, v := range map[string]string{"Origin": origin, "MCP-Protocol-Version": version, "Content-Type": ctype} {
			if v != "" && validHeaderValue(v) {
				req.Header.Set(name, v)
			}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 202, 400, 401, 403, 404, 405, 413, 415, 429, 503:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if !auth && rec.Code < 300 {
			t.Fatalf("status %d without the key", rec.Code)
		}
		if bytes.Contains(rec.Body.Bytes(), []byte(testKey)) {
			t.Fatalf("the answer holds the key: %s", rec.Body)
		}
		if rec.Code == 202 || (method == "DELETE" && rec.Code == 200) {
			if rec.Body.Len() != 0 {
				t.Fatalf("%d with a body %q", rec.Code, rec.Body)
			}
			return
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d, Content-Type %q, body %q", rec.Code, ct, rec.Body)
		}
		// Keep the table small: a session the fuzzer opened is ended.
		if id := rec.Header().Get("Mcp-Session-Id"); id != "" && id != sid {
			if sess := srv.tab.remove(id); sess != nil {
				sess.close()
			}
		}
	})
}

// validHeaderValue reports whether v can be sent as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// TestIdleConnectionsDoNotBlock opens 500 connections that send nothing,
// then checks that a real client is answered at once, and that the idle
// ones are cut off by the header timeout rather than held.
func TestIdleConnectionsDoNotBlock(t *testing.T) {
	cat := newFakeCatalog()
	srv, err := New(cat, &Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-served
	}()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 500 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial %d: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	// A half-sent request too (slowloris): headers started, never ended.
	slow, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"))

	url := "http://" + ln.Addr().String() + DefaultPath
	start := time.Now()
	sid := initSession(t, url)
	if r := call(t, url, sid, 1, "echo", `{"n":1}`); r.status != http.StatusOK {
		t.Fatalf("a real client beside 500 idle connections: %d", r.status)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a real client waited %v beside 500 idle connections", d)
	}
	if ReadHeaderTimeout > 30*time.Second || ReadHeaderTimeout <= 0 {
		t.Fatalf("ReadHeaderTimeout %v does not bound idle connections", ReadHeaderTimeout)
	}
	// The server closes an idle connection once the header timeout passes.
	idle[0].SetReadDeadline(time.Now().Add(ReadHeaderTimeout + 10*time.Second))
	buf := make([]byte, 1)
	if _, err := idle[0].Read(buf); err == nil {
		t.Fatal("an idle connection got data")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("an idle connection was still open %v after the header timeout", ReadHeaderTimeout+10*time.Second)
	}
}
