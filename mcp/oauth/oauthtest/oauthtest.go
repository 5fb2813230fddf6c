package oauthtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Where the protected resource metadata is served (Options.PRM).
const (
	// PRMHeader: at a custom path, named by the 401's resource_metadata.
	PRMHeader = "header"
	// PRMPath: at the path-aware well-known URL, not in the header.
	PRMPath = "path"
	// PRMRoot: at the root well-known URL, not in the header.
	PRMRoot = "root"
	// PRMNone: no PRM at all (a 2025-03-26 server; the authorization
	// server is the MCP server's origin).
	PRMNone = "none"
)

// Where the authorization server metadata is served (Options.Metadata).
const (
	// MetaOAuth: RFC 8414, path-inserted for an issuer with a path.
	MetaOAuth = "oauth"
	// MetaOIDC: OpenID Connect, path-inserted.
	MetaOIDC = "oidc"
	// MetaOIDCAppend: OpenID Connect, appended to the issuer's path.
	MetaOIDCAppend = "oidc-append"
	// MetaNone: no metadata (with PRMNone: the 2025-03-26 fallback endpoints).
	MetaNone = "none"
)

// Options choose the variant. The zero value is a PRM named by the 401
// header, RFC 8414 metadata at an issuer without a path, DCR, S256 and
// the auth method none.
type Options struct {
	// PRM says where the protected resource metadata is (PRMHeader default).
	PRM string
	// Metadata says where the authorization server metadata is (MetaOAuth default).
	Metadata string
	// IssuerPath gives the issuer a path, such as "/tenant1".
	IssuerPath string
	// RoutePrefix puts the 2025-03-26 server's endpoints under a prefix
	// its root metadata names.
	RoutePrefix string
	// NoS256 leaves S256 out of code_challenge_methods_supported.
	NoS256 bool
	// WrongIssuer makes the metadata name another issuer.
	WrongIssuer bool
	// Resource overrides the PRM's resource ("" for the server's URL).
	Resource string
	// PRMScopes is the PRM's scopes_supported.
	PRMScopes []string
	// ASScopes is the authorization server's scopes_supported.
	ASScopes []string
	// ChallengeScope is the scope of the 401's challenge.
	ChallengeScope string
	// AuthMethods is token_endpoint_auth_methods_supported (default [none]).
	AuthMethods []string
	// NoDCR leaves registration_endpoint out.
	NoDCR bool
	// RegisterSecret makes registration issue this client_secret.
	RegisterSecret string
	// RegisterMethod makes registration assign this token_endpoint_auth_method.
	RegisterMethod string
	// CIMD sets client_id_metadata_document_supported.
	CIMD bool
	// Clients are pre-registered clients: id to secret ("" for public).
	Clients map[string]string
	// Refresh makes the token endpoint issue refresh tokens.
	Refresh bool
	// Rotate makes a refresh issue a new refresh token.
	Rotate bool
	// ExpiresIn is the access tokens' lifetime (default an hour).
	ExpiresIn time.Duration
	// CallScope is the scope tools/call needs (403 insufficient_scope without it).
	CallScope string
	// StubbornCallScope keeps answering 403 to tools/call whatever the token holds.
	StubbornCallScope bool
	// OpenInitialize lets initialize through without a token.
	OpenInitialize bool
	// LimitToRegisteredScope makes a registration's scope the client's
	// limit, as a stock OpenID provider does: an authorization request
	// for more is refused with invalid_scope.
	LimitToRegisteredScope bool
}

// TokenRequest is one request the token endpoint received.
type TokenRequest struct {
	// Form is the request's form.
	Form url.Values
	// Authorization is its Authorization header.
	Authorization string
}

// Server is the pair of fakes. Its fields are safe to read after the
// requests that fill them have finished; use the methods under -race.
type Server struct {
	opts Options
	as   *httptest.Server
	mcp  *httptest.Server

	mu         sync.Mutex
	paths      []string
	authReqs   []url.Values
	tokenReqs  []TokenRequest
	registered []string
	regScopes  []string
	limits     map[string]string // client id -> the scope it is limited to
	clients    map[string]string // client id -> secret
	methods    map[string]string // client id -> assigned auth method
	codes      map[string]grant
	access     map[string]grant
	refresh    map[string]grant
	failNext   string
	now        time.Time
}

// grant is what a code or token stands for.
type grant struct {
	client, scope, resource, redirect, challenge string
	expiry                                       time.Time
}

// New starts the fakes; they stop when the test ends.
func New(t testing.TB, opts Options) *Server {
	if opts.PRM == "" {
		opts.PRM = PRMHeader
	}
	if opts.Metadata == "" {
		opts.Metadata = MetaOAuth
	}
	if opts.AuthMethods == nil {
		opts.AuthMethods = []string{"none"}
	}
	if opts.ExpiresIn == 0 {
		opts.ExpiresIn = time.Hour
	}
	s := &Server{opts: opts, clients: map[string]string{}, methods: map[string]string{},
		limits: map[string]string{}, codes: map[string]grant{}, access: map[string]grant{}, refresh: map[string]grant{}, now: time.Now()}
	for id, sec := range opts.Clients {
		s.clients[id] = sec
	}
	asMux := http.NewServeMux()
	mcpMux := http.NewServeMux()
	s.mcp = httptest.NewServer(s.logged(mcpMux))
	if opts.PRM == PRMNone {
		s.as = s.mcp
		s.routeAS(mcpMux)
	} else {
		s.as = httptest.NewServer(s.logged(asMux))
		s.routeAS(asMux)
	}
	s.routeMCP(mcpMux)
	t.Cleanup(func() {
		s.mcp.Close()
		if s.as != s.mcp {
			s.as.Close()
		}
	})
	return s
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.mcp.URL + "/mcp" }

// Issuer is the authorization server's issuer identifier.
func (s *Server) Issuer() string {
	if s.opts.PRM == PRMNone {
		return s.as.URL
	}
	return s.as.URL + s.opts.IssuerPath
}

// Paths lists every request path either fake received, in order, as
// "as GET /path" or "mcp POST /mcp".
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

// AuthRequests lists the authorization requests' query parameters.
func (s *Server) AuthRequests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authReqs)
}

// TokenRequests lists the token endpoint's requests.
func (s *Server) TokenRequests() []TokenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokenReqs)
}

// Registrations lists the client ids registered dynamically.
func (s *Server) Registrations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.registered)
}

// RegistrationScopes lists the scope each registration request named
// ("" for none), in order.
func (s *Server) RegistrationScopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.regScopes)
}

// LimitClient limits the client id to scope, as a registration that named
// that scope would at a stock OpenID provider.
func (s *Server) LimitClient(id, scope string) {
	s.mu.Lock()
	s.limits[id] = scope
	s.mu.Unlock()
}

// Advance moves the fakes' clock (token expiry) forward by d.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

// RevokeAccess makes every access token issued so far invalid (a 401
// mid-call); refresh tokens stay good.
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	s.access = map[string]grant{}
	s.mu.Unlock()
}

// FailNextToken makes the token endpoint's next answer the OAuth error
// code (invalid_grant, invalid_client, ...).
func (s *Server) FailNextToken(code string) {
	s.mu.Lock()
	s.failNext = code
	s.mu.Unlock()
}

// Browser follows the authorization URL's redirects as a browser would,
// ending at the client's loopback redirect URI. It is an oauth.Person's Open.
func (s *Server) Browser(rawURL string) error {
	return FollowRedirects(rawURL)
}

// FollowRedirects GETs rawURL and follows every redirect (bounded); it
// fails when the last answer is not 200.
func FollowRedirects(rawURL string) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(rawURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the browser ended on HTTP %d at %s", resp.StatusCode, resp.Request.URL.Redacted())
	}
	return nil
}

// RedirectFor performs the authorization request at rawURL without
// following its redirect, returning the redirect URL the browser would go
// to: what a person copies from the address bar of a browser elsewhere.
func RedirectFor(rawURL string) (string, error) {
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := c.Get(rawURL)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("no redirect (HTTP %d)", resp.StatusCode)
	}
	return loc, nil
}

func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "mcp"
		if s.as != nil && s.as != s.mcp && strings.HasSuffix(s.as.URL, r.Host) {
			who = "as"
		}
		s.mu.Lock()
		s.paths = append(s.paths, who+" "+r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func s256(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// FreePort returns a loopback port nothing listens on just now, for a
// login with a fixed callback port.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
