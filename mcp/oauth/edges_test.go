package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tai/mcp"
	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// A stock OpenID provider issues a refresh token for offline_access only
// with prompt=consent (OpenID Connect Core §11).
func TestOfflineAccessAsksPromptConsent(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ASScopes: []string{"read", "offline_access"}, ChallengeScope: "read"})
	login(t, srv, config(srv, &oauth.MemoryStore{}))
	q := srv.AuthRequests()[0]
	if !strings.Contains(q.Get("scope"), "offline_access") || q.Get("prompt") != "consent" {
		t.Fatalf("authorization request scope %q prompt %q; want offline_access with prompt=consent", q.Get("scope"), q.Get("prompt"))
	}
	srv2 := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read"})
	login(t, srv2, config(srv2, &oauth.MemoryStore{}))
	if p := srv2.AuthRequests()[0].Get("prompt"); p != "" {
		t.Fatalf("prompt %q without offline_access", p)
	}
}

// A registration names no scope (a stock provider takes it as the client's
// limit), and a step-up with the registered client keeps offline_access.
func TestStepUpWithRegisteredClient(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write",
		ASScopes: []string{"read", "write", "offline_access"}, Refresh: true, LimitToRegisteredScope: true})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	login(t, srv, cfg)
	c, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := call(t, c)
	if err != nil || !strings.Contains(text, "write") {
		t.Fatalf("call after step-up: %q, %v", text, err)
	}
	if rs := srv.RegistrationScopes(); len(rs) != 1 || rs[0] != "" {
		t.Fatalf("registrations' scopes %q; want one registration naming none", rs)
	}
	reqs := srv.AuthRequests()
	last := reqs[len(reqs)-1]
	if len(reqs) != 2 || !strings.Contains(last.Get("scope"), "offline_access") || last.Get("prompt") != "consent" {
		t.Fatalf("%d authorization requests, the step-up's scope %q prompt %q; want offline_access kept", len(reqs), last.Get("scope"), last.Get("prompt"))
	}
}

// A registration an older tai made with the first login's scope is limited
// to it: the step-up's invalid_scope registers afresh, once, and the error
// of a refusal names the authorization server's answer.
func TestStepUpReRegistersALimitedClientOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write"})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	login(t, srv, cfg)
	reg, _ := store.Registration()
	srv.LimitClient(reg.ClientID, "read")
	c, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := call(t, c)
	if err != nil || text != "scope: read write" {
		t.Fatalf("call: %q, %v", text, err)
	}
	if n := len(srv.Registrations()); n != 2 {
		t.Fatalf("%d registrations; want a second one after invalid_scope", n)
	}

	// A server that refuses every client the scope: one new registration,
	// then the authorization server's answer, not the MCP server's 403.
	srv2 := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write", LimitToRegisteredScope: true})
	store2 := &oauth.MemoryStore{}
	cfg2 := config(srv2, store2)
	cfg2.Person.Open = func(raw string) error {
		u, _ := url.Parse(raw)
		q := u.Query()
		if q.Get("scope") != "read" {
			srv2.LimitClient(q.Get("client_id"), "read")
		}
		return srv2.Browser(raw)
	}
	login(t, srv2, cfg2)
	c2, err := connect(t, srv2, oauth.NewAuthorizer(*cfg2), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, c2)
	if err == nil || !strings.Contains(err.Error(), "invalid_scope") || strings.Contains(err.Error(), "403") {
		t.Fatalf("error %v; want the authorization server's invalid_scope without the MCP server's status", err)
	}
	if n := len(srv2.Registrations()); n != 2 {
		t.Fatalf("%d registrations; want exactly one more", n)
	}
}

// A token living a minute is used, not refreshed at once: the refresh
// margin is a tenth of the lifetime (at most 30 s).
func TestShortLivedTokenUsedBeforeRefresh(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, ExpiresIn: time.Minute})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	now := time.Now()
	cfg.Now = func() time.Time { return now }
	first := login(t, srv, cfg)
	a := oauth.NewAuthorizer(*cfg)
	now = now.Add(40 * time.Second)
	h, err := a.Authorization(context.Background())
	if err != nil || h != "Bearer "+first.Access {
		t.Fatalf("40 s into a 60 s token: %q, %v; want the token held", h, err)
	}
	now = now.Add(15 * time.Second)
	h, err = a.Authorization(context.Background())
	if err != nil || h == "Bearer "+first.Access {
		t.Fatalf("55 s into a 60 s token: %q, %v; want a refreshed token", h, err)
	}
	if n := len(srv.TokenRequests()); n != 2 {
		t.Fatalf("%d token requests; want the code exchange and one refresh", n)
	}
}

// publicExcept makes every address public to cfg's requests but the
// listeners of private.
func publicExcept(cfg *oauth.Config, private ...*httptest.Server) {
	ports := map[string]bool{}
	for _, s := range private {
		u, _ := url.Parse(s.URL)
		ports[u.Port()] = true
	}
	oauth.SetPrivateAddr(cfg, func(ip net.IP, port string) bool { return ports[port] })
}

// A remote server's metadata naming registration and token endpoints on
// a private address gets nothing sent there; the same endpoints are fine
// for a server on one (the loopback tests above).
func TestPrivateEndpointOfARemoteServerRefused(t *testing.T) {
	var hits atomic.Int32
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"x"}`)
	}))
	t.Cleanup(inside.Close)
	for _, endpoint := range []string{"registration_endpoint", "authorization_endpoint", "token_endpoint"} {
		t.Run(endpoint, func(t *testing.T) {
			u := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
				switch r.URL.Path {
				case "/prm":
					fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
				case "/.well-known/oauth-authorization-server":
					md := map[string]string{"registration_endpoint": base + "/register", "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token"}
					md[endpoint] = inside.URL + "/" + endpoint
					fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
						base, md["authorization_endpoint"], md["token_endpoint"], md["registration_endpoint"])
				case "/register":
					w.WriteHeader(http.StatusCreated)
					fmt.Fprint(w, `{"client_id":"c"}`)
				default:
					http.NotFound(w, r)
				}
			})
			var opened atomic.Int32
			cfg := &oauth.Config{Server: "remote", URL: u, Store: &oauth.MemoryStore{}, Timeout: time.Second,
				Person: &oauth.Person{Open: func(raw string) error {
					opened.Add(1)
					red, err := oauthtest.RedirectFor(raw) // an authorization endpoint that answers
					if err == nil {
						return oauthtest.FollowRedirects(red)
					}
					return nil
				}}}
			publicExcept(cfg, inside)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			_, err := oauth.Login(ctx, cfg, probe(t, u), "")
			if err == nil || !strings.Contains(err.Error(), "loopback or private address") {
				t.Fatalf("error %v; want the private endpoint refused", err)
			}
			if hits.Load() != 0 {
				t.Fatalf("%d requests reached the private address", hits.Load())
			}
			if endpoint == "authorization_endpoint" && opened.Load() != 0 {
				t.Fatal("the browser was sent to the private address")
			}
		})
	}
}

// A request goes where its connection goes: an endpoint whose name says
// nothing private (it does not resolve, or resolves to a public address)
// but whose connection reaches a private address gets nothing sent there.
// The transport here connects example.com to a loopback listener, as a
// name that resolves differently the second time would.
func TestPrivateAddressCheckedWhereTheConnectionGoes(t *testing.T) {
	var hits atomic.Int32
	inside := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"x"}`)
	}))
	t.Cleanup(inside.Close)
	insideURL, _ := url.Parse(inside.URL)
	named := "https://example.com:" + insideURL.Port()
	u := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		switch r.URL.Path {
		case "/prm":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
				base, base+"/authorize", base+"/token", named+"/register")
		default:
			http.NotFound(w, r)
		}
	})
	transport := inside.Client().Transport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "example.com:") {
			addr = insideURL.Host
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	cfg := &oauth.Config{Server: "remote", URL: u, Store: &oauth.MemoryStore{}, Timeout: time.Second,
		HTTPClient: &http.Client{Transport: transport},
		Person:     &oauth.Person{Open: func(string) error { return nil }}}
	publicExcept(cfg, inside)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := oauth.Login(ctx, cfg, probe(t, u), "")
	if err == nil || !strings.Contains(err.Error(), named+"/register is on a loopback or private address") {
		t.Fatalf("error %v; want the registration endpoint refused as private", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the private address", hits.Load())
	}
}

// Through a proxy on a private address, requests to a public server still
// go (the connection is the proxy's, not the destination's), and an
// endpoint on a private address is refused by its name before the proxy
// is asked.
func TestPrivateAddressCheckedThroughAProxy(t *testing.T) {
	var hits, proxied atomic.Int32
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"x"}`)
	}))
	t.Cleanup(inside.Close)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	proxyURL, _ := url.Parse(proxy.URL)
	u := hostile(t, func(w http.ResponseWriter, r *http.Request, base string) {
		switch r.URL.Path {
		case "/prm":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
				base, base+"/authorize", base+"/token", inside.URL+"/register")
		default:
			http.NotFound(w, r)
		}
	})
	cfg := &oauth.Config{Server: "remote", URL: u, Store: &oauth.MemoryStore{}, Timeout: time.Second,
		HTTPClient: &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}},
		Person:     &oauth.Person{Open: func(string) error { return nil }}}
	publicExcept(cfg, inside, proxy)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := oauth.Login(ctx, cfg, probe(t, u), "")
	if err == nil || !strings.Contains(err.Error(), inside.URL+"/register is on a loopback or private address") {
		t.Fatalf("error %v; want the registration endpoint refused as private", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the private address", hits.Load())
	}
	if proxied.Load() < 2 {
		t.Fatalf("%d requests went through the proxy; want the discovery's", proxied.Load())
	}
}

// A client secret first used with one issuer is not sent to another.
func TestClientSecretBoundToItsIssuer(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"app": "s3cret-value"}})
	var bound string
	cfg := config(srv, &oauth.MemoryStore{})
	cfg.ClientID, cfg.ClientSecret = "app", "s3cret-value"
	cfg.BindClientSecret = func(issuer string) error { bound = issuer; return nil }
	login(t, srv, cfg)
	if bound != srv.Issuer() {
		t.Fatalf("bound to %q; want %q", bound, srv.Issuer())
	}
	other := oauthtest.New(t, oauthtest.Options{NoDCR: true, AuthMethods: []string{"client_secret_basic"}, Clients: map[string]string{"app": ""}})
	cfg2 := config(other, &oauth.MemoryStore{})
	cfg2.ClientID, cfg2.ClientSecret, cfg2.ClientSecretIssuer = "app", "s3cret-value", bound
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := oauth.Login(ctx, cfg2, probe(t, other.URL()), "")
	if err == nil || !strings.Contains(err.Error(), "first used with the authorization server "+bound) {
		t.Fatalf("error %v", err)
	}
	for _, r := range other.TokenRequests() {
		if strings.Contains(r.Authorization+r.Form.Encode(), "s3cret") {
			t.Fatal("the secret reached the other issuer")
		}
	}
	if len(other.AuthRequests()) != 0 {
		t.Fatal("the browser went to the other issuer")
	}
}

// A re-login started by a request in the middle of a handshake may take
// longer than the connect timeout: the person's time in the browser is
// bounded by the login's timeout.
func TestReloginOutlastsTheConnectTimeout(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	slow := 600 * time.Millisecond // the person in the browser, past the connect timeout below
	cfg.Person.Open = func(raw string) error {
		go func() {
			time.Sleep(slow)
			_ = srv.Browser(raw)
		}()
		return nil
	}
	tr, err := mcp.NewHTTPTransport(srv.URL(), nil, &mcp.HTTPOptions{Authorizer: oauth.NewAuthorizer(*cfg)})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient("fake", tr, &mcp.ClientOptions{ConnectTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	if text, err := call(t, c); err != nil || text == "" {
		t.Fatalf("call: %q, %v", text, err)
	}
}

// A browser that does not start is said once, without a doubled "tai".
func TestNoBrowserSaidPlainly(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	var said []string
	cfg.Person.Say = func(l string) { said = append(said, l) }
	cfg.Person.Open = func(raw string) error {
		go srv.Browser(raw) //nolint:errcheck // the login's outcome tells
		return errors.New("xdg-open: not found")
	}
	login(t, srv, cfg)
	text := strings.Join(said, "\n")
	if !strings.Contains(text, "No browser opened (xdg-open: not found); open the URL above yourself.") || strings.Contains(text, "tai could not") {
		t.Fatalf("said %q", said)
	}
}

// A re-login during a call on an open connection (the grant revoked
// mid-session) may take longer than the call's timeout: the person's time
// in the browser is bounded by the login's timeout.
func TestReloginOutlastsTheCallTimeout(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	login(t, srv, cfg)
	slow := 600 * time.Millisecond // the person in the browser, past the call timeout below
	cfg.Person.Open = func(raw string) error {
		go func() {
			time.Sleep(slow)
			_ = srv.Browser(raw)
		}()
		return nil
	}
	tr, err := mcp.NewHTTPTransport(srv.URL(), nil, &mcp.HTTPOptions{Authorizer: oauth.NewAuthorizer(*cfg)})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient("fake", tr, &mcp.ClientOptions{CallTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	srv.RevokeAccess()
	_ = store.DropTokens() // no refresh either: a new login it is
	_ = store.SaveTokens(&oauth.Tokens{Access: "revoked-token"})
	if text, err := call(t, c); err != nil || text == "" {
		t.Fatalf("call: %q, %v", text, err)
	}
	if n := len(srv.AuthRequests()); n != 2 {
		t.Fatalf("%d logins; want the first and the one during the call", n)
	}
}
