package main

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
)

// smallContext makes the tool budget (repl.tool_share of
// repl.context_limit) far smaller than the schemas of the built-in tools.
const smallContext = `require("repl").context_limit = 2000`

// TestPromptToolBudgetFollowsContextLimit: tai -p offers every tool while
// their schemas fit repl.tool_share of repl.context_limit, as the REPL
// does, and chooses among them past it.
func TestPromptToolBudgetFollowsContextLimit(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	e := newEnv(t)
	if r := e.runInput(t, e.modelVars(srv), "", "-p", "hello"); r.status != 0 {
		t.Fatalf("tai -p: %d %s", r.status, r.stderr)
	}
	all := srv.Requests()[0].ToolNames()
	e.write(t, "init.lua", smallContext)
	if r := e.runInput(t, e.modelVars(srv), "", "-p", "hello"); r.status != 0 {
		t.Fatalf("tai -p: %d %s", r.status, r.stderr)
	}
	some := srv.Requests()[1].ToolNames()
	if len(all) < 25 || len(some) >= len(all) || !slices.Contains(some, "tool_search") {
		t.Fatalf("offered %d tools with the default context, %d with a small one: %v", len(all), len(some), some)
	}
}

// TestServedChatToolBudgetFollowsContextLimit: a served chat turn chooses
// among the tools past repl.tool_share of repl.context_limit too.
func TestServedChatToolBudgetFollowsContextLimit(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	e := newEnv(t)
	e.write(t, "init.lua", smallContext)
	s := startServe(t, e, e.modelVars(srv))
	sess := connectSDK(t, s.url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "chat", Arguments: map[string]any{"message": "hello"}})
	if err != nil || res.IsError {
		t.Fatalf("chat: %v %q", err, textOf(res))
	}
	reqs := srv.Requests()
	some := reqs[len(reqs)-1].ToolNames()
	if len(some) >= 25 || !slices.Contains(some, "tool_search") {
		t.Fatalf("a served chat with a small context was offered %d tools: %v", len(some), some)
	}
	s.stop(t)
}
