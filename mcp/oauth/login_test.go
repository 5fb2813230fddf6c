package oauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

func TestDiscoveryVariants(t *testing.T) {
	tests := []struct {
		name  string
		opts  oauthtest.Options
		want  []string // requests that must be made
		never []string // requests that must not be made
	}{
		{"PRM from the header, RFC 8414 metadata", oauthtest.Options{PRM: oauthtest.PRMHeader},
			[]string{"mcp GET /custom/metadata/prm.json", "as GET /.well-known/oauth-authorization-server"},
			[]string{"mcp GET /.well-known/oauth-protected-resource/mcp", "mcp GET /.well-known/oauth-protected-resource"}},
		{"path-aware PRM means the root is never asked", oauthtest.Options{PRM: oauthtest.PRMPath, Metadata: oauthtest.MetaOIDC},
			[]string{"mcp GET /.well-known/oauth-protected-resource/mcp", "as GET /.well-known/oauth-authorization-server", "as GET /.well-known/openid-configuration"},
			[]string{"mcp GET /.well-known/oauth-protected-resource"}},
		{"root PRM after the path-aware one, issuer with a path", oauthtest.Options{PRM: oauthtest.PRMRoot, IssuerPath: "/tenant1"},
			[]string{"mcp GET /.well-known/oauth-protected-resource/mcp", "mcp GET /.well-known/oauth-protected-resource", "as GET /.well-known/oauth-authorization-server/tenant1"},
			[]string{"as GET /.well-known/oauth-authorization-server"}},
		{"OIDC path-inserted", oauthtest.Options{IssuerPath: "/tenant1", Metadata: oauthtest.MetaOIDC},
			[]string{"as GET /.well-known/oauth-authorization-server/tenant1", "as GET /.well-known/openid-configuration/tenant1"},
			[]string{"as GET /.well-known/oauth-authorization-server", "as GET /tenant1/.well-known/openid-configuration"}},
		{"OIDC appended", oauthtest.Options{IssuerPath: "/tenant1", Metadata: oauthtest.MetaOIDCAppend},
			[]string{"as GET /.well-known/oauth-authorization-server/tenant1", "as GET /.well-known/openid-configuration/tenant1", "as GET /tenant1/.well-known/openid-configuration"},
			[]string{"as GET /.well-known/oauth-authorization-server", "as GET /.well-known/openid-configuration"}},
		{"2025-03-26 with root metadata and prefixed endpoints", oauthtest.Options{PRM: oauthtest.PRMNone, RoutePrefix: "/oauth"},
			[]string{"mcp GET /.well-known/oauth-authorization-server", "mcp GET /oauth/authorize", "mcp POST /oauth/token"}, nil},
		{"2025-03-26 with no metadata at all", oauthtest.Options{PRM: oauthtest.PRMNone, Metadata: oauthtest.MetaNone},
			[]string{"mcp GET /.well-known/oauth-authorization-server", "mcp POST /register", "mcp GET /authorize", "mcp POST /token"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oauthtest.New(t, tt.opts)
			tok := login(t, srv, config(srv, &oauth.MemoryStore{}))
			if got := callTool(t, srv.URL(), tok.Access); got != http.StatusOK {
				t.Fatalf("tools/call with the new token: HTTP %d", got)
			}
			paths := srv.Paths()
			for _, w := range tt.want {
				if !slices.Contains(paths, w) {
					t.Errorf("no request %q; made %q", w, paths)
				}
			}
			for _, n := range tt.never {
				if slices.Contains(paths, n) {
					t.Errorf("request %q was made; it must not be", n)
				}
			}
			ar := srv.AuthRequests()
			if len(ar) != 1 || ar[0].Get("resource") == "" || ar[0].Get("code_challenge_method") != "S256" || len(ar[0].Get("state")) < 20 {
				t.Fatalf("authorization requests %v: want one with resource, S256 and a state", ar)
			}
			tr := srv.TokenRequests()
			if len(tr) != 1 || tr[0].Form.Get("resource") != ar[0].Get("resource") {
				t.Fatalf("token request resource %q, authorization request resource %q: want the same", tr[0].Form.Get("resource"), ar[0].Get("resource"))
			}
		})
	}
}

func TestRefusedBeforeAnyAuthorizationRequest(t *testing.T) {
	tests := []struct {
		name string
		opts oauthtest.Options
		want []string // all in the error
	}{
		{"no S256", oauthtest.Options{NoS256: true}, []string{"S256", "will not log in"}},
		{"issuer mismatch", oauthtest.Options{WrongIssuer: true}, []string{"https://issuer.example.com", "issuer"}},
		{"resource of another server", oauthtest.Options{Resource: "https://evil.example.com/mcp"}, []string{"https://evil.example.com/mcp", "/mcp", "not for this server"}},
		{"resource of another path", oauthtest.Options{PRM: oauthtest.PRMPath, Resource: "http://127.0.0.1:1/other"}, []string{"/other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oauthtest.New(t, tt.opts)
			cfg := config(srv, &oauth.MemoryStore{})
			opened := false
			cfg.Person.Open = func(string) error { opened = true; return nil }
			_, err := oauth.Login(context.Background(), cfg, probe(t, srv.URL()), "")
			if err == nil {
				t.Fatal("login succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if opened || len(srv.AuthRequests()) > 0 || len(srv.Registrations()) > 0 {
				t.Fatalf("an authorization request or registration was made (opened %v)", opened)
			}
		})
	}
}

func TestScopeSelection(t *testing.T) {
	tests := []struct {
		name string
		opts oauthtest.Options
		want string
	}{
		{"challenge scope wins", oauthtest.Options{ChallengeScope: "files:read", PRMScopes: []string{"a", "b"}}, "files:read"},
		{"else all of scopes_supported", oauthtest.Options{PRMScopes: []string{"a", "b"}}, "a b"},
		{"else none", oauthtest.Options{}, ""},
		{"offline_access when the server lists it", oauthtest.Options{PRMScopes: []string{"mcp:basic"}, ASScopes: []string{"mcp:basic", "offline_access"}}, "mcp:basic offline_access"},
		{"no offline_access when it does not", oauthtest.Options{PRMScopes: []string{"mcp:basic"}, ASScopes: []string{"mcp:basic", "mcp:read"}}, "mcp:basic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oauthtest.New(t, tt.opts)
			login(t, srv, config(srv, &oauth.MemoryStore{}))
			ar := srv.AuthRequests()
			if got := ar[0].Get("scope"); got != tt.want || (tt.want == "" && ar[0].Has("scope")) {
				t.Fatalf("scope %q (present %v), want %q", got, ar[0].Has("scope"), tt.want)
			}
		})
	}
}

func TestTokenEndpointAuthMethods(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("pre:s3cr%2Ft"))
	tests := []struct {
		name     string
		opts     oauthtest.Options
		clientID string
		secret   string
		check    func(oauthtest.TokenRequest) bool
	}{
		{"none", oauthtest.Options{}, "", "", func(r oauthtest.TokenRequest) bool {
			return r.Authorization == "" && r.Form.Get("client_id") != "" && !r.Form.Has("client_secret")
		}},
		{"client_secret_post from the registration", oauthtest.Options{RegisterSecret: "regsecret", RegisterMethod: "client_secret_post", AuthMethods: []string{"client_secret_post", "client_secret_basic"}}, "", "",
			func(r oauthtest.TokenRequest) bool {
				return r.Authorization == "" && r.Form.Get("client_secret") == "regsecret"
			}},
		{"client_secret_basic from the metadata", oauthtest.Options{NoDCR: true, Clients: map[string]string{"pre": "s3cr/t"}, AuthMethods: []string{"client_secret_basic"}}, "pre", "s3cr/t",
			func(r oauthtest.TokenRequest) bool {
				return r.Authorization == basic && !r.Form.Has("client_secret")
			}},
		{"client_secret_post from the metadata", oauthtest.Options{NoDCR: true, Clients: map[string]string{"pre": "s3cr/t"}, AuthMethods: []string{"client_secret_post"}}, "pre", "s3cr/t",
			func(r oauthtest.TokenRequest) bool {
				return r.Authorization == "" && r.Form.Get("client_id") == "pre" && r.Form.Get("client_secret") == "s3cr/t"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oauthtest.New(t, tt.opts)
			cfg := config(srv, &oauth.MemoryStore{})
			cfg.ClientID, cfg.ClientSecret = tt.clientID, tt.secret
			login(t, srv, cfg)
			if tr := srv.TokenRequests(); !tt.check(tr[0]) {
				t.Fatalf("token request %+v", tr[0])
			}
		})
	}
}

func TestClientIdentity(t *testing.T) {
	t.Run("pre-registered, no registration", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"my-app": ""}})
		cfg := config(srv, &oauth.MemoryStore{})
		cfg.ClientID = "my-app"
		login(t, srv, cfg)
		if got := srv.AuthRequests()[0].Get("client_id"); got != "my-app" || len(srv.Registrations()) != 0 {
			t.Fatalf("client_id %q, registrations %v", got, srv.Registrations())
		}
	})
	t.Run("client metadata document", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{CIMD: true})
		cfg := config(srv, &oauth.MemoryStore{})
		cfg.ClientMetadataURL = "https://tai.example/client.json"
		login(t, srv, cfg)
		if got := srv.AuthRequests()[0].Get("client_id"); got != cfg.ClientMetadataURL || len(srv.Registrations()) != 0 {
			t.Fatalf("client_id %q, registrations %v", got, srv.Registrations())
		}
	})
	t.Run("a metadata document URL the server does not take falls to DCR", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		cfg := config(srv, &oauth.MemoryStore{})
		cfg.ClientMetadataURL = "https://tai.example/client.json"
		login(t, srv, cfg)
		if len(srv.Registrations()) != 1 {
			t.Fatalf("registrations %v", srv.Registrations())
		}
	})
	t.Run("DCR kept and reused", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := &oauth.MemoryStore{}
		login(t, srv, config(srv, store))
		login(t, srv, config(srv, store))
		reg, _ := store.Registration()
		if regs := srv.Registrations(); len(regs) != 1 || reg == nil || reg.ClientID != regs[0] || reg.Issuer != srv.Issuer() {
			t.Fatalf("registrations %v, kept %+v", regs, reg)
		}
		ar := srv.AuthRequests()
		if ar[0].Get("redirect_uri") != ar[1].Get("redirect_uri") {
			t.Fatalf("the second login used redirect %q, the registration has %q", ar[1].Get("redirect_uri"), ar[0].Get("redirect_uri"))
		}
	})
	t.Run("registration of another issuer is dropped", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := &oauth.MemoryStore{}
		_ = store.SaveRegistration(&oauth.Registration{Issuer: "https://old.example", ClientID: "old", RedirectURI: "http://127.0.0.1:1/callback"})
		login(t, srv, config(srv, store))
		if reg, _ := store.Registration(); reg == nil || reg.ClientID == "old" || len(srv.Registrations()) != 1 {
			t.Fatalf("kept %+v", reg)
		}
	})
	t.Run("invalid_client drops the registration", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := &oauth.MemoryStore{}
		login(t, srv, config(srv, store))
		srv.FailNextToken("invalid_client")
		_, err := oauth.Login(context.Background(), config(srv, store), probe(t, srv.URL()), "")
		if err == nil {
			t.Fatal("login with a forgotten client succeeded")
		}
		if reg, _ := store.Registration(); reg != nil {
			t.Fatalf("registration kept after %v", err)
		}
		login(t, srv, config(srv, store))
		if len(srv.Registrations()) != 2 {
			t.Fatalf("registrations %v, want a second one", srv.Registrations())
		}
	})
	t.Run("no way in asks for a client id", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{NoDCR: true})
		cfg := config(srv, &oauth.MemoryStore{})
		cfg.Hints.ClientID = func(server string) string { return "log in to " + server + " with its id" }
		_, err := oauth.Login(context.Background(), cfg, probe(t, srv.URL()), "")
		var ce *oauth.ClientIDNeededError
		if !errors.As(err, &ce) || ce.Server != "fake" || !strings.HasSuffix(err.Error(), "(a port of your choice), then log in to fake with its id") ||
			!strings.Contains(err.Error(), "no dynamic client registration") {
			t.Fatalf("error %v", err)
		}
		if len(srv.AuthRequests()) != 0 {
			t.Fatal("an authorization request was made")
		}
	})
	t.Run("nobody there", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		cfg := config(srv, &oauth.MemoryStore{})
		cfg.Person = nil
		cfg.Hints.Login = func(server string) string { return "log in to " + server + " yourself" }
		_, err := oauth.Login(context.Background(), cfg, probe(t, srv.URL()), "")
		var ln *oauth.LoginNeededError
		if !errors.As(err, &ln) || ln.Server != "fake" || !strings.HasSuffix(err.Error(), "; log in to fake yourself") {
			t.Fatalf("error %v", err)
		}
	})
}
