package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProxyAddsTheKeyAndKeepsHostAndOrigin(t *testing.T) {
	type seen struct{ auth, host, origin, path string }
	got := make(chan seen, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.Host, r.Header.Get("Origin"), r.URL.Path}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer upstream.Close()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"-target", upstream.URL + "/mcp"}, "k-0123456789abcdef", pw, io.Discard)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := strings.TrimSpace(line)
	if !strings.HasSuffix(proxyURL, "/mcp") || !strings.HasPrefix(proxyURL, "http://127.0.0.1:") {
		t.Fatalf("the proxy printed %q", proxyURL)
	}
	req, _ := http.NewRequest("POST", proxyURL, strings.NewReader("{}"))
	req.Host = "evil.example.com"
	req.Header.Set("Origin", "http://evil.example.com")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s := <-got
	if resp.StatusCode != http.StatusTeapot || s.auth != "Bearer k-0123456789abcdef" || s.host != "evil.example.com" ||
		s.origin != "http://evil.example.com" || s.path != "/mcp" {
		t.Fatalf("status %d, upstream saw %+v", resp.StatusCode, s)
	}
	cancel()
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy did not stop")
	}
}

func TestProxyUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		key  string
		want string
	}{
		{"no key", []string{"-target", "http://127.0.0.1:1/mcp"}, "", "TAI_MCP_KEY"},
		{"no target", nil, "k", "-target"},
		{"not loopback", []string{"-target", "http://127.0.0.1:1/mcp", "-listen", "0.0.0.0:0"}, "k", "loopback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errb strings.Builder
			if code := run(context.Background(), tc.args, tc.key, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tc.want)
			}
		})
	}
}
