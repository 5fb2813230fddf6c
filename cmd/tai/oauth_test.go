package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tai/mcp/oauth/oauthtest"
)

// browserScript writes a shell script standing in for a browser: body runs
// with the authorization URL as $1.
func browserScript(t *testing.T, body string) string {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("these tests need curl as the headless browser: install it")
	}
	p := filepath.Join(t.TempDir(), "browser.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// addNeedingLogin adds srv at the REPL and checks it is stored disabled,
// waiting for a login.
func addNeedingLogin(t *testing.T, s *screen, srv *oauthtest.Server) {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"url": srv.URL()}}})
	s.typeKeys("/mcp add " + string(cfg) + "\r")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("stored disabled: it needs an OAuth login (HTTP 401); /mcp login notes logs in and enables it")
	s.expect("log in to notes now, in your browser? [y/N] ")
	s.typeKeys("n\r")
	s.expect("(not logged in; /mcp login notes does it later)")
	s.expect("tai:ollama> ")
}

// TestREPLOAuthLoginThroughTheBrowser: /mcp add stores a server that
// answers 401 disabled; /mcp login opens $BROWSER (here curl following the
// redirects to tai's loopback listener), stores the tokens, enables the
// server; its tool works and /mcp shows the login.
func TestREPLOAuthLoginThroughTheBrowser(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, PRMScopes: []string{"notes:read"}})
	e := newEnv(t)
	vars := append(e.vars(), "BROWSER="+browserScript(t, `exec curl -sL -o /dev/null "$1"`))
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("tai:ollama> ")
	addNeedingLogin(t, s, srv)
	s.typeKeys("/mcp login notes\r")
	s.expect("Log in to notes in your browser: " + strings.SplitN(srv.Issuer(), "/", 3)[0])
	s.expect(`Logged in to notes (scope notes:read); 1 tools; enabled for profile "ollama".`)
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp call notes whoami\r")
	s.expect("scope: notes:read")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp\r")
	s.expect("OAuth: logged in, expires in")
	s.expect("refresh held")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp remove notes\r")
	s.expect("[y/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("removed notes")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if r := e.run(t, "-e", `for _, s in ipairs(tai.vault.secret_list()) do print(s.name) end`); strings.Contains(r.stdout, "mcp-oauth-") {
		t.Fatalf("OAuth secrets left after remove:\n%s", r.stdout)
	}
}

// TestREPLOAuthLoginPastedRedirect: the browser is elsewhere (it only
// shows where it would go); the person pastes that redirect URL at the
// prompt: one with another state is refused, the right one logs in.
func TestREPLOAuthLoginPastedRedirect(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	fifo := filepath.Join(t.TempDir(), "redirect")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	vars := append(e.vars(), "BROWSER="+browserScript(t, `curl -s -o /dev/null -w '%{redirect_url}\n' "$1" > `+fifo))
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("tai:ollama> ")
	addNeedingLogin(t, s, srv)
	s.typeKeys("/mcp login notes\r")
	s.expect("paste here the address the browser ends on")
	redirect := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		redirect <- strings.TrimSpace(string(b))
	}()
	var r string
	select {
	case r = <-redirect:
	case <-time.After(30 * time.Second):
		t.Fatal("the browser never wrote the redirect")
	}
	if !strings.Contains(r, "state=") {
		t.Fatalf("redirect %q", r)
	}
	forged := r[:strings.Index(r, "state=")] + "state=forged"
	s.typeKeys(forged + "\r")
	s.expect("that URL is not from this login")
	before := s.mark
	s.typeKeys(r + "\r")
	s.expect(`Logged in to notes; 1 tools; enabled for profile "ollama".`)
	// the redirect URL taken, no empty prompt asks for another
	seg := s.seen.String()[before:s.mark]
	if rest := seg[strings.LastIndex(seg, r)+len(r):]; strings.Contains(rest, "redirect URL> ") {
		t.Fatalf("a redirect URL> prompt came back after the URL was taken:\n%q", rest)
	}
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp\r")
	s.expect("OAuth: logged in")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// TestREPLOAuthPreRegisteredFromPastedConfig: a Claude Code config whose
// oauth names a client id and a callback port is shown with them on the
// consent screen; /mcp login logs in as that client, its redirect on that
// port, with no registration; /mcp shows the client.
func TestREPLOAuthPreRegisteredFromPastedConfig(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"slack-app": ""}})
	port := oauthtest.FreePort(t)
	e := newEnv(t)
	vars := append(e.vars(), "BROWSER="+browserScript(t, `exec curl -sL -o /dev/null "$1"`))
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("tai:ollama> ")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{
		"type": "http", "url": srv.URL(), "oauth": map[string]any{"clientId": "slack-app", "callbackPort": port}}}})
	s.typeKeys("/mcp add " + string(cfg) + "\r")
	s.expect("oauth:   client id slack-app, callback port " + strconv.Itoa(port))
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("log in to notes now, in your browser? [y/N] ")
	s.typeKeys("y\r")
	s.expect(`Logged in to notes; 1 tools; enabled for profile "ollama".`)
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp\r")
	s.expect("OAuth client: client id slack-app, callback port " + strconv.Itoa(port))
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	auth := srv.AuthRequests()
	if len(auth) != 1 || auth[0].Get("client_id") != "slack-app" || len(srv.Registrations()) != 0 ||
		auth[0].Get("redirect_uri") != "http://127.0.0.1:"+strconv.Itoa(port)+"/callback" {
		t.Fatalf("authorization requests %v, registrations %v", auth, srv.Registrations())
	}
}
