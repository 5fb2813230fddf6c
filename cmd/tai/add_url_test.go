package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
	"tai/mcp/oauth/oauthtest"
)

// lockedKey is the bearer token the locked server of TestREPLAddsByURL
// takes.
const lockedKey = "locked-e2e-key-9876543210"

// urlServer serves a go-sdk MCP server with one echo tool over Streamable
// HTTP at /mcp, and the same behind a bearer token at /locked/mcp (401
// with a WWW-Authenticate challenge without it).
func urlServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "echoer", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes text back"},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed: " + a.Text}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.HandleFunc("/locked/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+lockedKey {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestREPLAddsByURL: /mcp add takes a server's URL, names it after the
// address and, on the one answer, adds and enables it, so the model's next
// turn calls its tool. A URL that answers 401 says it needs a login,
// without the raw HTTP dump, is stored disabled with no tools, and a
// login is offered at once (declined here). A
// claude mcp add line typed at the prompt is read like a config: with the
// token in a header, the locked server is added.
func TestREPLAddsByURL(t *testing.T) {
	api := urlServer(t)
	u, _ := url.Parse(api.URL)
	port := u.Port()
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, append(e.modelVars(srv), "LOCKED_KEY="+lockedKey), "--clean")
	s.expect("tai:default> ")

	s.typeKeys("/mcp add " + api.URL + "/mcp\r")
	s.expect("the URL holds 1 server")
	s.expect("tai is about to connect to MCP server local-" + port + " for the first time:")
	s.expect("url:     " + api.URL + "/mcp")
	s.expect("y: add it and enable it for profile default")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added local-" + port + " (http), enabled for profile default")
	s.expect("1 tool: echo")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("mcp_local_"+port+"_echo", `{"text":"over http"}`)))
	s.typeKeys("echo over http\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y\r")
	s.expect("echoed: over http")
	s.expect("tai:default> ")

	s.typeKeys("/mcp add " + api.URL + "/locked/mcp\r")
	s.expect("url:     " + api.URL + "/locked/mcp")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added local-" + port + "-2 (http), stored disabled: it needs an OAuth login (HTTP 401)")
	s.expect("log in to local-" + port + "-2 now, in your browser? [y/N] ")
	s.typeKeys("n\r")
	s.expect("(not logged in; /mcp login local-" + port + "-2 does it later)")
	s.expect("tai:default> ")
	if out := s.seen.String(); strings.Contains(out, "WWW-Authenticate") || strings.Contains(out, "invalid_token") {
		t.Fatalf("the 401 was shown raw:\n%s", out)
	}

	s.typeKeys("claude mcp add --transport http locked " + api.URL + "/locked/mcp --header 'Authorization: Bearer ${LOCKED_KEY}'\r")
	s.expect("read as a claude mcp add command line")
	s.expect("headers: Authorization")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added locked (http), enabled for profile default")
	s.expect("1 tool: echo")
	s.expect("tai:default> ")
	s.typeKeys("/mcp\r")
	s.expect("local-" + port + "-2")
	s.expect("enabled for: none")
	s.expect("tai:default> ")
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("the pasted line reached the model (%d requests, want 2)", n)
	}
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if strings.Contains(s.seen.String(), lockedKey) {
		t.Fatal("the key was shown")
	}
}

// TestAnotherTaiAddsAServingTai: the --serve-mcp banner's line for another
// tai, typed at a second tai's prompt with the key in $TAI_MCP_KEY, adds
// the first one's tools, and the second tai calls one of them.
func TestAnotherTaiAddsAServingTai(t *testing.T) {
	e := newEnv(t)
	served := startServe(t, e, e.vars())
	var line string
	for _, l := range strings.Split(served.stderr(), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "/mcp add ") {
			line = l
		}
	}
	if line == "" || strings.Contains(line, serveKey) {
		t.Fatalf("the banner has no /mcp add line without the key:\n%s", served.stderr())
	}
	other := newEnv(t)
	s := startREPLWith(t, other, append(other.vars(), "TAI_MCP_KEY="+serveKey), "--clean")
	s.expect("> ")
	s.typeKeys(line + "\r")
	s.expect("url:     " + served.url)
	s.expect("headers: Authorization (from ${TAI_MCP_KEY})")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added tai (http), enabled for profile")
	s.expect("read_file")
	s.expect("> ")
	s.typeKeys(`/mcp call tai list_dir {"path": "."}` + "\r")
	s.expect("vault/")
	s.expect("> ")
	s.typeKeys("\x04")
	s.wait()
	if strings.Contains(s.seen.String(), serveKey) {
		t.Fatal("the key was shown")
	}
	served.stop(t)
}

// TestREPLURLNeedingALoginLogsInAtOnce: /mcp add of a bare URL that
// answers 401 offers the login right after the one consent question;
// answering y logs in through the browser and enables the server, whose
// tool then answers.
func TestREPLURLNeedingALoginLogsInAtOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Refresh: true, PRMScopes: []string{"notes:read"}})
	e := newEnv(t)
	vars := append(e.vars(), "BROWSER="+browserScript(t, `exec curl -sL -o /dev/null "$1"`))
	s := startREPLWith(t, e, vars, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp add " + srv.URL() + "\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	u, _ := url.Parse(srv.URL())
	name := "local-" + u.Port()
	s.expect("stored disabled: it needs an OAuth login (HTTP 401)")
	s.expect("log in to " + name + " now, in your browser? [y/N] ")
	s.typeKeys("y\r")
	s.expect("Logged in to " + name + " (scope notes:read); 1 tools; enabled for profile \"ollama\".")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp call " + name + " whoami\r")
	s.expect("scope: notes:read")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	s.wait()
}
