package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// hostile serves a protected resource whose PRM and authorization server
// answers are written by the test.
func hostile(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, base string)) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/mcp" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/prm"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		handle(w, r, srv.URL)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func loginErr(t *testing.T, url string) error {
	t.Helper()
	opened := false
	cfg := &oauth.Config{Server: "bad", URL: url, Store: &oauth.MemoryStore{}, Timeout: testTimeout,
		Person: &oauth.Person{Open: func(string) error { opened = true; return nil }}}
	_, err := oauth.Login(context.Background(), cfg, probe(t, url), "")
	if err == nil {
		t.Fatal("the login succeeded")
	}
	if opened {
		t.Fatal("the browser was opened")
	}
	return err
}

func TestPlainHTTPToAnotherHostRefused(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["http://auth.example.com"]}`, base+"/mcp")
	})
	err := loginErr(t, url)
	if !strings.Contains(err.Error(), "plain http to auth.example.com") {
		t.Fatalf("error %v", err)
	}
}

func TestMetadataEndpointsOverPlainHTTPRefused(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		switch r.URL.Path {
		case "/prm":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"http://evil.example.com/authorize","token_endpoint":%q,"code_challenge_methods_supported":["S256"],"registration_endpoint":%q}`,
				base, base+"/token", base+"/register")
		default:
			http.NotFound(w, r)
		}
	})
	if err := loginErr(t, url); !strings.Contains(err.Error(), "authorization_endpoint") || !strings.Contains(err.Error(), "evil.example.com") {
		t.Fatalf("error %v", err)
	}
}

func TestCrossOriginRedirectOfMetadataRefused(t *testing.T) {
	other := oauthtest.New(t, oauthtest.Options{PRM: oauthtest.PRMRoot})
	url := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		// The PRM "moved" to another origin.
		http.Redirect(w, r, other.URL()+"/../.well-known/oauth-protected-resource", http.StatusFound)
	})
	if err := loginErr(t, url); !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("error %v", err)
	}
}

func TestHugeTokenResponseRefused(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		switch r.URL.Path {
		case "/prm":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"code_challenge_methods_supported":["S256"],"registration_endpoint":%q}`,
				base, base+"/authorize", base+"/token", base+"/register")
		case "/register":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"client_id":"c"}`)
		case "/authorize":
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=abc&state="+q.Get("state"), http.StatusFound)
		case "/token":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"access_token":"`))
			chunk := []byte(strings.Repeat("A", 64<<10))
			for i := 0; i < 64; i++ { // 4 MiB, no Content-Length
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	})
	cfg := &oauth.Config{Server: "bad", URL: url, Store: &oauth.MemoryStore{}, Timeout: testTimeout,
		Person: &oauth.Person{Open: oauthtest.FollowRedirects}}
	_, err := oauth.Login(context.Background(), cfg, probe(t, url), "")
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("error %v", err)
	}
}

func TestSilentAuthorizationServerTimesOut(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		if r.URL.Path == "/prm" {
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
			return
		}
		<-r.Context().Done() // never answers
	})
	cfg := &oauth.Config{Server: "bad", URL: url, Store: &oauth.MemoryStore{}, Timeout: testTimeout,
		RequestTimeout: 50 * time.Millisecond, Person: &oauth.Person{Open: func(string) error { return nil }}}
	_, err := oauth.Login(context.Background(), cfg, probe(t, url), "")
	if err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("error %v", err)
	}
}
