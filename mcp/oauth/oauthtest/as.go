package oauthtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// endpointPrefix is where the authorization server's endpoints live.
func (s *Server) endpointPrefix() string {
	if s.opts.PRM == PRMNone {
		return s.opts.RoutePrefix
	}
	return s.opts.IssuerPath
}

// metadataPath is where the metadata is served ("" for none).
func (s *Server) metadataPath() string {
	p := s.opts.IssuerPath
	if s.opts.PRM == PRMNone {
		p = ""
	}
	switch s.opts.Metadata {
	case MetaOAuth:
		return "/.well-known/oauth-authorization-server" + p
	case MetaOIDC:
		return "/.well-known/openid-configuration" + p
	case MetaOIDCAppend:
		return p + "/.well-known/openid-configuration"
	}
	return ""
}

func (s *Server) routeAS(mux *http.ServeMux) {
	pre := s.endpointPrefix()
	if mp := s.metadataPath(); mp != "" {
		mux.HandleFunc("GET "+mp, s.metadata)
	}
	mux.HandleFunc("GET "+pre+"/authorize", s.authorize)
	mux.HandleFunc("POST "+pre+"/token", s.token)
	if !s.opts.NoDCR {
		mux.HandleFunc("POST "+pre+"/register", s.register)
	}
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	base := s.as.URL + s.endpointPrefix()
	issuer := s.Issuer()
	if s.opts.WrongIssuer {
		issuer = "https://issuer.example.com"
	}
	md := map[string]any{
		"issuer":                                issuer,
		"authorization_endpoint":                base + "/authorize",
		"token_endpoint":                        base + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": s.opts.AuthMethods,
	}
	if !s.opts.NoS256 {
		md["code_challenge_methods_supported"] = []string{"S256"}
	} else {
		md["code_challenge_methods_supported"] = []string{"plain"}
	}
	if !s.opts.NoDCR {
		md["registration_endpoint"] = base + "/register"
	}
	if s.opts.ASScopes != nil {
		md["scopes_supported"] = s.opts.ASScopes
	}
	if s.opts.CIMD {
		md["client_id_metadata_document_supported"] = true
	}
	writeJSON(w, http.StatusOK, md)
}

func newToken(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// knownClient reports whether id may use the authorization endpoint.
func (s *Server) knownClient(id string) bool {
	if _, ok := s.clients[id]; ok {
		return true
	}
	return s.opts.CIMD && strings.HasPrefix(id, "https://")
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authReqs = append(s.authReqs, q)
	redirect := q.Get("redirect_uri")
	ru, err := url.Parse(redirect)
	if err != nil || redirect == "" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	if !s.knownClient(q.Get("client_id")) {
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	back := ru.Query()
	back.Set("state", q.Get("state"))
	limit, limited := s.limits[q.Get("client_id")]
	switch {
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code":
		back.Set("error", "invalid_request")
	case limited && !scopeHolds(limit, q.Get("scope")):
		back.Set("error", "invalid_scope")
		back.Set("error_description", "requested scopes are not allowed for this client")
	default:
		code := newToken("code-")
		s.codes[code] = grant{client: q.Get("client_id"), scope: q.Get("scope"), resource: q.Get("resource"),
			redirect: redirect, challenge: q.Get("code_challenge")}
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
		Scope        string   `json:"scope"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	id := newToken("client-")
	s.clients[id] = s.opts.RegisterSecret
	s.methods[id] = s.opts.RegisterMethod
	s.registered = append(s.registered, id)
	s.regScopes = append(s.regScopes, req.Scope)
	if s.opts.LimitToRegisteredScope && req.Scope != "" {
		s.limits[id] = req.Scope
	}
	s.mu.Unlock()
	out := map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "grant_types": req.GrantTypes}
	if s.opts.RegisterSecret != "" {
		out["client_secret"] = s.opts.RegisterSecret
	}
	if s.opts.RegisterMethod != "" {
		out["token_endpoint_auth_method"] = s.opts.RegisterMethod
	}
	writeJSON(w, http.StatusCreated, out)
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// clientAuth finds the client of a token request and checks its secret.
func (s *Server) clientAuth(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	want, known := s.clients[id]
	if !known {
		return id, s.opts.CIMD && strings.HasPrefix(id, "https://")
	}
	if want != "" && secret != want {
		return id, false
	}
	switch m := s.methods[id]; {
	case m == "client_secret_basic" && !basic, m == "client_secret_post" && basic:
		return id, false
	}
	return id, true
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenReqs = append(s.tokenReqs, TokenRequest{Form: r.PostForm, Authorization: r.Header.Get("Authorization")})
	if code := s.failNext; code != "" {
		s.failNext = ""
		oauthErr(w, http.StatusBadRequest, code, "told to fail; the request carried "+r.PostForm.Get("refresh_token")+r.PostForm.Get("code"))
		return
	}
	client, ok := s.clientAuth(r)
	if !ok {
		oauthErr(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	f := r.PostForm
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		c, found := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		switch {
		case !found || c.client != client:
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown code")
			return
		case s256(f.Get("code_verifier")) != c.challenge:
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "PKCE verifier does not match")
			return
		case f.Get("redirect_uri") != c.redirect:
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs")
			return
		case f.Get("resource") != c.resource:
			oauthErr(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's")
			return
		}
		g = c
	case "refresh_token":
		old, found := s.refresh[f.Get("refresh_token")]
		if !found || old.client != client {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		if f.Get("resource") != old.resource {
			oauthErr(w, http.StatusBadRequest, "invalid_target", "resource differs")
			return
		}
		g = old
		if s.opts.Rotate {
			delete(s.refresh, f.Get("refresh_token"))
		}
	default:
		oauthErr(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	g.expiry = s.now.Add(s.opts.ExpiresIn)
	access := newToken("access-")
	s.access[access] = g
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.opts.ExpiresIn / time.Second)}
	if g.scope != "" {
		out["scope"] = g.scope
	}
	if s.opts.Refresh && (f.Get("grant_type") == "authorization_code" || s.opts.Rotate) {
		rt := newToken("refresh-")
		s.refresh[rt] = g
		out["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, out)
}

// scopeHolds reports whether the space-separated held has every scope of want.
func scopeHolds(held, want string) bool {
	h := strings.Fields(held)
	for _, s := range strings.Fields(want) {
		if !slices.Contains(h, s) {
			return false
		}
	}
	return true
}
