package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"tai/mcp"
	"tai/mcp/httppolicy"
)

// Person is whoever started tai, when someone did (the REPL, tai -p, their
// own scripts): a login shows them the authorization URL, opens their
// browser, and takes a redirect URL they paste back. A served session
// has no Person, and a login there fails at once.
type Person struct {
	// Say shows one line to the person.
	Say func(line string)
	// Open opens a URL in the person's browser (nil: OpenBrowser).
	Open func(rawURL string) error
	// Paste carries the lines the person types while a login waits, for
	// the final redirect URL copied from a browser elsewhere (nil: none).
	// Closing it cancels the login (the person pressed Ctrl-C or Ctrl-D).
	Paste <-chan string
	// Pasted, when set, is told after each line from Paste whether the
	// login took it (true: no more lines are wanted).
	Pasted func(taken bool)
}

func (p *Person) judged(taken bool) {
	if p.Pasted != nil {
		p.Pasted(taken)
	}
}

// Config describes one server's logins.
type Config struct {
	// Server is the server's name, used in messages.
	Server string
	// URL is the server's MCP endpoint.
	URL string
	// Store keeps the tokens and the client registration.
	Store TokenStore
	// ClientID is a pre-registered client id ("" for none).
	ClientID string
	// ClientSecret is the pre-registered client's secret ("" for a public client).
	ClientSecret string
	// ClientSecretIssuer is the issuer ClientSecret was first used with
	// ("" when not yet used): tai sends it to no other authorization server.
	ClientSecretIssuer string
	// BindClientSecret, when set, records the issuer a login first used
	// ClientSecret with.
	BindClientSecret func(issuer string) error
	// ClientMetadataURL is an https client metadata document URL, used as
	// the client id where the authorization server accepts one.
	ClientMetadataURL string
	// CallbackPort fixes the loopback redirect's port (0: an ephemeral one).
	CallbackPort int
	// HTTPClient sends the OAuth requests (nil: http.DefaultClient);
	// redirects are followed within an origin only.
	HTTPClient *http.Client
	// Timeout bounds the wait for the browser's redirect (0: MCP_OAUTH_TIMEOUT).
	Timeout time.Duration
	// RequestTimeout bounds each request to the protected resource's
	// metadata and the authorization server (0: MCP_CONNECT_TIMEOUT).
	RequestTimeout time.Duration
	// Person is who can log in; nil means nobody can (a served session),
	// unless PersonFor finds one.
	Person *Person
	// PersonFor, when set and Person is nil, finds who can log in for the
	// request in ctx (an Authorizer's re-login or step-up in the middle
	// of a session), with a function to call when the login ends; it
	// returns nil when nobody is there.
	PersonFor func(ctx context.Context) (*Person, func())
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Hints word what a person does next, in the front end's terms.
	Hints Hints

	// privateAddr replaces privateAddr in tests (nil: privateAddr).
	privateAddr func(ip net.IP, port string) bool
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Hints word what a person does next in the front end's own terms (a
// command of its REPL, a Lua function), for the errors that need a
// person: the oauth package names none itself. A nil function adds
// nothing.
type Hints struct {
	// Login says how a person logs in to server (a LoginNeededError).
	Login func(server string) string
	// ClientID says how a person logs in to server with the id of an
	// OAuth app they registered (a ClientIDNeededError).
	ClientID func(server string) string
}

func hint(f func(string) string, server string) string {
	if f == nil {
		return ""
	}
	return f(server)
}

// LoginNeededError says a server needs a person to log in, and how.
type LoginNeededError struct {
	// Server is the server's name.
	Server string
	// Reason says why the tokens held (if any) will not do.
	Reason string
	// Hint says how to log in (Hints.Login); empty when none was given.
	Hint string
}

// loginNeeded is the LoginNeededError of c's server, for reason.
func (c *Config) loginNeeded(reason string) *LoginNeededError {
	return &LoginNeededError{Server: c.Server, Reason: reason, Hint: hint(c.Hints.Login, c.Server)}
}

// Error names the reason and, with a Hint, what logs in.
func (e *LoginNeededError) Error() string {
	s := e.Server + " needs an OAuth login"
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// ClientIDNeededError says a login needs the id of an OAuth app a person
// registers with the provider, since the authorization server registers
// none itself.
type ClientIDNeededError struct {
	// Server is the server's name; Issuer its authorization server.
	Server, Issuer string
	// Offers says what the authorization server offers instead ("no
	// dynamic client registration…").
	Offers string
	// Hint says how to log in with the id (Hints.ClientID); empty when
	// none was given.
	Hint string
}

// Error says what to register, with which redirect URI, and, with a
// Hint, what logs in with it.
func (e *ClientIDNeededError) Error() string {
	s := fmt.Sprintf("the authorization server %s offers %s, so tai needs a client id: register an OAuth app with the provider "+
		"with the redirect URI http://127.0.0.1:PORT%s (a port of your choice)", e.Issuer, e.Offers, CallbackPath)
	if e.Hint != "" {
		s += ", then " + e.Hint
	}
	return s
}

// login is one authorization code flow in progress.
type login struct {
	cfg         *Config
	f           *fetcher
	disc        *Discovery
	scope       string
	redirectURI string
	cb          *callback
}

// Login runs the authorization code flow with PKCE for cfg's server and
// stores the tokens: discovery (challenge holds the parameters of the
// server's Bearer challenge, nil when there was none), the loopback
// listener, the client identity, the browser, the wait for the redirect
// (or a pasted redirect URL), the code exchange. scope, when not empty,
// replaces the scope discovery would choose (a step-up asks for more).
func Login(ctx context.Context, cfg *Config, challenge map[string]string, scope string) (*Tokens, error) {
	if cfg.Person == nil {
		return nil, cfg.loginNeeded("nobody is at this session to open a browser")
	}
	f := newFetcher(cfg)
	d, err := Discover(ctx, f, cfg.URL, challenge)
	if err != nil {
		return nil, err
	}
	t, err := loginWith(ctx, cfg, f, d, challenge["scope"], scope)
	var oe *ErrorCode
	if errors.As(err, &oe) && oe.Code == "invalid_scope" && oe.registered {
		// A client registered before (by tai, or by an older tai that
		// registered with the first login's scope) may be limited to
		// that scope: register afresh, once.
		if derr := cfg.Store.DropRegistration(); derr != nil {
			return nil, derr
		}
		cfg.Person.say("The authorization server refused the scope for tai's registered client; tai registers a new client and asks once more.")
		t, err = loginWith(ctx, cfg, f, d, challenge["scope"], scope)
	}
	return t, err
}

// secretBoundElsewhere reports whether ClientSecret was first used with
// an authorization server other than issuer, so it must not go to issuer.
func (c *Config) secretBoundElsewhere(issuer string) bool {
	return c.ClientSecret != "" && c.ClientSecretIssuer != "" && c.ClientSecretIssuer != issuer
}

// say shows line to the person.
func (p *Person) say(line string) {
	if p != nil && p.Say != nil {
		p.Say(line)
	}
}

func loginWith(ctx context.Context, cfg *Config, f *fetcher, d *Discovery, challenged, scope string) (*Tokens, error) {
	// Before the browser opens: every endpoint the login will use.
	for _, e := range []struct{ what, raw string }{
		{"authorization endpoint", d.Metadata.AuthorizationEndpoint},
		{"token endpoint", d.Metadata.TokenEndpoint},
		{"registration endpoint", d.Metadata.RegistrationEndpoint},
	} {
		if u, err := url.Parse(e.raw); err == nil && e.raw != "" {
			if err := f.checkPrivate(ctx, e.what, u); err != nil {
				return nil, err
			}
		}
	}
	l := &login{cfg: cfg, f: f, disc: d, scope: withOffline(scope, d)}
	if l.scope == "" {
		l.scope = chooseScope(challenged, d)
	}
	state := randomString(24)
	port := cfg.CallbackPort
	if port == 0 && cfg.ClientID == "" {
		// Reuse the port of a kept registration, so its redirect URI
		// stays valid; when that port is taken, a new one (and a new
		// registration) it is.
		if reg, _ := cfg.Store.Registration(); reg != nil && reg.Issuer == d.Issuer {
			if u, err := url.Parse(reg.RedirectURI); err == nil {
				fmt.Sscan(u.Port(), &port)
			}
		}
	}
	cb, err := listenCallback(port, state)
	if err != nil && port != 0 && cfg.CallbackPort == 0 {
		cb, err = listenCallback(0, state)
	}
	if err != nil {
		return nil, err
	}
	defer cb.close()
	l.cb, l.redirectURI = cb, cb.redirectURI
	c, err := l.identity(ctx)
	if err != nil {
		return nil, err
	}
	pk := newPKCE()
	authURL, err := l.authorizationURL(c, pk, state)
	if err != nil {
		return nil, err
	}
	code, err := l.wait(ctx, authURL)
	if err != nil {
		var oe *ErrorCode
		if errors.As(err, &oe) {
			oe.registered = c.kind == kindRegistered
		}
		return nil, err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {l.redirectURI}, "code_verifier": {pk.verifier}}
	t, err := requestToken(ctx, f, d, c, form, cfg.now())
	if err != nil {
		var oe *ErrorCode
		if errors.As(err, &oe) && oe.Code == "invalid_client" && c.kind == kindRegistered {
			_ = cfg.Store.DropRegistration()
			return nil, fmt.Errorf("%w; tai dropped its registration with %s: log in again to register afresh", err, d.Issuer)
		}
		return nil, err
	}
	if t.Scope == "" {
		t.Scope = l.scope
	}
	if c.secret != "" && c.kind == kindPreRegistered && cfg.BindClientSecret != nil && cfg.ClientSecretIssuer == "" {
		if err := cfg.BindClientSecret(d.Issuer); err != nil {
			return nil, err
		}
	}
	t.TokenEndpoint, t.Resource, t.AuthMethod = d.Metadata.TokenEndpoint, d.Resource, c.authMethod
	t.ResourceMetadata = d.ResourceMetadataURL
	if err := cfg.Store.SaveTokens(t); err != nil {
		return nil, err
	}
	return t, nil
}

// authorizationURL builds the authorization request (RFC 6749 §4.1.1,
// PKCE, state, the resource indicator, the scope when there is one).
func (l *login) authorizationURL(c *client, pk pkce, state string) (string, error) {
	u, err := url.Parse(l.disc.Metadata.AuthorizationEndpoint)
	if err != nil {
		return "", fmt.Errorf("the authorization endpoint %q does not parse", httppolicy.RedactURL(l.disc.Metadata.AuthorizationEndpoint))
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.id)
	q.Set("redirect_uri", l.redirectURI)
	q.Set("code_challenge", pk.challenge)
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("resource", l.disc.Resource)
	if l.scope != "" {
		q.Set("scope", l.scope)
	}
	if slices.Contains(splitScope(l.scope), offlineAccess) {
		// OpenID Connect Core §11: offline_access is honoured only with
		// prompt=consent (otherwise a stock provider drops it, and no
		// refresh token comes).
		q.Set("prompt", "consent")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// wait shows the URL, opens the browser, and waits for the redirect at the
// listener or pasted by the person, up to the timeout.
func (l *login) wait(ctx context.Context, authURL string) (string, error) {
	p := l.cfg.Person
	timeout := l.cfg.Timeout
	if timeout <= 0 {
		timeout = mcp.MCP_OAUTH_TIMEOUT
	}
	say := p.say
	say("Log in to " + l.cfg.Server + " in your browser: " + authURL)
	if note := mcp.HostNote(authURL); note != "" {
		say(note)
	}
	open := p.Open
	if open == nil {
		open = OpenBrowser
	}
	if err := open(authURL); err != nil {
		say("No browser opened (" + err.Error() + "); open the URL above yourself.")
	}
	if p.Paste != nil {
		say("Waiting for the redirect. On another machine, paste here the address the browser ends on (" + l.redirectURI + "?code=...).")
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case r := <-l.cb.result:
			return r.code, r.err
		case line, ok := <-p.Paste:
			if !ok {
				return "", fmt.Errorf("the login to %s was cancelled", l.cfg.Server)
			}
			line = strings.TrimSpace(line)
			if line == "" {
				p.judged(false)
				continue
			}
			_, err := l.cb.take(line)
			if err != nil {
				say(err.Error())
			}
			p.judged(err == nil)
		case <-timer.C:
			return "", fmt.Errorf("the login to %s timed out after %s waiting for the browser's redirect; run the login again", l.cfg.Server, timeout)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
