package lua

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestMCPLogKeptRedactedAndNeverModelBound: a registered server logs
// each call (notifications/message). tai.mcp.log shows the message with a
// vault secret redacted; the model, which made the call, never sees it;
// a level asks the server for it (logging/setLevel), which then logs
// less; a bad level is an argument error naming the levels.
func TestMCPLogKeptRedactedAndNeverModelBound(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, srv, _ := modelHost(t, tool.Yolo)
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_fake_echo", `{"text":"model-made-call sk-log-secret-77"}`)),
		llmtest.Say("done"),
	)
	cfg, _ := json.Marshal(map[string]any{"fake": map[string]any{
		"transport": "stdio", "command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": "logging"},
	}})
	got := mustRun(t, h, fmt.Sprintf(`
		assert(tai.vault.secret_set("logtok", "sk-log-secret-77"))
		assert(tai.mcp.add{source = %q})
		assert(tai.mcp.enable{server = "fake"})
		assert(tai.chat("echo something"))
		local log = assert(tai.mcp.log{server = "fake"})
		local e = log.entries[1]
		local quiet = assert(tai.mcp.log{server = "fake", level = "warning"})
		assert(tai.mcp.call{server = "fake", tool = "echo", args = {text = "after"}})
		local after = assert(tai.mcp.log{server = "fake"})
		local ok, bad = pcall(tai.mcp.log, {server = "fake", level = "loud"})
		local _, unknown = tai.mcp.log{server = "nope"}
		return log.kept, e.level, e.logger, e.text, quiet.set, #quiet.entries, after.kept, tostring(bad), unknown`, string(cfg)))
	if got[0] != int64(1) || got[1] != "info" || got[2] != "calls" {
		t.Fatalf("log: %v", got)
	}
	if text := got[3].(string); !strings.Contains(text, "model-made-call") || strings.Contains(text, "sk-log-secret-77") {
		t.Fatalf("entry text %q: want the call, its secret redacted", text)
	}
	if got[4] != true || got[5] != int64(0) || got[6] != int64(1) {
		t.Fatalf("after setLevel warning: set %v, %v shown, %v kept after another call; want true, 0, 1", got[4], got[5], got[6])
	}
	if !strings.Contains(got[7].(string), "levels: debug, info") || !strings.Contains(got[8].(string), `"nope" is not registered`) {
		t.Fatalf("errors: %q, %q", got[7], got[8])
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "called with") {
			t.Fatalf("the log reached the model: %.500s", r.Body)
		}
	}
}

// TestMCPClientLog: a tai.mcp.connect session keeps what its server logs;
// asking a server that does not declare logging for a level is a note,
// not a failure.
func TestMCPClientLog(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{}, nil)
	chunk := func(mode string) string {
		return fmt.Sprintf(`
			local c = assert(tai.mcp.connect{name = "fake", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = %q}})
			assert(c:call("echo", {text = "hello"}))
			local log = assert(c:log("debug"))
			c:close()
			return log.kept, log.set, log.note or "", log.entries[1] and log.entries[1].text or ""`, exe, mode)
	}
	got := mustRun(t, h, chunk("logging"))
	if got[0] != int64(1) || got[1] != true || got[2] != "" || !strings.Contains(got[3].(string), `"text":"hello"`) {
		t.Fatalf("a server that logs: %v", got)
	}
	got = mustRun(t, h, chunk("1"))
	if want := []any{int64(0), false}; !reflect.DeepEqual(got[:2], want) || !strings.Contains(got[2].(string), "does not declare logging") {
		t.Fatalf("a server without logging: %v", got)
	}
}
