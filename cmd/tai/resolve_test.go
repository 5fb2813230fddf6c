package main

import (
	"net/http/httptest"
	"testing"

	"tai/mcp/github/githubtest"
)

// TestREPLPastedGitHubURL: a GitHub repository URL pasted at the prompt is
// resolved (never sent to the model as chat): the entry and where it was
// found are shown on the consent screen, and declining stores nothing.
func TestREPLPastedGitHubURL(t *testing.T) {
	root, err := githubtest.Repos()
	if err != nil {
		t.Fatalf("the repository fixtures (../shared/fixtures/repos beside the module) are missing: %v", err)
	}
	api := httptest.NewServer(githubtest.Handler(root, nil))
	t.Cleanup(api.Close)
	e := newEnv(t)
	vars := append(e.vars(), "TAI_GITHUB_API="+api.URL, "GITHUB_TOKEN=")
	s := startREPLWith(t, e, vars)
	s.expect("> ")
	s.typeKeys("https://github.com/upstash/context7#readme\r")
	s.expect("found by the deterministic pass in server.json line 56")
	s.expect("also offered: npx -y @upstash/context7-mcp")
	// the consent screen is the one decision: it shows what will run, and
	// names where the entry was found
	s.expect("from:")
	s.expect("github.com/upstash/context7: found by the deterministic pass in server.json line 56")
	s.expect("url:     https://mcp.context7.com/mcp")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ") // type-ahead is discarded: answer once asked
	s.typeKeys("n\r")
	s.expect("(you said no; nothing was started)")
	s.typeKeys("github.com/nobody/nothing\r")
	s.expect("github.com/nobody/nothing: no such repository, or it is private")
	s.typeKeys("/mcp\r")
	s.expect("no MCP servers registered")
}
