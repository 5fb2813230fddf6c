package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// MaxStepUps bounds the step-up re-authorizations for one server in one
// process.
const MaxStepUps = 3

// refreshMargin is how long before its expiry an access token is refreshed.
const refreshMargin = 30 * time.Second

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
	return &Authorizer{cfg: cfg, f: newFetcher(cfg.HTTPClient, cfg.RequestTimeout)}
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
	if !t.Expiry.IsZero() && a.cfg.now().Add(refreshMargin).After(t.Expiry) && t.Refresh != "" {
		nt, err := a.refresh(ctx, t)
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
	cfg, done := a.withPerson(ctx)
	defer done()
	if cfg.Person == nil {
		return false, &LoginNeededError{Server: a.cfg.Server, Reason: reason}
	}
	if _, err := Login(ctx, &cfg, withKnownMetadata(params, t), ""); err != nil {
		return false, err
	}
	return true, nil
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
		return false, &LoginNeededError{Server: a.cfg.Server, Reason: "the call needs the scope " + want}
	}
	a.stepUps++
	a.lastAsked = want
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
		c.secret = a.cfg.ClientSecret
	} else if reg, err := a.cfg.Store.Registration(); err == nil && reg != nil && reg.ClientID == t.ClientID {
		c.secret = reg.ClientSecret
	}
	if c.authMethod == "" {
		c.authMethod = chooseAuthMethod("", c.secret, nil)
	}
	if t.TokenEndpoint == "" {
		return nil, &LoginNeededError{Server: a.cfg.Server, Reason: "the tokens held do not say where to refresh them"}
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
			return nil, &LoginNeededError{Server: a.cfg.Server, Reason: "the authorization server no longer accepts the refresh token: " + oe.Code}
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
