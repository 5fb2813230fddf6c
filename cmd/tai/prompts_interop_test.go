//go:build interop

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInteropEverythingPromptCommands: at the REPL, with the official
// server-everything added, its prompts are commands: /everything:simple-prompt
// (no arguments) and /everything:args-prompt (city asked, as it is
// required; state left out) are shown, then sent with Enter, and reach
// the model as the turn; resource-prompt embeds a resource, its text
// inline; the server's instructions are in the system prompt.
func TestInteropEverythingPromptCommands(t *testing.T) {
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}}}}, "", "  ")
	s.typeKeys("\x1b[200~" + string(cfg) + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added everything (stdio), enabled for profile default")
	s.expect("4 prompts, run as /everything:PROMPT: args-prompt, completable-prompt, resource-prompt, simple-prompt")
	s.expect("instructions for the model (pinned; /context shows them):")
	s.expect("tai:default> ")

	srv.Push(llmtest.Say("simple indeed"))
	s.typeKeys("/everything:simple-prompt\r")
	s.expect("user: This is a simple prompt without arguments.")
	s.expect("Enter sends it, Esc cancels")
	s.typeKeys("\r")
	s.expect("simple indeed")
	s.expect("tai:default> ")

	srv.Push(llmtest.Say("rainy"))
	s.typeKeys("/everything:args-prompt\r")
	s.expect("city (Name of the city): ")
	s.typeKeys("Lyon\r")
	s.expect("user: What's weather in Lyon?")
	s.expect("Enter sends it, Esc cancels")
	s.typeKeys("\r")
	s.expect("rainy")
	s.expect("tai:default> ")

	srv.Push(llmtest.Say("a resource"))
	s.typeKeys("/everything:resource-prompt resourceType=Text resourceId=1\r")
	s.expect("[resource ")
	s.expect("Enter sends it, Esc cancels")
	s.typeKeys("\r")
	s.expect("a resource")
	s.expect("tai:default> ")

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if u := reqs[0].LastUser(); u != "This is a simple prompt without arguments." {
		t.Errorf("simple-prompt reached the model as %q", u)
	}
	if u := reqs[1].LastUser(); u != "What's weather in Lyon?" {
		t.Errorf("args-prompt reached the model as %q", u)
	}
	if u := reqs[2].LastUser(); !strings.Contains(u, "[resource ") {
		t.Errorf("resource-prompt reached the model as %.300q", u)
	}
	if body := string(reqs[0].Body); !strings.Contains(body, `mcp-server-instructions server=\"everything\"`) && !strings.Contains(body, `\u003cmcp-server-instructions server=\"everything\"\u003e`) {
		t.Errorf("the system prompt lacks the server's instructions: %.1500s", body)
	}
	s.typeKeys("\x04")
	s.wait()
}
