package bridge

import (
	"context"
	"strings"
	"testing"
	"time"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/oauth"
	"tai/mcp/oauth/oauthtest"
)

// A model cannot send a vault secret to an authorization server of its
// choosing: under --auto and --yolo, an entry it adds whose oauth client
// secret names a vault secret is refused, as is its login naming one; the
// hostile authorization server (here on loopback, redirecting the browser
// straight back) never sees the secret. tai's own OAuth secrets are no
// client secret for anyone.
func TestModelCannotSendAVaultSecretToAnAuthorizationServer(t *testing.T) {
	const token = "ghp_0123456789abcdefghij0123456789abcdef"
	for _, mode := range []tool.Mode{tool.Auto, tool.Yolo} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"evil": ""},
				AuthMethods: []string{"client_secret_basic"}})
			f := newFixture(t, mode, "")
			f.b.opts.Person = func(context.Context) (*oauth.Person, func()) {
				return &oauth.Person{Open: srv.Browser, Say: func(string) {}}, func() {}
			}
			if err := f.store.SecretSet("GITHUB_TOKEN", token, nil); err != nil {
				t.Fatal(err)
			}
			byModel := tool.WithCaller(ctxT(t), tool.Caller{ByModel: true})
			src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"evil": map[string]any{
				"url": srv.URL(), "oauth": map[string]any{"client_id": "evil", "client_secret": "${GITHUB_TOKEN}"}}}})
			rep, err := f.b.Add(byModel, AddRequest{Source: src})
			if err != nil || rep.Servers[0].Outcome != Refused {
				t.Fatalf("a model's entry with a client secret: %+v, %v", rep, err)
			}
			mustContain(t, "refusal", rep.Servers[0].Reason, "${GITHUB_TOKEN}", "a model asked under --"+mode.String())

			// A server a person added, and a model's login naming the secret.
			src, _ = jsonString(map[string]any{"mcpServers": map[string]any{"evil": map[string]any{"url": srv.URL()}}})
			if rep, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil || rep.Servers[0].Outcome != Added {
				t.Fatalf("a person's add: %+v, %v", rep, err)
			}
			_, err = f.b.Login(byModel, "evil", LoginOptions{ClientID: "evil", ClientSecret: "${GITHUB_TOKEN}"})
			if err == nil || !strings.Contains(err.Error(), "${GITHUB_TOKEN}") {
				t.Fatalf("a model's login with a client secret: %v", err)
			}
			for _, r := range srv.TokenRequests() {
				if strings.Contains(r.Authorization+r.Form.Encode(), "ghp_") || r.Authorization != "" {
					t.Fatalf("the token endpoint received a secret: %+v", r)
				}
			}
			if len(srv.AuthRequests()) != 0 {
				t.Fatal("a login started")
			}

			// tai's own OAuth secrets: refused as a client secret, whoever asks.
			_, err = f.b.Login(ctxT(t), "evil", LoginOptions{ClientID: "evil", ClientSecret: "${mcp-oauth-notes-access}"})
			if err == nil || !strings.Contains(err.Error(), "tai keeps for its own OAuth logins") {
				t.Fatalf("a login with tai's own secret: %v", err)
			}
		})
	}
}

// The consent screen says where a client secret goes.
func TestConsentSaysWhereTheClientSecretGoes(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	f := newFixture(t, tool.Interactive, "")
	f.p.answer = "n"
	if err := f.store.SecretSet("NOTES_SECRET", "s3cret-s3cret", nil); err != nil {
		t.Fatal(err)
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{
		"url": srv.URL(), "oauth": map[string]any{"client_id": "app", "client_secret": "${NOTES_SECRET}"}}}})
	if _, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "question", f.p.questions()[0], "⚠ ${NOTES_SECRET} goes to the authorization server that notes names at login")
}

// A lookalike host (a Cyrillic о in mcp.nоtion.com) is shown with its
// punycode and a warning on the consent screen.
func TestConsentShowsALookalikeHost(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	f.p.answer = "n"
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"notion": map[string]any{"url": "https://mcp.n\u043etion.com/mcp"}}})
	if _, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "question", f.p.questions()[0], "https://mcp.n\u043etion.com/mcp", "is mcp.xn--ntion-", "mixes Latin and Cyrillic letters")
}

// A token living less than a minute shows its seconds left, not "0s".
func TestLoginStateOfAShortLivedToken(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	e := mcp.Entry{Name: "notes", Transport: mcp.TransportHTTP, URL: "https://notes.example.com/mcp"}
	if err := (vaultTokens{f.store, "notes"}).SaveTokens(&oauth.Tokens{Access: "a-token-value", Expiry: time.Now().Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if got := f.b.loginState(e); !strings.Contains(got, "expires in 30s") && !strings.Contains(got, "expires in 29s") {
		t.Fatalf("login state %q", got)
	}
}
