package mcp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tai/mcp/httppolicy"
)

// TestHTTPRedirectsStayInTheOrigin: an MCP server that answers with a
// redirect to another origin (another host or port, absolute or
// scheme-relative Location, any redirect status) gets an error naming both
// URLs, and the other origin receives nothing: no header, key or body. A
// redirect within the origin is followed.
func TestHTTPRedirectsStayInTheOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		http.Error(w, "should never be reached", http.StatusTeapot)
	}))
	defer other.Close()
	otherHost := strings.TrimPrefix(other.URL, "http://")
	// The same host name under another name is another origin too.
	otherByName := "http://localhost:" + other.URL[strings.LastIndex(other.URL, ":")+1:]

	for _, tc := range []struct {
		name     string
		status   int
		location string
	}{
		{"307 absolute", http.StatusTemporaryRedirect, other.URL + "/mcp"},
		{"308 absolute", http.StatusPermanentRedirect, other.URL + "/mcp"},
		{"301", http.StatusMovedPermanently, other.URL + "/mcp"},
		{"302", http.StatusFound, other.URL + "/mcp"},
		{"303", http.StatusSeeOther, other.URL + "/mcp"},
		{"307 scheme-relative to another port", http.StatusTemporaryRedirect, "//" + otherHost + "/mcp"},
		{"308 to the same port under another host name", http.StatusPermanentRedirect, otherByName + "/mcp"},
		{"307 to https on the same host and port", http.StatusTemporaryRedirect, "https://127.0.0.1:1/mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := elsewhere.Load()
			redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.location, tc.status)
			}))
			defer redirecting.Close()
			if tc.name == "307 to https on the same host and port" {
				tc.location = strings.Replace(redirecting.URL, "http://", "https://", 1) + "/mcp"
			}
			_, err := connectHTTP(httpCtx(t), "http://user:pw-in-url@"+strings.TrimPrefix(redirecting.URL, "http://")+"/mcp",
				map[string]string{"X-Api-Key": "key-never-elsewhere", "Private-Token": "tok-never-elsewhere"},
				nil, &ClientOptions{ConnectTimeout: 5 * time.Second})
			if err == nil {
				t.Fatal("connecting through a cross-origin redirect succeeded")
			}
			if !errors.Is(err, httppolicy.ErrCrossOriginRedirect) {
				t.Errorf("error does not wrap httppolicy.ErrCrossOriginRedirect: %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, redirecting.URL) || !strings.Contains(msg, "redirected to") {
				t.Errorf("error does not name both URLs: %v", err)
			}
			for _, s := range []string{"pw-in-url", "key-never-elsewhere", "tok-never-elsewhere"} {
				if strings.Contains(msg, s) {
					t.Errorf("error shows %q: %v", s, err)
				}
			}
			if n := elsewhere.Load() - before; n != 0 {
				t.Errorf("the other origin got %d requests", n)
			}
		})
	}

	// Within the origin a redirect is followed, body and headers resent.
	f := newFakeHTTP(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", f)
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	c, err := connectHTTP(httpCtx(t), ts.URL+"/old", map[string]string{"X-Api-Key": "same-origin-key"}, nil, nil)
	if err != nil {
		t.Fatalf("a same-origin redirect was not followed: %v", err)
	}
	defer c.Close()
	reqs := f.requests()
	if len(reqs) == 0 || reqs[0].Header.Get("X-Api-Key") != "same-origin-key" || reqs[0].rpcMethod() != "initialize" {
		t.Fatalf("the redirected initialize did not arrive whole: %+v", reqs)
	}
}
