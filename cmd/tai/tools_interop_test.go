//go:build interop

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInteropPastedServerIsOfferedWhole pastes the official
// server-everything's config at the REPL, answers the one consent
// question, and checks the model's next turn is offered every tool, the
// built-in ones and all of the server's (about 41 in all, well within the
// budget), calls its echo tool, and /tools lists them as offered.
func TestInteropPastedServerIsOfferedWhole(t *testing.T) {
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
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

	srv.Push(llmtest.Calls(llmtest.Call("mcp_everything_echo", `{"message":"all offered"}`)))
	s.typeKeys("echo it\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("Echo: all offered")
	s.expect("tai:default> ")
	names := srv.Requests()[0].ToolNames()
	bridged := 0
	for _, n := range names {
		if strings.HasPrefix(n, "mcp_everything_") {
			bridged++
		}
	}
	if bridged < 10 || len(names) < 38 {
		t.Fatalf("the model was offered %d tools, %d of them the server's: %v", len(names), bridged, names)
	}
	s.typeKeys("/tools\r")
	// server-everything's task-only tool is listed, not offered
	s.expect("not offered: it runs only as an MCP task")
	s.expect(fmt.Sprintf("%d from MCP servers (%d offered to this profile)", bridged+1, bridged))
	s.expect(fmt.Sprintf("* offered on the last turn: %d of %d", len(names), len(names)))
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()
}
