package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tai/mcp/oauth"
)

// keyed serves an MCP endpoint that answers 401 with a bare Bearer
// challenge; paths in legacy answer 400 (a 2025-03-26 server's default
// endpoints, present), every other one 404.
func keyed(t *testing.T, legacy ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			w.Header().Set("WWW-Authenticate", `Bearer`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		for _, p := range legacy {
			if r.URL.Path == p {
				http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestNoOAuthSaidPlainly: a server that answers 401 but publishes no
// metadata and has none of the default endpoints offers no OAuth: Offered
// and Login say it wants a key in a header, and no browser opens.
func TestNoOAuthSaidPlainly(t *testing.T) {
	url := keyed(t)
	cfg := &oauth.Config{Server: "keyed", URL: url, Store: &oauth.MemoryStore{}, Timeout: testTimeout}
	var no *oauth.NoOAuthError
	if err := oauth.Offered(context.Background(), cfg, probe(t, url)); !errors.As(err, &no) {
		t.Fatalf("Offered: %v", err)
	}
	err := loginErr(t, url)
	if !errors.As(err, &no) {
		t.Fatalf("Login: %v", err)
	}
	for _, want := range []string{"offers no OAuth login", `"Authorization": "Bearer ${NAME}"`, "secret_set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// TestLegacyDefaultsStillTried: a 2025-03-26 server with no metadata but
// its default endpoints offers OAuth; a refusal at its /register is said
// as that server's refusal.
func TestLegacyDefaultsStillTried(t *testing.T) {
	url := keyed(t, "/authorize", "/register")
	cfg := &oauth.Config{Server: "old", URL: url, Store: &oauth.MemoryStore{}, Timeout: testTimeout}
	if err := oauth.Offered(context.Background(), cfg, probe(t, url)); err != nil {
		t.Fatalf("Offered: %v", err)
	}
	err := loginErr(t, url)
	var no *oauth.NoOAuthError
	if errors.As(err, &no) || !strings.Contains(err.Error(), "client registration") || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("Login: %v", err)
	}
}
