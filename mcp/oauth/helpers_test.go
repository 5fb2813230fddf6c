package oauth_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// testTimeout bounds every login in these tests.
const testTimeout = 10 * time.Second

// config is a login config against srv whose browser follows redirects.
func config(srv *oauthtest.Server, store oauth.TokenStore) *oauth.Config {
	return &oauth.Config{Server: "fake", URL: srv.URL(), Store: store, Timeout: testTimeout,
		Person: &oauth.Person{Open: srv.Browser}}
}

// probe sends an anonymous initialize and returns the Bearer challenge's
// parameters of the 401 (nil when the server did not refuse it).
func probe(t *testing.T, url string) map[string]string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil
	}
	p, _ := oauth.Bearer(resp.Header.Get("WWW-Authenticate"))
	if p == nil {
		p = map[string]string{}
	}
	return p
}

// login runs a whole login against srv and fails the test on an error.
func login(t *testing.T, srv *oauthtest.Server, cfg *oauth.Config) *oauth.Tokens {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	tok, err := oauth.Login(ctx, cfg, probe(t, cfg.URL), "")
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return tok
}

// callTool sends tools/call with the token and returns the HTTP status.
func callTool(t *testing.T, url, access string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// freePort returns a loopback port nothing listens on just now.
func freePort(t *testing.T) int { return oauthtest.FreePort(t) }

func itoa(n int) string { return strconv.Itoa(n) }
