package lua

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tai/engine/tool"
)

// TestConsentScreenIsLua: the MCP consent screen a person is asked on is
// laid out by tai.consent from the facts the bridge hands over; an
// init.lua that replaces tai.consent.screen is heard, and the facts hold
// the command line word by word.
func TestConsentScreenIsLua(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": map[string]any{
		"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-memory"}}}})
	got := mustRun(t, h, fmt.Sprintf(`
		local asked = {}
		tai.prompter{confirm = function() return false end, ask = function(q) asked[#asked + 1] = q return "n" end}
		local first = assert(tai.mcp.add{source = %[1]q}).servers[1]
		local consent = require("tai.consent")
		local screen = consent.screen
		consent.screen = function(s) return "", "mine: " .. s.server .. " runs " .. table.concat(s.argv, " ") .. " [y/d/N]" end
		local second = assert(tai.mcp.add{source = %[1]q}).servers[1]
		consent.screen = screen
		return asked[1], asked[2], first.declined, second.declined`, string(cfg)))
	q := got[0].(string)
	for _, w := range []string{"tai is about to start MCP server memory for the first time:\n", "  run:     npx\n           -y\n           @modelcontextprotocol/server-memory\n",
		"  y: add it and enable it for profile default\n  d: add it disabled (/mcp enable memory enables it later)\n", "Add it? [y/d/N]"} {
		if !strings.Contains(q, w) {
			t.Errorf("the screen lacks %q:\n%s", w, q)
		}
	}
	if got[1] != "mine: memory runs npx -y @modelcontextprotocol/server-memory [y/d/N]" {
		t.Errorf("a replaced tai.consent.screen was not heard: %q", got[1])
	}
	if got[2] != true || got[3] != true {
		t.Errorf("declined = %v, %v", got[2], got[3])
	}
}

// TestConsentShowsInstructionsFirst: what a server says of itself comes
// first on its consent screen, rendered visibly and folded under its
// label.
func TestConsentShowsInstructionsFirst(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, `
		return require("tai.consent").body{server = "s", transport = "stdio", argv = {"srv"},
			instructions = "Use search first.\nThen \27[2J fetch " .. string.rep("word ", 20)}`)
	body := got[0].(string)
	want := "  says:    Use search first.\n           Then \\x1b[2J fetch word word word word word word word word word word\n           word word word word word word word word word word\n  run:     srv\n"
	if !strings.HasPrefix(body, want) {
		t.Errorf("body =\n%s\nwant it to start with\n%s", body, want)
	}
}

// TestBrokenConsentScreenStartsNothing: a tai.consent.screen of one's own
// that fails, or returns no question, refuses the server: nothing is
// asked, nothing starts.
func TestBrokenConsentScreenStartsNothing(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	for _, screen := range []string{`function() error("my layout broke") end`, `function() return "body" end`} {
		got := mustRun(t, h, fmt.Sprintf(`
			local asked = 0
			tai.prompter{confirm = function() return false end, ask = function() asked = asked + 1 return "y" end}
			local consent = require("tai.consent")
			local keep = consent.screen
			consent.screen = %s
			local rep = assert(tai.mcp.add{source = tai.json.encode{mcpServers = {s = {command = "srv"}}}})
			consent.screen = keep
			return rep.servers[1].outcome, rep.servers[1].reason, asked`, screen))
		if got[0] != "refused" || got[2] != int64(0) || !strings.Contains(got[1].(string), "consent screen failed") {
			t.Errorf("screen %s: %v", screen, got)
		}
	}
}
