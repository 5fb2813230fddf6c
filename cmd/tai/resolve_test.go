package main

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"tai/mcp/github/githubtest"
)

// TestREPLPastedGitHubURL: a GitHub repository URL pasted at the prompt is
// resolved (never sent to the model as chat): the entry and where it was
// found are shown on the consent screen, and declining stores nothing.
func TestREPLPastedGitHubURL(t *testing.T) {
	root := githubtest.Fixtures(t, "repos")[0]
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

// TestREPLPicksOneOfSeveralAndUpdates: a repository of several servers
// is listed and the person picks one by number, which is resolved at
// once and added; a paste of the same name with another command line
// then shows the stored and the new line and offers u, which updates the
// stored entry after the consent screen, and r, which adds the new one
// under the name typed.
func TestREPLPicksOneOfSeveralAndUpdates(t *testing.T) {
	api := httptest.NewServer(githubtest.Handler(filepath.Join("testdata", "repos"), nil))
	t.Cleanup(api.Close)
	e := newEnv(t)
	vars := withPath(append(e.vars(), "TAI_GITHUB_API="+api.URL, "GITHUB_TOKEN="), fakeNpxAs(t, "1"))
	s := startREPLWith(t, e, vars)
	s.expect("> ")
	s.typeKeys("github.com/acme/suite\r")
	s.expect("offers 2 servers, not one")
	s.expect("2. beta  github.com/acme/suite/tree/main/servers/beta")
	s.expect("which one (1-2, Enter for none)? ")
	s.typeKeys("7\r")
	s.expect("answer a number from 1 to 2")
	s.typeKeys("1\r")
	s.expect("found by the deterministic pass in servers/alpha/README.md")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added alpha")
	s.expect("> ")
	s.typeKeys(`{"mcpServers": {"alpha": {"command": "npx", "args": ["-y", "@acme/alpha-mcp", "--verbose"]}}}` + "\r")
	s.expect("skipped alpha: already registered")
	s.expect("stored:  npx -y @acme/alpha-mcp")
	s.expect("new:     npx -y @acme/alpha-mcp --verbose")
	s.expect("[u/r/N]")
	s.typeKeys("u")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added alpha")
	s.expect("> ")
	s.typeKeys("/mcp\r")
	s.expect("--verbose")
	s.expect("> ")
	s.typeKeys(`{"mcpServers": {"alpha": {"command": "npx", "args": ["-y", "@acme/alpha-mcp", "--quiet"]}}}` + "\r")
	s.expect("skipped alpha: already registered")
	s.expect("[u/r/N]")
	s.typeKeys("r")
	s.expect("name for the new server: ")
	s.typeKeys("alpha2\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added alpha2")
}
