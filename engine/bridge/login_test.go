package bridge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine"
	"tai/engine/tool"
	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
	"tai/vault"
)

// oauthFixture is a fixture whose person logs in with a browser that
// follows srv's redirects.
func oauthFixture(t *testing.T, srv *oauthtest.Server) *fixture {
	f := newFixture(t, tool.Interactive, "")
	f.b.opts.Person = func(context.Context) (*oauth.Person, func()) {
		return &oauth.Person{Open: srv.Browser, Say: func(string) {}}, func() {}
	}
	return f
}

func addProtected(t *testing.T, f *fixture, srv *oauthtest.Server, headers map[string]string) ServerOutcome {
	t.Helper()
	entry := map[string]any{"url": srv.URL()}
	if headers != nil {
		entry["headers"] = headers
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"notes": entry}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Servers[0]
}

func TestAddNeedingLoginStoredDisabled(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	f := oauthFixture(t, srv)
	out := addProtected(t, f, srv, nil)
	if out.Outcome != Added || out.Enabled || len(out.Tools) != 0 || !out.NeedsLogin {
		t.Fatalf("outcome %+v", out)
	}
	mustContain(t, "text", addText(AddReport{Servers: []ServerOutcome{out}}), "needs an OAuth login", "/mcp login notes")
	if len(srv.AuthRequests()) != 0 {
		t.Fatal("mcp_add started a login")
	}
	list, err := f.b.List(ctxT(t))
	if err != nil || list[0].Enabled || list[0].Tools != 0 || !strings.Contains(list[0].Login, "no login held") {
		t.Fatalf("list %+v, %v", list, err)
	}
}

func TestAddStaticAuthorization401(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	f := oauthFixture(t, srv)
	out := addProtected(t, f, srv, map[string]string{"Authorization": "Bearer static-wrong-key"})
	if out.Outcome != Refused {
		t.Fatalf("outcome %+v", out)
	}
	mustContain(t, "reason", out.Reason, "check those credentials", "401")
	if strings.Contains(out.Reason, "static-wrong-key") {
		t.Fatalf("the key shows: %s", out.Reason)
	}
}

func TestLoginStoresTokensEnablesAndRemoveDropsThem(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, PRMScopes: []string{"notes:read"}})
	f := oauthFixture(t, srv)
	addProtected(t, f, srv, nil)
	msg, err := f.b.Login(ctxT(t), "notes", LoginOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "login", msg, "Logged in to notes", "1 tools", `profile "work"`)
	access, meta, err := f.store.SecretGet("mcp-oauth-notes-access")
	if err != nil || meta["client_id"] == "" || meta["expiry"] == nil {
		t.Fatalf("access secret meta %v, %v", meta, err)
	}
	if _, _, err := f.store.SecretGet("mcp-oauth-notes-refresh"); err != nil {
		t.Fatal(err)
	}
	if got := f.store.Redact("token " + access); strings.Contains(got, access) {
		t.Fatalf("the access token is not redacted: %q", got)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_notes_whoami", map[string]any{})
	if err != nil || res.IsError || text(res) != "scope: notes:read" {
		t.Fatalf("call: %+v, %v", res, err)
	}
	list, _ := f.b.List(ctxT(t))
	if !list[0].Enabled || !strings.Contains(list[0].Login, "logged in, expires in") || !strings.Contains(list[0].Login, "refresh held") {
		t.Fatalf("list %+v", list[0])
	}
	// Refreshed on a 401 mid-call, without a browser.
	srv.RevokeAccess()
	f.b.opts.Person = nil
	if res, err := f.reg.Dispatch(ctxT(t), "mcp_notes_whoami", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("call after revocation: %+v, %v", res, err)
	}
	if err := f.b.Remove(ctxT(t), "notes"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"access", "refresh", "client"} {
		if _, _, err := f.store.SecretGet("mcp-oauth-notes-" + s); err == nil {
			t.Errorf("secret %s kept after remove", s)
		}
	}
}

func TestLoginRefusals(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		f := oauthFixture(t, srv)
		f.add(t, "local", nil)
		if _, err := f.b.Login(ctxT(t), "local", LoginOptions{}); err == nil || !strings.Contains(err.Error(), "stdio") {
			t.Fatalf("stdio login: %v", err)
		}
	})
	t.Run("needs no login", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		f := oauthFixture(t, srv)
		open := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer("v1") }, nil))
		t.Cleanup(open.Close)
		src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"open": map[string]any{"url": open.URL}}})
		if _, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.b.Login(ctxT(t), "open", LoginOptions{}); err == nil || !strings.Contains(err.Error(), "needs no login") {
			t.Fatalf("login: %v", err)
		}
	})
	t.Run("nobody there", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		f := oauthFixture(t, srv)
		addProtected(t, f, srv, nil)
		f.b.opts.Person = nil
		_, err := f.b.Login(ctxT(t), "notes", LoginOptions{})
		var ln *oauth.LoginNeededError
		if !errors.As(err, &ln) || !strings.Contains(err.Error(), "/mcp login notes") || len(srv.AuthRequests()) != 0 {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("literal client secret", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{})
		f := oauthFixture(t, srv)
		addProtected(t, f, srv, nil)
		_, err := f.b.Login(ctxT(t), "notes", LoginOptions{ClientID: "x", ClientSecret: "hunter2-literal"})
		if err == nil || !strings.Contains(err.Error(), "${NAME}") || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("pre-registered with a secret reference", func(t *testing.T) {
		srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"my-app": "app-secret-1"}, AuthMethods: []string{"client_secret_basic"}})
		f := oauthFixture(t, srv)
		addProtected(t, f, srv, nil)
		if err := f.store.SecretSet("NOTES_SECRET", "app-secret-1", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.b.Login(ctxT(t), "notes", LoginOptions{ClientID: "my-app", ClientSecret: "${NOTES_SECRET}"}); err != nil {
			t.Fatal(err)
		}
		if got := srv.AuthRequests()[0].Get("client_id"); got != "my-app" {
			t.Fatalf("client_id %q", got)
		}
		// the secret is now bound to that issuer: another is refused it
		if _, meta, _ := f.store.SecretGet("NOTES_SECRET"); meta[secretIssuerMeta] != srv.Issuer() {
			t.Fatalf("secret meta %v; want it bound to %s", meta, srv.Issuer())
		}
		other := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"my-app": ""}, AuthMethods: []string{"client_secret_basic"}})
		src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"other": map[string]any{"url": other.URL()}}})
		if _, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil {
			t.Fatal(err)
		}
		_, err := f.b.Login(ctxT(t), "other", LoginOptions{ClientID: "my-app", ClientSecret: "${NOTES_SECRET}"})
		if err == nil || !strings.Contains(err.Error(), "first used with the authorization server "+srv.Issuer()) || len(other.TokenRequests()) != 0 {
			t.Fatalf("the secret offered to another issuer: %v", err)
		}
	})
}

// TestStepUpDuringACall: a call refused for insufficient scope logs in
// again with more scope through the person at tai and is resent; with
// nobody there it fails naming the login.
func TestStepUpDuringACall(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write"})
	f := oauthFixture(t, srv)
	addProtected(t, f, srv, nil)
	if _, err := f.b.Login(ctxT(t), "notes", LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_notes_whoami", map[string]any{})
	if err != nil || res.IsError || text(res) != "scope: read write" {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if n := len(srv.AuthRequests()); n != 2 {
		t.Fatalf("%d authorizations, want 2", n)
	}

	srv2 := oauthtest.New(t, oauthtest.Options{ChallengeScope: "read", CallScope: "write"})
	g := oauthFixture(t, srv2)
	addProtected(t, g, srv2, nil)
	if _, err := g.b.Login(ctxT(t), "notes", LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	g.b.opts.Person = nil
	res, err = g.reg.Dispatch(ctxT(t), "mcp_notes_whoami", map[string]any{})
	if err == nil && !res.IsError {
		t.Fatalf("call without a person succeeded: %+v", res)
	}
	msg := text(res)
	if err != nil {
		msg = err.Error()
	}
	mustContain(t, "error", msg, "/mcp login notes", "write")
}

// TestLoginInAServedSessionFailsAtOnce: a call from a session nobody
// attends (a served one: its approver has no prompter) never opens a
// browser, even with a front end that could.
func TestLoginInAServedSessionFailsAtOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store, err := vault.Open(filepath.Join(t.TempDir(), "vault.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err := engine.New(store, &engine.Options{Getenv: func(string) string { return "" }, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	opened := false
	b, err := New(e.Tools(), store, &Options{Normalize: jsonNormalize, OAuthHints: replHints, Person: func(context.Context) (*oauth.Person, func()) {
		return &oauth.Person{Open: func(string) error { opened = true; return nil }}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"url": srv.URL()}}})
	local, err := e.NewSession(&engine.SessionOptions{Approver: tool.NewApprover(tool.Yolo, &prompter{answer: "y"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(engine.WithSession(ctxT(t), local), AddRequest{Source: src}); err != nil {
		t.Fatal(err)
	}
	served, err := e.NewSession(&engine.SessionOptions{Approver: tool.NewApprover(tool.Yolo, nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Login(engine.WithSession(ctxT(t), served), "notes", LoginOptions{})
	var ln *oauth.LoginNeededError
	if !errors.As(err, &ln) || !strings.Contains(err.Error(), "/mcp login notes") || opened || len(srv.AuthRequests()) != 0 {
		t.Fatalf("error %v, browser opened %v", err, opened)
	}
}
