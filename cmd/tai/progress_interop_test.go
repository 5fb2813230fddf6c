//go:build interop

package main

import (
	"encoding/json"
	"fmt"
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
	longRun(t, []string{"TAI_MCP_CALL_TIMEOUT=2s"}, 5, 10, []string{"██░░░░░░░░ 2/10", "█████░░░░░ 5/10", "█████████░ 9/10"})
}

// TestInteropLongRunningPastTheCallTimeout: the same at the default call
// timeout (MCP_CALL_TIMEOUT, 60 s), for an operation of 70 s that reports
// progress every 2 s: it runs past 60 s in all and ends with its result.
func TestInteropLongRunningPastTheCallTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 70 s; not under -short")
	}
	longRun(t, nil, 70, 35, []string{" 10/35", " 20/35", " 30/35", "· 61 s"})
}

// longRun adds server-everything at the REPL with env, has the fake model
// call trigger-long-running-operation for seconds in steps, and expects
// each of bars on the tool's line, then the call's result.
func longRun(t *testing.T, env []string, seconds, steps int, bars []string) {
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, append(e.modelVars(srv), env...), "--clean")
	s.expect("tai:default> ")
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}}}}, "", "  ")
	s.typeKeys("\x1b[200~" + string(cfg) + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added everything (stdio), enabled for profile default")
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("mcp_everything_trigger_long_running_operation", fmt.Sprintf(`{"duration":%d,"steps":%d}`, seconds, steps))))
	s.typeKeys("run the long operation\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	for _, b := range bars {
		s.expect(b)
	}
	s.expect(fmt.Sprintf("✓ %d.", seconds))
	s.expect(fmt.Sprintf("the tool said: Long running operation completed. Duration: %d seconds, Steps: %d.", seconds, steps))
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()
}
