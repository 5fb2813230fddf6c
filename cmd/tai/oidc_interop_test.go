//go:build interop

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// oidcPeer is the OpenID provider and MCP server of testdata/oidc-mcp-server.mjs.
type oidcPeer struct {
	MCP, Issuer, Admin string
}

func startOIDCPeer(t *testing.T, node, root string, env ...string) oidcPeer {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("testdata", "oidc-mcp-server.mjs"))
	cmd := exec.Command(node, script, root)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("the OpenID peer's stderr:\n%s", stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, out)
	}()
	var p oidcPeer
	select {
	case l, ok := <-line:
		if !ok || json.Unmarshal([]byte(l), &p) != nil || p.MCP == "" {
			t.Fatalf("the OpenID peer did not start: %q\n%s", l, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the OpenID peer did not start within 60s:\n%s", stderr.String())
	}
	return p
}

func (p oidcPeer) admin(t *testing.T, what string) []byte {
	t.Helper()
	method := http.MethodPost
	if what == "tokens" {
		method = http.MethodGet
	}
	req, _ := http.NewRequest(method, p.Admin+"/"+what, nil)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin %s: HTTP %d %s", what, resp.StatusCode, b)
	}
	return b
}

// TestInteropOAuthOpenIDProvider: tai's login against a real, certified
// OpenID provider (oidc-provider from npm, stock interaction policy, its
// development login and consent forms driven by a scripted browser) in
// front of an MCP server built with the TypeScript SDK: discovery,
// dynamic registration, login and a call; a step-up with the registered
// client; revocation of the access token (a silent refresh) and of the
// grant (a re-login that says why, the person taking 22 s in the
// browser, past the 20 s connect timeout); a refresh after an 8 s token
// expires; the pasted redirect at the REPL; a pre-registered client with
// its secret in the vault; and no access or refresh token in any file or
// output outside the vault.
func TestInteropOAuthOpenIDProvider(t *testing.T) {
	root, node := nodeModules(t)
	prePort := oauthtest.FreePort(t)
	preSecret := "pre-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	peer := startOIDCPeer(t, node, root, "OIDC_TOKEN_TTL=8", "OIDC_PRE_CLIENT_PORT="+strconv.Itoa(prePort), "OIDC_PRE_CLIENT_SECRET="+preSecret)

	e := newEnv(t)
	dir := t.TempDir()
	browserJS, _ := filepath.Abs(filepath.Join("testdata", "oidc-browser.mjs"))
	logFile := filepath.Join(dir, "browser.log")
	browser := filepath.Join(dir, "browser")
	script := fmt.Sprintf(`#!/bin/sh
OIDC_BROWSER_DELAY_MS=$(cat %[1]s/delay 2>/dev/null || echo 0) OIDC_BROWSER_LOG=%[2]s
export OIDC_BROWSER_DELAY_MS OIDC_BROWSER_LOG
if [ -f %[1]s/print ]; then OIDC_BROWSER_PRINT=$(cat %[1]s/print); export OIDC_BROWSER_PRINT; fi
exec %[3]s %[4]s "$1" 2>>%[1]s/browser.err
`, dir, logFile, node, browserJS)
	if err := os.WriteFile(browser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	setFile := func(name, text string) {
		if text == "" {
			os.Remove(filepath.Join(dir, name))
			return
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opened := func() int {
		b, _ := os.ReadFile(logFile)
		return strings.Count(string(b), "\n")
	}
	vars := append(e.vars(), "BROWSER="+browser)
	var outputs []string
	run := func(what, lua string) result {
		t.Helper()
		p := filepath.Join(dir, what+".lua")
		if err := os.WriteFile(p, []byte(lua), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.runInput(t, vars, "", "--yolo", p, peer.MCP)
		outputs = append(outputs, r.stdout, r.stderr)
		if r.status != 0 {
			b, _ := os.ReadFile(filepath.Join(dir, "browser.err"))
			t.Fatalf("%s: status %d\nstdout:\n%s\nstderr:\n%s\nbrowser:\n%s", what, r.status, r.stdout, r.stderr, b)
		}
		return r
	}
	const call = `
local function call(tool)
  local r = assert(tai.mcp.call({ server = "notes", tool = tool, args = {} }))
  assert(not r.isError, tool .. ": " .. tai.json.encode(r))
  print(tool .. ": " .. r.content[1].text)
end
`

	// Discovery, registration, login, a call; then a step-up with the
	// registered client.
	r := run("login", call+`
local rep = assert(tai.mcp.add({ source = tai.json.encode({ mcpServers = { notes = { url = arg[#arg] } } }) }))
assert(rep.servers[1].outcome == "added", tostring(rep.servers[1].reason))
print(assert(tai.mcp.login({ server = "notes" })))
call("read_note")
call("write_note")
print("state: " .. tai.mcp.list()[1].login)
`)
	mustHave(t, "login", r.stdout, "Logged in to notes", "read_note: note: hello from the OpenID-protected server", "write_note: note written", "refresh held")
	if strings.Contains(r.stdout, "No refresh token") {
		t.Fatalf("no refresh token was issued:\n%s", r.stdout)
	}
	if n := opened(); n != 2 {
		t.Fatalf("the browser opened %d times; want the login and the step-up", n)
	}

	// The access token revoked, the refresh token good: a silent refresh.
	peer.admin(t, "revoke-access")
	run("revoked-access", call+`call("write_note")`)
	if n := opened(); n != 2 {
		t.Fatalf("the browser opened after the access token was revoked (%d)", n)
	}

	// A refresh after expiry: the tokens live 8 s.
	time.Sleep(9 * time.Second) // the real provider's clock must pass the expiry
	before := len(tokensOf(t, peer).Access)
	run("expired", call+`call("read_note")`)
	if n := opened(); n != 2 || len(tokensOf(t, peer).Access) <= before {
		t.Fatalf("after expiry: the browser opened %d times, %d access tokens (was %d); want a refresh", n, len(tokensOf(t, peer).Access), before)
	}

	// The grant revoked: the refresh token is refused, the call's new
	// connection logs in again saying why, and the person takes 22 s.
	peer.admin(t, "revoke-grant")
	setFile("delay", "22000")
	start := time.Now()
	r = run("revoked-grant", call+`call("read_note")`)
	setFile("delay", "")
	mustHave(t, "re-login", r.stderr, "notes needs a new login (the authorization server no longer accepts the refresh token: invalid_grant)")
	mustHave(t, "re-login", r.stdout, "read_note: note: hello")
	if took := time.Since(start); took < 22*time.Second || opened() != 3 {
		t.Fatalf("the re-login took %s with %d browser runs", took, opened())
	}

	// A pre-registered client, its secret in the vault.
	run("pre-registered", call+fmt.Sprintf(`
assert(tai.vault.secret_set("PRE_SECRET", %q))
print(assert(tai.mcp.login({ server = "notes", client_id = "tai-pre-registered", client_secret = "${PRE_SECRET}", callback_port = %d })))
call("read_note")
`, preSecret, prePort))

	// The pasted redirect at the REPL: the browser is elsewhere.
	fifo := filepath.Join(dir, "redirect")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	setFile("print", fifo)
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp login notes\r")
	s.expect("paste here the address the browser ends on")
	redirect := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		redirect <- strings.TrimSpace(string(b))
	}()
	var pasted string
	select {
	case pasted = <-redirect:
	case <-time.After(60 * time.Second):
		t.Fatal("the browser never wrote the redirect")
	}
	s.typeKeys(pasted + "\r")
	s.expect("Logged in to notes")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp call notes read_note\r")
	s.expect("note: hello from the OpenID-protected server")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	s.wait()
	outputs = append(outputs, s.seen.String())

	// No access or refresh token anywhere but in the vault.
	toks := tokensOf(t, peer)
	all := append(toks.Access, toks.Refresh...)
	if len(toks.Refresh) == 0 {
		t.Fatal("the provider issued no refresh token")
	}
	for i, out := range outputs {
		for _, tok := range all {
			if strings.Contains(out, tok) {
				t.Fatalf("output %d shows a token:\n%s", i, out)
			}
		}
	}
	for _, top := range []string{e.root, dir} {
		filepath.Walk(top, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || p == e.vault || info.Mode()&os.ModeNamedPipe != 0 {
				return nil
			}
			b, _ := os.ReadFile(p)
			for _, tok := range all {
				if strings.Contains(string(b), tok) {
					t.Errorf("%s holds a token", p)
				}
			}
			return nil
		})
	}
}

type issuedTokens struct {
	Access  []string `json:"access_token"`
	Refresh []string `json:"refresh_token"`
}

func tokensOf(t *testing.T, p oidcPeer) issuedTokens {
	t.Helper()
	var it issuedTokens
	if err := json.Unmarshal(p.admin(t, "tokens"), &it); err != nil {
		t.Fatal(err)
	}
	return it
}

func mustHave(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, text)
		}
	}
}
