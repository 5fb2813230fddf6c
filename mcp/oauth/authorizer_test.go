package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

func TestRefresh(t *testing.T) {
	for _, rotate := range []bool{false, true} {
		name := map[bool]string{false: "kept without rotation", true: "rotated"}[rotate]
		t.Run(name, func(t *testing.T) {
			srv := oauthtest.New(t, oauthtest.Options{Refresh: true, Rotate: rotate, ExpiresIn: time.Minute})
			store := &oauth.MemoryStore{}
			cfg := config(srv, store)
			now := time.Now()
			cfg.Now = func() time.Time { return now }
			first := login(t, srv, cfg)
			a := oauth.NewAuthorizer(*cfg)
			h, err := a.Authorization(context.Background())
			if err != nil || h != "Bearer "+first.Access {
				t.Fatalf("before expiry: %q, %v", h, err)
			}
			now = now.Add(2 * time.Minute)
			srv.Advance(2 * time.Minute)
			h, err = a.Authorization(context.Background())
			if err != nil || h == "Bearer "+first.Access {
				t.Fatalf("after expiry: %q, %v; want a refreshed token", h, err)
			}
			got, _ := store.Tokens()
			if rotate == (got.Refresh == first.Refresh) {
				t.Fatalf("refresh token %q after refresh, first %q, rotate %v", got.Refresh, first.Refresh, rotate)
			}
			if callTool(t, srv.URL(), got.Access) != http.StatusOK {
				t.Fatal("the refreshed token does not work")
			}
			tr := srv.TokenRequests()
			if last := tr[len(tr)-1]; last.Form.Get("grant_type") != "refresh_token" || last.Form.Get("resource") == "" {
				t.Fatalf("refresh request %v: want grant_type refresh_token with the resource", last.Form)
			}
		})
	}
}

func TestRefreshInvalidGrantDropsTokens(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, ExpiresIn: time.Minute})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	now := time.Now()
	cfg.Now = func() time.Time { return now }
	first := login(t, srv, cfg)
	now = now.Add(time.Hour)
	srv.FailNextToken("invalid_grant")
	cfg.Person = nil // nobody to log in again
	_, err := oauth.NewAuthorizer(*cfg).Authorization(context.Background())
	var ln *oauth.LoginNeededError
	if !errors.As(err, &ln) || ln.Server != "fake" {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), first.Refresh) {
		t.Fatalf("the error shows the refresh token: %v", err)
	}
	if tok, _ := store.Tokens(); tok != nil {
		t.Fatalf("tokens kept: %+v", tok)
	}
}

func TestSecretsScrubbedFromTokenErrors(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, ExpiresIn: time.Minute})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	now := time.Now()
	cfg.Now = func() time.Time { return now }
	first := login(t, srv, cfg)
	now = now.Add(time.Hour)
	srv.FailNextToken("temporarily_unavailable") // its description echoes the refresh token
	_, err := oauth.NewAuthorizer(*cfg).Authorization(context.Background())
	if err == nil || !strings.Contains(err.Error(), "temporarily_unavailable") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), first.Refresh) {
		t.Fatalf("the error shows the refresh token: %v", err)
	}
	if tok, _ := store.Tokens(); tok == nil {
		t.Fatal("a passing failure dropped the tokens")
	}
}

func TestChallenge401(t *testing.T) {
	t.Run("refreshes once", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{Refresh: true})
		store := &oauth.MemoryStore{}
		cfg := config(srv, store)
		first := login(t, srv, cfg)
		srv.RevokeAccess()
		a := oauth.NewAuthorizer(*cfg)
		retry, err := a.Challenge(context.Background(), 401, `Bearer error="invalid_token"`, "Bearer "+first.Access)
		if err != nil || !retry {
			t.Fatalf("retry %v, %v", retry, err)
		}
		got, _ := store.Tokens()
		if got.Access == first.Access || callTool(t, srv.URL(), got.Access) != http.StatusOK {
			t.Fatal("no working new token")
		}
		// Another request that carried the old token: no second refresh.
		n := len(srv.TokenRequests())
		if retry, err := a.Challenge(context.Background(), 401, "", "Bearer "+first.Access); !retry || err != nil || len(srv.TokenRequests()) != n {
			t.Fatalf("second 401 with the old token: retry %v, %v, token requests %d -> %d", retry, err, n, len(srv.TokenRequests()))
		}
	})
	t.Run("without a person it names the login", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		cfg := config(srv, &oauth.MemoryStore{})
		cfg.Person = nil
		_, err := oauth.NewAuthorizer(*cfg).Challenge(context.Background(), 401, `Bearer resource_metadata="x"`, "")
		var ln *oauth.LoginNeededError
		if !errors.As(err, &ln) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("with a person it logs in", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		store := &oauth.MemoryStore{}
		cfg := config(srv, store)
		p := probe(t, srv.URL())
		hdr := `Bearer resource_metadata="` + p["resource_metadata"] + `"`
		retry, err := oauth.NewAuthorizer(*cfg).Challenge(context.Background(), 401, hdr, "")
		if err != nil || !retry {
			t.Fatalf("retry %v, %v", retry, err)
		}
		if tok, _ := store.Tokens(); tok == nil {
			t.Fatal("no tokens")
		}
	})
}

func TestStepUp(t *testing.T) {
	t.Run("union of held and challenged, then done", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write"})
		store := &oauth.MemoryStore{}
		cfg := config(srv, store)
		first := login(t, srv, cfg)
		if callTool(t, srv.URL(), first.Access) != http.StatusForbidden {
			t.Fatal("the fake let a call without the scope through")
		}
		a := oauth.NewAuthorizer(*cfg)
		retry, err := a.Challenge(context.Background(), 403, `Bearer error="insufficient_scope", scope="write"`, "Bearer "+first.Access)
		if err != nil || !retry {
			t.Fatalf("retry %v, %v", retry, err)
		}
		ar := srv.AuthRequests()
		if got := ar[len(ar)-1].Get("scope"); got != "read write" {
			t.Fatalf("step-up asked for %q, want %q", got, "read write")
		}
		tok, _ := store.Tokens()
		if callTool(t, srv.URL(), tok.Access) != http.StatusOK {
			t.Fatal("the stepped-up token does not work")
		}
		// Challenged scope already held: no new authorization.
		if retry, err := a.Challenge(context.Background(), 403, `Bearer error="insufficient_scope", scope="write"`, "Bearer "+tok.Access); retry || err == nil || len(srv.AuthRequests()) != 2 {
			t.Fatalf("retry %v, %v, authorizations %d", retry, err, len(srv.AuthRequests()))
		}
	})
	t.Run("limit", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "s0"})
		cfg := config(srv, &oauth.MemoryStore{})
		login(t, srv, cfg)
		a := oauth.NewAuthorizer(*cfg)
		var err error
		for i := 1; i <= oauth.MaxStepUps+1; i++ {
			var retry bool
			retry, err = a.Challenge(context.Background(), 403, `Bearer error="insufficient_scope", scope="s`+itoa(i)+`"`, "")
			if i <= oauth.MaxStepUps && (!retry || err != nil) {
				t.Fatalf("step-up %d: retry %v, %v", i, retry, err)
			}
		}
		if err == nil || !strings.Contains(err.Error(), "s4") {
			t.Fatalf("after the limit: %v", err)
		}
		if n := len(srv.AuthRequests()); n != 1+oauth.MaxStepUps {
			t.Fatalf("%d authorizations, want %d", n, 1+oauth.MaxStepUps)
		}
	})
	t.Run("not a scope problem", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		a := oauth.NewAuthorizer(*config(srv, &oauth.MemoryStore{}))
		if retry, err := a.Challenge(context.Background(), 403, `Bearer error="forbidden"`, ""); retry || err != nil {
			t.Fatalf("retry %v, %v", retry, err)
		}
	})
}

// A grant revoked while the access token is near its expiry leads to the
// same login as one revoked with a fresh token: the person is told why,
// and the browser opens.
func TestRevokedGrantNearExpiryLogsInAgainSayingWhy(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, ExpiresIn: time.Minute})
	store := &oauth.MemoryStore{}
	cfg := config(srv, store)
	now := time.Now()
	cfg.Now = func() time.Time { return now }
	var said []string
	cfg.Person.Say = func(l string) { said = append(said, l) }
	first := login(t, srv, cfg)
	now = now.Add(time.Hour)
	srv.FailNextToken("invalid_grant")
	h, err := oauth.NewAuthorizer(*cfg).Authorization(context.Background())
	if err != nil || h == "" || h == "Bearer "+first.Access {
		t.Fatalf("Authorization after a revoked grant: %q, %v; want a new login's token", h, err)
	}
	if !strings.Contains(strings.Join(said, "\n"), "fake needs a new login (the authorization server no longer accepts the refresh token: invalid_grant)") {
		t.Fatalf("the person was not told why the browser opens: %q", said)
	}
}
