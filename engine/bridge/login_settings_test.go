package bridge

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// addWithOAuth pastes srv as "notes" with the canonical oauth object o.
func addWithOAuth(t *testing.T, f *fixture, srv *oauthtest.Server, o map[string]any) ServerOutcome {
	t.Helper()
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"url": srv.URL(), "oauth": o}}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Servers[0]
}

// TestLoginAsTheEntrysPreRegisteredClient: an entry whose oauth names a
// client id and a callback port logs in as that client (no registration)
// with its redirect on that port, and /mcp shows the client id.
func TestLoginAsTheEntrysPreRegisteredClient(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"slack-app": ""}})
	f := oauthFixture(t, srv)
	port := oauthtest.FreePort(t)
	if out := addWithOAuth(t, f, srv, map[string]any{"client_id": "slack-app", "callback_port": port}); out.Outcome != Added {
		t.Fatalf("add: %+v", out)
	}
	if _, err := f.b.Login(ctxT(t), "notes", LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	auth := srv.AuthRequests()
	if len(auth) != 1 || auth[0].Get("client_id") != "slack-app" || len(srv.Registrations()) != 0 {
		t.Fatalf("authorization requests %v, registrations %v", auth, srv.Registrations())
	}
	ru, err := url.Parse(auth[0].Get("redirect_uri"))
	if err != nil || ru.Host != net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) {
		t.Fatalf("redirect_uri %q, want port %d", auth[0].Get("redirect_uri"), port)
	}
	list, _ := f.b.List(ctxT(t))
	mustContain(t, "list", list[0].OAuth, "client id slack-app", "callback port "+strconv.Itoa(port))
}

// TestPastedLiteralClientSecretRefused: a client secret written out in a
// paste refuses the entry, stores nothing, and never repeats the secret.
func TestPastedLiteralClientSecretRefused(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	f := oauthFixture(t, srv)
	out := addWithOAuth(t, f, srv, map[string]any{"client_id": "app", "client_secret": "hunter2-literal-secret"})
	if out.Outcome != Refused || !strings.Contains(out.Reason, "secret_set") || !strings.Contains(out.Reason, "${NAME}") || strings.Contains(out.Reason, "hunter2") {
		t.Fatalf("add: %+v", out)
	}
	if rows, err := f.store.ServerList(); err != nil || len(rows) != 0 {
		t.Fatalf("stored %v, %v", rows, err)
	}
}

// TestFailedLoginKeepsTheWorkingSettings: a login with a mistyped
// --client-id fails and leaves the settings of the last login that
// worked, which the next plain login uses.
func TestFailedLoginKeepsTheWorkingSettings(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"my-app": ""}})
	f := oauthFixture(t, srv)
	// the person gives up when the provider does not know the client
	f.b.opts.Person = func(context.Context) (*oauth.Person, func()) {
		paste := make(chan string)
		return &oauth.Person{Paste: paste, Say: func(string) {}, Open: func(u string) error {
			err := srv.Browser(u)
			if err != nil {
				close(paste)
			}
			return err
		}}, func() {}
	}
	addProtected(t, f, srv, nil)
	if _, err := f.b.Login(ctxT(t), "notes", LoginOptions{ClientID: "my-app"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.Login(ctxT(t), "notes", LoginOptions{ClientID: "my-ap"}); err == nil {
		t.Fatal("a login as an unknown client succeeded")
	}
	row, err := f.store.ServerGet("notes")
	if err != nil || row.OAuth == nil || row.OAuth.ClientID != "my-app" {
		t.Fatalf("kept settings %+v, %v", row.OAuth, err)
	}
	if _, err := f.b.Login(ctxT(t), "notes", LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	auth := srv.AuthRequests()
	if got := auth[len(auth)-1].Get("client_id"); got != "my-app" {
		t.Fatalf("the next login went as %q", got)
	}
}

// TestAddClaudeLineWithClientID: a pasted "claude mcp add" line for an
// http server (its URL's slashes do not make it a file name) with
// --client-id and --callback-port stores them as the entry's oauth.
func TestAddClaudeLineWithClientID(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"slack-app": ""}})
	f := oauthFixture(t, srv)
	f.b.opts.Normalize = func(text, name string) ([]mcp.Entry, []config.Note, error) {
		return config.Normalize(text, &config.Options{Name: name})
	}
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: "claude mcp add --transport http notes " + srv.URL() + " --client-id slack-app --callback-port 3118"})
	if err != nil || rep.Count(Added) != 1 {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	row, err := f.store.ServerGet("notes")
	if err != nil || row.OAuth == nil || row.OAuth.ClientID != "slack-app" || row.OAuth.CallbackPort != 3118 {
		t.Fatalf("stored oauth %+v, %v", row.OAuth, err)
	}
}
