//go:build interop

package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInteropLongRunningProgress: at the REPL, server-everything's
// trigger-long-running-operation runs 5 s in 10 steps under a call
// timeout of 2 s (TAI_MCP_CALL_TIMEOUT): its progress draws a bar on the
// tool's running line, each step starts the timeout again, and the call
// ends with its result, not a timeout.
func TestInteropLongRunningProgress(t *testing.T) {
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, append(e.modelVars(srv), "TAI_MCP_CALL_TIMEOUT=2s"), "--clean")
	s.expect("tai:default> ")
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}}}}, "", "  ")
	s.typeKeys("\x1b[200~" + string(cfg) + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added everything (stdio), enabled for profile default")
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("mcp_everything_trigger_long_running_operation", `{"duration":5,"steps":10}`)))
	s.typeKeys("run the long operation\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("██░░░░░░░░ 2/10")
	s.expect("█████░░░░░ 5/10")
	s.expect("█████████░ 9/10")
	s.expect("✓ 5.")
	s.expect("the tool said: Long running operation completed. Duration: 5 seconds, Steps: 10.")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()
}
