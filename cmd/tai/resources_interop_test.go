//go:build interop

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInteropEverythingResourceMention: at the REPL, with the official
// server-everything added, /mcp resources lists its documents and
// templates, Tab after @everything: offers its URIs and completes one,
// and the message with @everything:URI carries that document to the model.
func TestInteropEverythingResourceMention(t *testing.T) {
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
	s.expect("tai:default> ")

	s.typeKeys("/mcp resources everything\r")
	s.expect("architecture.md  demo://resource/static/document/architecture.md  (text/markdown)")
	s.expect("templates (read with a URI they make):")
	s.expect("demo://resource/dynamic/text/{resourceId}")
	s.expect("tai:default> ")

	// Tab twice after @everything: lists its URIs; Ctrl-U drops the line.
	s.typeKeys("@everything:\t\t")
	s.expect("demo://resource/static/document/architecture.md")
	s.expect("demo://resource/static/document/structure.md")
	s.typeKeys("\x15")
	// A typed prefix completes to the one URI it starts.
	s.typeKeys("what is in @everything:demo://resource/static/document/ar\t")
	s.expect("@everything:demo://resource/static/document/architecture.md")
	srv.Push(llmtest.Say("an architecture"))
	s.typeKeys("\r")
	s.expect("(attached @everything:demo://resource/static/document/architecture.md, ")
	s.expect("an architecture")
	s.expect("tai:default> ")
	user := srv.Requests()[0].LastUser()
	if !strings.Contains(user, "[Resource demo://resource/static/document/architecture.md of MCP server everything:]") ||
		!strings.Contains(user, `[resource "demo://resource/static/document/architecture.md" (text/markdown)]`) {
		t.Fatalf("the message the model got:\n%.600s", user)
	}
	s.typeKeys("\x04")
	s.wait()
}
