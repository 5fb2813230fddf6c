package oauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tai/mcp"
	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// connect starts an MCP client on srv whose transport asks a.
func connect(t *testing.T, srv *oauthtest.Server, a mcp.Authorizer, headers map[string]string) (*mcp.Client, error) {
	t.Helper()
	tr, err := mcp.NewHTTPTransport(srv.URL(), headers, &mcp.HTTPOptions{Authorizer: a})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient("fake", tr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

func call(t *testing.T, c *mcp.Client) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := c.Call(ctx, "whoami", nil)
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

func TestTransportRefreshesOn401MidCall(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	first := login(t, srv, cfg)
	cfg.Person = nil // no login may happen now: only a refresh
	c, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.RevokeAccess()
	if _, err := call(t, c); err != nil {
		t.Fatalf("call after the access token was revoked: %v", err)
	}
	if tok, _ := store.Tokens(); tok.Access == first.Access {
		t.Fatal("the token was not refreshed")
	}
}

func TestTransportWithoutLoginNamesIt(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	cfg.Person = nil
	_, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	var ln *oauth.LoginNeededError
	var he *mcp.MCPHTTPError
	if !errors.As(err, &ln) || !errors.As(err, &he) || he.Status != 401 || ln.Server != "fake" {
		t.Fatalf("error %v", err)
	}
}

func TestTransportLogsInWithAPerson(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{PRM: oauthtest.PRMPath})
	store := &oauth.MemoryStore{}
	c, err := connect(t, srv, oauth.NewAuthorizer(*config(srv, store)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, c); err != nil {
		t.Fatal(err)
	}
	if tok, _ := store.Tokens(); tok == nil {
		t.Fatal("no tokens stored")
	}
}

func TestTransportStepUp(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write"})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	login(t, srv, cfg)
	c, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := call(t, c)
	if err != nil || text != "scope: read write" {
		t.Fatalf("call: %q, %v", text, err)
	}
}

func TestTransportStepUpLimit(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write", StubbornCallScope: true})
	cfg := config(srv, &oauth.MemoryStore{})
	login(t, srv, cfg)
	c, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, c)
	if err == nil || !strings.Contains(err.Error(), "write") {
		t.Fatalf("error %v", err)
	}
	if n := len(srv.AuthRequests()); n > 1+oauth.MaxStepUps {
		t.Fatalf("%d authorizations", n)
	}
}

func TestTransportStaticAuthorizationNotTouched(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	opened := false
	cfg.Person.Open = func(string) error { opened = true; return nil }
	_, err := connect(t, srv, oauth.NewAuthorizer(*cfg), map[string]string{"Authorization": "Bearer wrong-static-key"})
	var he *mcp.MCPHTTPError
	if !errors.As(err, &he) || he.Status != 401 || opened {
		t.Fatalf("error %v, browser opened %v", err, opened)
	}
	if strings.Contains(err.Error(), "wrong-static-key") {
		t.Fatalf("the key shows in %v", err)
	}
}

type personKey struct{}

// TestTransportStepUpFindsThePersonOfTheCall: the Authorizer learns who is
// at a call from the call's context, also on a request the transport runs
// on its own goroutine.
func TestTransportStepUpFindsThePersonOfTheCall(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write"})
	cfg := config(srv, &oauth.MemoryStore{})
	login(t, srv, cfg)
	person := cfg.Person
	cfg.Person = nil
	cfg.PersonFor = func(ctx context.Context) (*oauth.Person, func()) {
		if ctx.Value(personKey{}) == nil {
			return nil, nil
		}
		return person, nil
	}
	c, err := connect(t, srv, oauth.NewAuthorizer(*cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), personKey{}, true), testTimeout)
	defer cancel()
	res, err := c.Call(ctx, "whoami", nil)
	if err != nil || res.Text() != "scope: read write" {
		t.Fatalf("call: %v, %v", res, err)
	}
}
