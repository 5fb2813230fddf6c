package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/httppolicy"
	"tai/mcp/oauth"
)

// PersonFunc returns whoever can finish an OAuth login in this process
// (shown the URL, their browser opened, a redirect URL pasted back), and a
// stop function called when the login ends; nil when nobody can.
type PersonFunc func(ctx context.Context) (*oauth.Person, func())

// LoginOptions are what a person may give a login beyond the server.
type LoginOptions struct {
	// Profile is enabled after the login ("" for the current one).
	Profile string
	// ClientID is a client id registered with the provider by hand.
	ClientID string
	// ClientSecret is that client's secret as a ${NAME} reference to a
	// vault secret (never the value itself).
	ClientSecret string
	// ClientMetadataURL is an https client ID metadata document URL.
	ClientMetadataURL string
	// CallbackPort fixes the loopback redirect's port.
	CallbackPort int
}

// oauth returns o's client settings as an entry's OAuth part.
func (o LoginOptions) oauth() mcp.OAuth {
	return mcp.OAuth{ClientID: o.ClientID, ClientSecret: o.ClientSecret, CallbackPort: o.CallbackPort, ClientMetadataURL: o.ClientMetadataURL}
}

// settingsOf is the entry's OAuth part (the zero value when it has none).
func settingsOf(e mcp.Entry) mcp.OAuth {
	if e.OAuth == nil {
		return mcp.OAuth{}
	}
	return *e.OAuth
}

// oauthConfig is the login configuration of server at url with the
// client settings o.
func (b *Bridge) oauthConfig(server, url string, o mcp.OAuth, person *oauth.Person) (oauth.Config, error) {
	cfg := oauth.Config{Server: server, URL: url, Store: vaultTokens{b.store, server}, Person: person, Hints: b.opts.OAuthHints,
		ClientID: o.ClientID, ClientMetadataURL: o.ClientMetadataURL, CallbackPort: o.CallbackPort}
	if b.opts.Client != nil && b.opts.Client.HTTP != nil {
		cfg.HTTPClient = b.opts.Client.HTTP.Client
	}
	if o.ClientSecret != "" {
		name, ok := mcp.SecretRef(o.ClientSecret)
		if !ok {
			return cfg, fmt.Errorf("the client secret of %s must be a ${NAME} reference to a vault secret", server)
		}
		if strings.HasPrefix(name, mcp.OAuthSecretPrefix) {
			return cfg, fmt.Errorf("the client secret of %s names %s, one of the secrets tai keeps for its own OAuth logins; give the secret your provider issued, stored under a name of your own", server, o.ClientSecret)
		}
		v, meta, err := b.store.SecretGet(name)
		if err != nil {
			return cfg, fmt.Errorf("the client secret of %s: %w", server, err)
		}
		cfg.ClientSecret = v
		// The secret is bound to the issuer it was first sent to.
		cfg.ClientSecretIssuer = metaString(meta, secretIssuerMeta)
		cfg.BindClientSecret = func(issuer string) error {
			m := map[string]any{}
			for k, v := range meta {
				m[k] = v
			}
			m[secretIssuerMeta] = issuer
			return b.store.SecretSet(name, v, m)
		}
	}
	return cfg, nil
}

// secretIssuerMeta is the meta key of a vault secret used as an OAuth
// client secret: the issuer it was first sent to, and the only one it goes to.
const secretIssuerMeta = "oauth_issuer"

// keepSettings stores o as server's OAuth part, so later logins and
// refreshes use the settings a login succeeded with.
func (b *Bridge) keepSettings(server string, o mcp.OAuth) error {
	row, err := b.store.ServerGet(server)
	if err != nil {
		return err
	}
	row.OAuth = oauthRow(&o)
	return b.store.ServerPut(row)
}

// oauthable reports whether e is an http entry whose Authorization tai's
// OAuth login provides (it sets none of its own).
func oauthable(e mcp.Entry) bool {
	if e.Transport != mcp.TransportHTTP {
		return false
	}
	for k := range e.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}

// authorizerFor returns the Authorizer of server's connections: one per
// server per process (the step-up limit counts per server), without a
// person: a connection that needs a login fails naming /mcp login.
func (b *Bridge) authorizerFor(e mcp.Entry) (mcp.Authorizer, error) {
	server := e.Name
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.auths[server]; a != nil {
		return a, nil
	}
	cfg, err := b.oauthConfig(server, e.URL, settingsOf(e), nil)
	if err != nil {
		return nil, err
	}
	cfg.PersonFor = b.personFor
	a := oauth.NewAuthorizer(cfg)
	b.auths[server] = a
	return a, nil
}

// withAuthorizer returns o with an Authorizer for e when e is oauthable.
func (b *Bridge) withAuthorizer(o *mcp.ClientOptions, e mcp.Entry) (*mcp.ClientOptions, error) {
	if !oauthable(e) {
		return o, nil
	}
	a, err := b.authorizerFor(e)
	if err != nil {
		return nil, err
	}
	var ho mcp.HTTPOptions
	if o.HTTP != nil {
		ho = *o.HTTP
	}
	ho.Authorizer = a
	o.HTTP = &ho
	return o, nil
}

// forgetAuthorizer drops server's Authorizer (new tokens or settings).
func (b *Bridge) forgetAuthorizer(server string) {
	b.mu.Lock()
	delete(b.auths, server)
	b.mu.Unlock()
}

// unauthorized reports whether err is the server's 401.
func unauthorized(err error) bool {
	var he *mcp.MCPHTTPError
	return errors.As(err, &he) && he.Status == http.StatusUnauthorized
}

// noOAuth is the *oauth.NoOAuthError of a server that answered 401 (err)
// but offers no OAuth login; nil when it offers one, or when discovery
// cannot tell (a login then says why).
func (b *Bridge) noOAuth(ctx context.Context, ex mcp.Entry, err error) error {
	var he *mcp.MCPHTTPError
	if !errors.As(err, &he) {
		return nil
	}
	params, _ := oauth.Bearer(he.WWWAuthenticate)
	cfg, cerr := b.oauthConfig(ex.Name, ex.URL, settingsOf(ex), nil)
	if cerr != nil {
		return nil
	}
	var no *oauth.NoOAuthError
	if errors.As(oauth.Offered(ctx, &cfg, params), &no) {
		return no
	}
	return nil
}

// Login logs in to server with OAuth: probes it anonymously (as far as
// tools/list; a server that needs no login is refused), discovers,
// registers or reuses a client, opens the browser (or takes the pasted
// redirect), stores the tokens, verifies with a live tools/list, and
// enables the server for the profile. It asks first when a model calls it,
// and needs a person: in a served session it fails at once.
func (b *Bridge) Login(ctx context.Context, server string, o LoginOptions) (string, error) {
	s, err := b.reload()
	if err != nil {
		return "", err
	}
	st := s.servers[server]
	if st == nil {
		return "", notRegistered(server)
	}
	if st.entry.Transport != mcp.TransportHTTP {
		return "", fmt.Errorf("mcp server %q runs as a process (stdio); OAuth logins are for http servers: give a stdio server its credentials in env", server)
	}
	if !oauthable(st.entry) {
		return "", fmt.Errorf("mcp server %q sets its own Authorization header; tai's OAuth login would replace it: remove the header first if the server wants an OAuth login", server)
	}
	a := b.approver(ctx)
	if err := b.attended(ctx, a, "log in to MCP server "+server); err != nil {
		return "", err
	}
	person, stop := b.personFor(ctx)
	if person == nil {
		return "", &oauth.LoginNeededError{Server: server, Reason: "a login opens a browser, and nobody is at this session", Hint: b.loginHint(server)}
	}
	defer stop()
	if tool.CallerFrom(ctx).ByModel && a.Mode() == tool.Interactive {
		q := fmt.Sprintf("Log in to MCP server %s (%s) with OAuth in your browser? [y/N]", server, httppolicy.RedactURL(st.entry.URL))
		if note := mcp.HostNote(st.entry.URL); note != "" {
			q = note + "\n" + q
		}
		ok, err := a.Decide(ctx, q)
		if err != nil || !ok {
			return "", fmt.Errorf("not logged in to %s: the person said no", server)
		}
	}
	if o.ClientSecret != "" {
		name, ok := mcp.SecretRef(o.ClientSecret)
		if !ok {
			return "", errors.New("client_secret must be a ${NAME} reference to a vault secret, not the secret itself: store it with tai.vault.secret_set first")
		}
		// A model naming a secret to send to the server's authorization
		// server, with nobody asked: refused, as for an entry it adds.
		if tool.CallerFrom(ctx).ByModel && a.Mode() != tool.Interactive {
			return "", fmt.Errorf("refused to log in to %s: a model asked under --%s to send ${%s} as the client secret, with nobody asked; a person must run the login (/mcp login)", server, a.Mode(), name)
		}
	}
	// the flags are for this login; they are kept only once it succeeds
	settings := settingsOf(st.entry).Over(o.oauth())
	if err := settings.Validate(); err != nil {
		return "", err
	}
	ex, _, err := b.expand(st.entry)
	if err != nil {
		return "", err
	}
	challenge, err := b.probe(ctx, ex)
	if err != nil {
		return "", err
	}
	cfg, err := b.oauthConfig(server, ex.URL, settings, person)
	if err != nil {
		return "", err
	}
	tok, err := oauth.Login(ctx, &cfg, challenge, "")
	if err != nil {
		b.auditAdmin("login", server, "failed")
		return "", mcp.Reworded(err, b.shown(err.Error()))
	}
	if settings != settingsOf(st.entry) {
		if err := b.keepSettings(server, settings); err != nil {
			return "", err
		}
		ex.OAuth = &settings
	}
	b.forgetAuthorizer(server)
	b.dropConn(server)
	n, err := b.verifyLogin(ctx, st, ex)
	if err != nil {
		return "", fmt.Errorf("logged in to %s, but the server refused the new token: %w", server, err)
	}
	profile, err := b.SetEnabled(ctx, server, o.Profile, true)
	if err != nil {
		return "", err
	}
	b.auditAdmin("login", server, "ok")
	var msg strings.Builder
	fmt.Fprintf(&msg, "Logged in to %s", server)
	if tok.Scope != "" {
		fmt.Fprintf(&msg, " (scope %s)", tok.Scope)
	}
	fmt.Fprintf(&msg, "; %d tools; enabled for profile %q.", n, profile)
	if tok.Refresh == "" && !tok.Expiry.IsZero() {
		fmt.Fprintf(&msg, " No refresh token was issued: log in again after %s.", tok.Expiry.Local().Format(time.Kitchen))
	}
	return msg.String(), nil
}

// probe connects without credentials as far as tools/list: a server that
// answers is refused (it needs no login); a 401 gives its challenge.
func (b *Bridge) probe(ctx context.Context, ex mcp.Entry) (map[string]string, error) {
	c, err := mcp.Connect(ctx, ex, b.clientOptions(nil, ex))
	if err == nil {
		_, err = b.listTools(ctx, c)
		c.Close()
		if err == nil {
			return nil, fmt.Errorf("mcp server %q needs no login: it lists its tools without one", ex.Name)
		}
	}
	var he *mcp.MCPHTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		return nil, b.failure(err, "")
	}
	params, _ := oauth.Bearer(he.WWWAuthenticate)
	return params, nil
}

// verifyLogin lists the tools with the new token, storing them; a server
// that had none cached (added before its login) has them pinned as they
// are now, since the person who added it is logging in to use them.
func (b *Bridge) verifyLogin(ctx context.Context, st *serverState, ex mcp.Entry) (int, error) {
	o, err := b.withAuthorizer(b.clientOptions(nil, ex), ex)
	if err != nil {
		return 0, err
	}
	c, err := mcp.Connect(ctx, ex, o)
	if err != nil {
		return 0, b.failure(err, "")
	}
	defer c.Close()
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return 0, b.failure(err, "")
	}
	rows := listing(tools)
	if err := b.store.ToolsReplace(st.row.Name, rows); err != nil {
		return 0, err
	}
	if len(st.pins) == 0 {
		for _, t := range rows {
			if t.Refused == "" {
				if err := b.store.PinPut(pinOf(st.row.Name, t)); err != nil {
					return 0, err
				}
			}
		}
	}
	if _, err := b.reload(); err != nil {
		return 0, err
	}
	return len(rows), nil
}

// loginState words server's OAuth state for /mcp: "" when tai's login
// does not apply to it.
func (b *Bridge) loginState(e mcp.Entry) string {
	if !oauthable(e) {
		return ""
	}
	t, err := vaultTokens{b.store, e.Name}.Tokens()
	switch {
	case err != nil:
		return "login state unreadable: " + err.Error()
	case t == nil:
		return "no login held (if the server asks for one: /mcp login " + e.Name + ")"
	}
	s := "logged in"
	if !t.Expiry.IsZero() {
		if d := time.Until(t.Expiry); d >= time.Minute {
			s += ", expires in " + d.Round(time.Minute).String()
		} else if d > 0 {
			s += ", expires in " + d.Round(time.Second).String() // a short-lived token
		} else {
			s += ", expired"
		}
	}
	if t.Refresh != "" {
		s += ", refresh held"
	} else if !t.Expiry.IsZero() {
		s += ", no refresh token"
	}
	return s
}

// personFor returns who can finish a login for the call in ctx: the
// front end's person, unless the call comes from a served session (its
// approver has no prompter: nobody is there), where a login fails at once
// rather than wait for a browser.
func (b *Bridge) personFor(ctx context.Context) (*oauth.Person, func()) {
	if b.opts.Person == nil || b.approver(ctx).Prompter() == nil {
		return nil, func() {}
	}
	p, stop := b.opts.Person(ctx)
	if stop == nil {
		stop = func() {}
	}
	return p, stop
}

// loginHint says how a person logs in to server (Options.OAuthHints).
func (b *Bridge) loginHint(server string) string {
	if b.opts.OAuthHints.Login == nil {
		return ""
	}
	return b.opts.OAuthHints.Login(server)
}
