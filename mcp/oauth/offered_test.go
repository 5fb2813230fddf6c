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

// TestOfferedAsksOnlyTheServersOrigin: at an add, before anyone asked for
// a login, no URL the server names is fetched: neither its challenge's
// resource_metadata nor the authorization server its metadata names.
func TestOfferedAsksOnlyTheServersOrigin(t *testing.T) {
	elsewhere := "http://127.0.0.1:1" // nothing listens: a request there fails
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource":"http://` + r.Host + `/mcp","authorization_servers":["` + elsewhere + `"]}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := &oauth.Config{Server: "s", URL: srv.URL + "/mcp", Store: &oauth.MemoryStore{}}
	if err := oauth.Offered(context.Background(), cfg, map[string]string{"resource_metadata": elsewhere + "/prm"}); err != nil {
		t.Fatalf("with a resource_metadata: %v", err)
	}
	if err := oauth.Offered(context.Background(), cfg, nil); err != nil {
		t.Fatalf("with a PRM naming another authorization server: %v", err)
	}
}
