//go:build interop

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// everythingREPL starts the REPL (with args) on a fresh environment whose
// model is srv, pastes the official server-everything's config and
// answers its consent with y.
func everythingREPL(t *testing.T, srv *llmtest.Server, args ...string) *screen {
	t.Helper()
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e := newEnv(t)
	s := startREPLWith(t, e, e.modelVars(srv), append([]string{"--clean"}, args...)...)
	s.expect("> ")
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}}}}, "", "  ")
	s.typeKeys("\x1b[200~" + string(cfg) + "\x1b[201~\r")
	return s
}

// TestInteropEverythingSampling: server-everything's
// trigger-sampling-request, called by the model at the REPL, shows the
// request in full before anything is sent; the fake model answers only
// after y, and its answer reaches the server only after a second y.
func TestInteropEverythingSampling(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	s := everythingREPL(t, srv)
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added everything (stdio), enabled for profile default")
	s.expect("tai:default> ")

	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_everything_trigger_sampling_request", `{"prompt":"what is 2+2?","maxTokens":64}`)),
		llmtest.Turn{Text: "four, said the fake", InputTokens: 31, OutputTokens: 5},
		llmtest.Say("the server heard four"),
	)
	s.typeKeys("ask the server to sample\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("? everything asks your model (fake-model) for a completion (MCP sampling); nothing is sent yet:")
	s.expect("system:     You are a helpful test server.")
	s.expect("max tokens: 64, temperature 0.7")
	s.expect("user:       Resource trigger-sampling-request context: what is 2+2?")
	s.expect("[y/e/s/N]")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model requests before the person answered, want 1", n)
	}
	s.typeKeys("y")
	s.expect("fake-model answered (stop: endTurn):")
	s.expect("four, said the fake")
	s.expect("Return it to everything? [y/N]")
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d model requests before the answer was returned, want 2", n)
	}
	s.typeKeys("y")
	s.expect("everything asked for sampling; fake-model answered (31 tokens in, 5 out)")
	s.expect("the server heard four")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if sys := string(reqs[1].Body); !strings.Contains(sys, "You are a helpful test server.") || reqs[1].LastUser() != "Resource trigger-sampling-request context: what is 2+2?" {
		t.Fatalf("the sampling request the model got: %.600s", reqs[1].Body)
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "four, said the fake") || !strings.Contains(res[0].Text, `"model": "fake-model"`) {
		t.Fatalf("the server answered the model with %+v", res)
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestInteropEverythingSamplingAutoLogsAndTasks: under --auto,
// trigger-sampling-request is declined at once with a note on the tool's
// line and the model is not asked; toggle-simulated-logging fills /mcp
// log, which asks the server for a level; the task-only tool is listed as
// not offered.
func TestInteropEverythingSamplingAutoLogsAndTasks(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	s := everythingREPL(t, srv, "--auto")
	s.expect("add them to tai (they start without asking: --auto)? [y/N]")
	s.typeKeys("y")
	s.expect("added everything (stdio)")
	s.expect("tai:default [auto]> ")
	s.typeKeys("/mcp enable everything\r")
	s.expect("everything enabled for profile default")
	s.expect("tai:default [auto]> ")

	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_everything_trigger_sampling_request", `{"prompt":"hi"}`)),
		llmtest.Say("refused, as it should be"),
	)
	s.typeKeys("ask the server to sample\r")
	s.expect("everything asked for sampling, refused: --auto answers no server's questions")
	s.expect("refused, as it should be")
	s.expect("tai:default [auto]> ")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2: the sampling must not reach the model", len(reqs))
	}
	if res := reqs[1].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "--auto answers no server's questions") {
		t.Fatalf("the tool result: %+v", res)
	}

	s.typeKeys("/mcp call everything toggle-simulated-logging\r")
	s.expect("Started simulated, random-leveled logging")
	s.expect("tai:default [auto]> ")
	s.typeKeys("/mcp log everything\r")
	s.expect("everything: ")
	s.expect("-level message")
	s.expect("tai:default [auto]> ")
	s.typeKeys("/mcp log everything emergency\r")
	s.expect("asked everything to log at emergency and above")
	s.expect("shown: emergency and above")
	s.expect("tai:default [auto]> ")
	s.typeKeys("/mcp call everything toggle-simulated-logging\r")
	s.expect("Stopped simulated logging")
	s.expect("tai:default [auto]> ")

	s.typeKeys("/mcp tools everything\r")
	s.expect("mcp_everything_simulate_research_query   withheld")
	s.expect("not offered: it runs only as an MCP task")
	s.expect("tai:default [auto]> ")
	s.typeKeys("\x04")
	s.wait()
}
