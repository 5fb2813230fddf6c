package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// get fetches raw without following redirects and returns the status.
func get(t *testing.T, raw string) int {
	t.Helper()
	resp, err := http.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func withState(t *testing.T, redirect, state string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("state", state)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestCallbackWrongStateIsIgnoredAndSecondIsRefused(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	var statuses []int
	var redirect string
	cfg.Person.Open = func(authURL string) error {
		r, err := oauthtest.RedirectFor(authURL)
		if err != nil {
			return err
		}
		redirect = r
		statuses = append(statuses, get(t, withState(t, r, "forged")))
		statuses = append(statuses, get(t, r))
		return nil
	}
	login(t, srv, cfg)
	if statuses[0] != http.StatusBadRequest || statuses[1] != http.StatusOK {
		t.Fatalf("wrong state got %d, right one %d", statuses[0], statuses[1])
	}
	// The listener is gone once the login ends: a second callback finds nothing.
	if resp, err := http.Get(redirect); err == nil {
		resp.Body.Close()
		t.Fatalf("a callback after the login was answered HTTP %d", resp.StatusCode)
	}
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") {
		t.Fatalf("redirect %q is not on 127.0.0.1", redirect)
	}
}

func TestCallbackSecondWhileFinishing(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	var second int
	cfg.Person.Open = func(authURL string) error {
		r, err := oauthtest.RedirectFor(authURL)
		if err != nil {
			return err
		}
		get(t, r)
		second = get(t, r) // before the login closes the listener
		return nil
	}
	login(t, srv, cfg)
	if second != http.StatusConflict {
		t.Fatalf("a second callback got HTTP %d, want 409", second)
	}
}

func TestCallbackTimeout(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	cfg.Timeout = 50 * time.Millisecond
	cfg.Person.Open = func(string) error { return nil }
	_, err := oauth.Login(context.Background(), cfg, probe(t, srv.URL()), "")
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %v", err)
	}
}

func TestFixedCallbackPort(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	cfg.CallbackPort = freePort(t)
	login(t, srv, cfg)
	want := "http://127.0.0.1:" + itoa(cfg.CallbackPort) + "/callback"
	if got := srv.AuthRequests()[0].Get("redirect_uri"); got != want {
		t.Fatalf("redirect_uri %q, want %q", got, want)
	}
}

func TestPastedRedirect(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	paste := make(chan string, 4)
	var said []string
	cfg.Person = &oauth.Person{
		Say:   func(s string) { said = append(said, s) },
		Paste: paste,
		Open: func(authURL string) error {
			// The browser is on another machine: its redirect never
			// reaches the listener; the person copies the address.
			r, err := oauthtest.RedirectFor(authURL)
			if err != nil {
				return err
			}
			paste <- "not a url"
			paste <- withState(t, r, "forged")
			paste <- "  " + r + "  "
			return nil
		},
	}
	tok := login(t, srv, cfg)
	if callTool(t, srv.URL(), tok.Access) != http.StatusOK {
		t.Fatal("the token from a pasted redirect does not work")
	}
	all := strings.Join(said, "\n")
	for _, w := range []string{"Log in to fake in your browser: http", "paste here", "not the redirect URL", "not from this login"} {
		if !strings.Contains(all, w) {
			t.Errorf("the person was not told %q; told:\n%s", w, all)
		}
	}
}

func TestAuthorizationErrorRedirect(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	cfg.Person.Open = func(authURL string) error {
		u, _ := url.Parse(authURL)
		q := u.Query()
		r := q.Get("redirect_uri") + "?error=access_denied&error_description=the+user+said+no&state=" + url.QueryEscape(q.Get("state"))
		get(t, r)
		return nil
	}
	_, err := oauth.Login(context.Background(), cfg, probe(t, srv.URL()), "")
	if err == nil || !strings.Contains(err.Error(), "access_denied") || !strings.Contains(err.Error(), "the user said no") {
		t.Fatalf("error %v", err)
	}
}

func TestClosingPasteCancels(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	cfg := config(srv, &oauth.MemoryStore{})
	paste := make(chan string)
	cfg.Person.Paste = paste
	cfg.Person.Open = func(string) error { close(paste); return nil }
	_, err := oauth.Login(context.Background(), cfg, probe(t, srv.URL()), "")
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("error %v", err)
	}
}
