package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"tai/mcp"
)

// MaxStepUps bounds the step-up re-authorizations for one server in one
// process.
const MaxStepUps = 3

// maxRefreshMargin is how long before its expiry an access token is
// refreshed at most; a short-lived token is refreshed a tenth of its
// lifetime before (see refreshMargin).
const maxRefreshMargin = 30 * time.Second

// refreshMargin is how long before t's expiry it is refreshed: a tenth of
// its lifetime, at most maxRefreshMargin (the whole margin when the
// lifetime is unknown), so a token living a minute is used before it is
// refreshed.
func refreshMargin(t *Tokens) time.Duration {
	if t.Issued.IsZero() || !t.Expiry.After(t.Issued) {
		return maxRefreshMargin
	}
	return min(maxRefreshMargin, t.Expiry.Sub(t.Issued)/10)
}

// Authorizer gives an HTTP transport its Authorization header and answers
// the server's challenges for one server: it refreshes an access token
// past its expiry before use, refreshes once on a 401 (logging in afresh
// when a person is there and refreshing cannot help), and re-authorizes
// with more scope on a 403 insufficient_scope (up to MaxStepUps times).
// It implements mcp.Authorizer. Safe for concurrent use.
type Authorizer struct {
	cfg Config
	f   *fetcher

	mu        sync.Mutex
	stepUps   int
	lastAsked string
}

// NewAuthorizer returns the Authorizer of cfg's server.
func NewAuthorizer(cfg Config) *Authorizer {
	return &Authorizer{cfg: cfg, f: newFetcher(&cfg)}
}

// Authorization returns the Authorization header value for the next
// request ("" when no token is held), refreshing an expiring token first.
func (a *Authorizer) Authorization(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, err := a.cfg.Store.Tokens()
	if err != nil || t == nil {
		return "", err
	}
	if !t.Expiry.IsZero() && a.cfg.now().Add(refreshMargin(t)).After(t.Expiry) && t.Refresh != "" {
		nt, err := a.refresh(ctx, t)
		var ln *LoginNeededError
		if errors.As(err, &ln) {
			// The grant is gone (revoked, or expired): the same login a
			// 401 to a fresh token leads to.
			if err := a.relogin(ctx, nil, t, ln.Reason); err != nil {
				return "", err
			}
			nt, err = a.cfg.Store.Tokens()
			if err == nil && nt == nil {
				err = a.cfg.loginNeeded(ln.Reason)
			}
		}
		if err != nil {
			return "", err
		}
		t = nt
	}
	return "Bearer " + t.Access, nil
}

// Challenge answers a 401 or 403 the server sent to a request that
// carried sent as its Authorization ("" for none); it reports whether the
// request should be sent again (with a new Authorization).
func (a *Authorizer) Challenge(ctx context.Context, status int, wwwAuthenticate, sent string) (bool, error) {
	params, _ := Bearer(wwwAuthenticate)
	switch status {
	case http.StatusUnauthorized:
		return a.unauthorized(ctx, params, sent)
	case http.StatusForbidden:
		if params["error"] != "insufficient_scope" {
			return false, nil
		}
		return a.stepUp(ctx, params)
	}
	return false, nil
}

func (a *Authorizer) unauthorized(ctx context.Context, params map[string]string, sent string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, err := a.cfg.Store.Tokens()
	if err != nil {
		return false, err
	}
	if t != nil && sent != "Bearer "+t.Access {
		return true, nil // another request already renewed the token
	}
	reason := "no token held"
	if t != nil {
		reason = "the server refused the token held"
		if t.Refresh != "" && sent != "" {
			_, err := a.refresh(ctx, t)
			if err == nil {
				return true, nil
			}
			var ln *LoginNeededError
			if !errors.As(err, &ln) {
				return false, err
			}
			reason = ln.Reason
		}
	}
	if err := a.relogin(ctx, params, t, reason); err != nil {
		return false, err
	}
	return true, nil
}

// relogin logs in afresh when a person is there, telling them why first;
// else it fails naming the login to run. Its wait for the browser is
// bounded by the login's own timeout (MCP_OAUTH_TIMEOUT), not by the
// connect timeout of the request that needed it (mcp.HoldStart).
func (a *Authorizer) relogin(ctx context.Context, params map[string]string, t *Tokens, reason string) error {
	cfg, done := a.withPerson(ctx)
	defer done()
	if cfg.Person == nil {
		return a.cfg.loginNeeded(reason)
	}
	defer mcp.HoldStart(ctx)()
	cfg.Person.say(a.cfg.Server + " needs a new login (" + reason + ").")
	_, err := Login(ctx, &cfg, withKnownMetadata(params, t), "")
	return err
}

// withPerson returns the config with the person who can log in for ctx
// (Config.Person, else Config.PersonFor's), and what to call afterwards.
func (a *Authorizer) withPerson(ctx context.Context) (Config, func()) {
	cfg := a.cfg
	if cfg.Person != nil || cfg.PersonFor == nil {
		return cfg, func() {}
	}
	p, done := cfg.PersonFor(ctx)
	if done == nil {
		done = func() {}
	}
	cfg.Person = p
	return cfg, done
}

func (a *Authorizer) stepUp(ctx context.Context, params map[string]string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	challenged := params["scope"]
	t, err := a.cfg.Store.Tokens()
	if err != nil {
		return false, err
	}
	held := ""
	if t != nil {
		held = t.Scope
	}
	want := unionScope(held, challenged)
	switch {
	case challenged == "":
		return false, fmt.Errorf("%s refused the call for insufficient scope without naming the scope it wants", a.cfg.Server)
	case t != nil && holdsAll(held, challenged):
		return false, fmt.Errorf("%s refused the call for insufficient scope (%s), which the token held already grants; the server will not take it", a.cfg.Server, challenged)
	case want == a.lastAsked:
		return false, fmt.Errorf("%s still wants the scope %s after tai asked for exactly that; not asking again", a.cfg.Server, challenged)
	case a.stepUps >= MaxStepUps:
		return false, fmt.Errorf("%s wants more scope (%s) after %d re-authorizations; giving up", a.cfg.Server, challenged, MaxStepUps)
	}
	cfg, done := a.withPerson(ctx)
	defer done()
	if cfg.Person == nil {
		return false, a.cfg.loginNeeded("the call needs the scope " + want)
	}
	a.stepUps++
	a.lastAsked = want
	defer mcp.HoldStart(ctx)()
	if _, err := Login(ctx, &cfg, withKnownMetadata(params, t), want); err != nil {
		return false, err
	}
	return true, nil
}

// refresh trades the refresh token for new tokens and stores them: a new
// refresh token replaces the old, none keeps the old. invalid_grant drops
// the tokens (a *LoginNeededError); invalid_client drops the registration too.
func (a *Authorizer) refresh(ctx context.Context, t *Tokens) (*Tokens, error) {
	c := &client{id: t.ClientID, authMethod: t.AuthMethod}
	if t.ClientID == a.cfg.ClientID {
		if a.cfg.secretBoundElsewhere(t.Issuer) {
			return nil, a.cfg.loginNeeded("the tokens held come from " + t.Issuer + ", not from the authorization server the client secret belongs to")
		}
		c.secret = a.cfg.ClientSecret
	} else if reg, err := a.cfg.Store.Registration(); err == nil && reg != nil && reg.ClientID == t.ClientID {
		c.secret = reg.ClientSecret
	}
	if c.authMethod == "" {
		c.authMethod = chooseAuthMethod("", c.secret, nil)
	}
	if t.TokenEndpoint == "" {
		return nil, a.cfg.loginNeeded("the tokens held do not say where to refresh them")
	}
	d := &Discovery{Resource: t.Resource, Issuer: t.Issuer, Metadata: ServerMetadata{TokenEndpoint: t.TokenEndpoint}}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.Refresh}}
	nt, err := requestToken(ctx, a.f, d, c, form, a.cfg.now())
	if err != nil {
		var oe *ErrorCode
		if errors.As(err, &oe) && (oe.Code == "invalid_grant" || oe.Code == "invalid_client") {
			_ = a.cfg.Store.DropTokens()
			if oe.Code == "invalid_client" {
				_ = a.cfg.Store.DropRegistration()
			}
			return nil, a.cfg.loginNeeded("the authorization server no longer accepts the refresh token: " + oe.Code)
		}
		return nil, fmt.Errorf("refreshing %s's token: %w", a.cfg.Server, err)
	}
	if nt.Refresh == "" {
		nt.Refresh = t.Refresh
	}
	if nt.Scope == "" {
		nt.Scope = t.Scope
	}
	nt.TokenEndpoint, nt.Resource, nt.AuthMethod = t.TokenEndpoint, t.Resource, c.authMethod
	nt.ResourceMetadata = t.ResourceMetadata
	if err := a.cfg.Store.SaveTokens(nt); err != nil {
		return nil, err
	}
	return nt, nil
}

// withKnownMetadata returns the challenge's parameters, with the resource
// metadata URL of the last login when the challenge names none.
func withKnownMetadata(params map[string]string, t *Tokens) map[string]string {
	if params["resource_metadata"] != "" || t == nil || t.ResourceMetadata == "" {
		return params
	}
	out := map[string]string{"resource_metadata": t.ResourceMetadata}
	for k, v := range params {
		if k != "resource_metadata" {
			out[k] = v
		}
	}
	return out
}
