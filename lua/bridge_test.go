package lua

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestMCPRegistryFunctions drives tai.mcp.add/list/enable/tools/call/
// disable/remove against the test binary's own MCP server, then has the
// fake model call the bridged tool.
func TestMCPRegistryFunctions(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"text": "from the model"})
	h, srv, _ := modelHost(t, tool.Yolo)
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_fake_echo", string(args))),
		llmtest.Say("done"),
	)
	cfg, _ := json.Marshal(map[string]any{"fake": map[string]any{
		"transport": "stdio", "command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": "1"}, "enabled": false,
	}})
	got := mustRun(t, h, fmt.Sprintf(`
		local rep = assert(tai.mcp.add{source = %q})
		local s = rep.servers[1]
		local list = assert(tai.mcp.list())
		local before = list[1].enabled
		assert(tai.mcp.enable{server = "fake"})
		local tools = assert(tai.mcp.tools{server = "fake"})
		local r = assert(tai.mcp.call{server = "fake", tool = "echo", args = {text = "hi"}})
		local sulk = assert(tai.mcp.call{server = "fake", tool = "sulk"})
		local answer = assert(tai.chat("echo something"))
		local again = assert(tai.mcp.add{source = "fake"})
		assert(tai.mcp.disable{server = "fake"})
		local off = tai.mcp.list()[1].enabled
		assert(tai.mcp.remove{server = "fake"})
		return s.outcome, s.server, before, #tools, tools[1].name, tools[1].state, r.content[1].text, sulk.isError,
			answer, again.servers[1].outcome, off, #tai.mcp.list()`, string(cfg)))
	want := []any{"added", "fake", false, int64(2), "mcp_fake_echo", "granted", "echo: hi", true, "done", "skipped", false, int64(0)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	reqs := srv.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || results[0].Text != "echo: from the model" {
		t.Fatalf("the model's bridged call answered %+v", results)
	}
	if _, err := h.DoString(ctxT(t), `tai.mcp.add{source = "x", bogus = 1}`, "test"); err == nil {
		t.Fatal("an unknown field was accepted")
	}
}
