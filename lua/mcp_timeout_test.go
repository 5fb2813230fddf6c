package lua

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"tai/engine"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp"
)

// $TAI_MCP_CALL_TIMEOUT and $TAI_MCP_CALL_MAX_TOTAL set the call timeouts
// of the MCP clients a host opens; a value that is not a duration is
// said on stderr and the default kept; Options.MCPClient wins.
func TestMCPCallTimeoutSettings(t *testing.T) {
	env := map[string]string{"TAI_MCP_CALL_TIMEOUT": "2s", "TAI_MCP_CALL_MAX_TOTAL": "90"}
	h := newHost(t, Options{Engine: &engine.Options{Getenv: func(k string) string { return env[k] }}}, nil)
	o := h.mcpClientOptions("v", nil)
	if o.CallTimeout != 2*time.Second || o.CallMaxTotal != 90*time.Second {
		t.Errorf("timeouts = %s, %s; want 2s, 90s", o.CallTimeout, o.CallMaxTotal)
	}
	env["TAI_MCP_CALL_TIMEOUT"], env["TAI_MCP_CALL_MAX_TOTAL"] = "soon", "-5s"
	o = h.mcpClientOptions("v", nil)
	if o.CallTimeout != 0 || o.CallMaxTotal != 0 {
		t.Errorf("bad values set %s, %s", o.CallTimeout, o.CallMaxTotal)
	}
	for _, want := range []string{
		"tai: TAI_MCP_CALL_TIMEOUT=soon is not a duration: give one such as 90s or 10m; using 1m0s",
		"tai: TAI_MCP_CALL_MAX_TOTAL=-5s is not a duration: give one such as 90s or 10m; using 10m0s",
	} {
		if !strings.Contains(h.errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, h.errOut.String())
		}
	}
	h2 := newHost(t, Options{MCPClient: &mcp.ClientOptions{CallTimeout: time.Second},
		Engine: &engine.Options{Getenv: func(k string) string { return "7s" }}}, nil)
	if o := h2.mcpClientOptions("v", nil); o.CallTimeout != time.Second || o.CallMaxTotal != 7*time.Second {
		t.Errorf("with Options.MCPClient: %s, %s", o.CallTimeout, o.CallMaxTotal)
	}
}

// tai.chat's on_tool_progress receives what a running tool reports,
// between its on_tool_start and on_tool_end, the latest always (coalesced
// ones may be skipped).
func TestChatToolProgress(t *testing.T) {
	h, _, _ := modelHost(t, tool.Auto,
		llmtest.Calls(llmtest.Call("steps", `{}`)),
		llmtest.Say("stepped"))
	e, err := h.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Tools().Add(tool.Tool{Name: "steps", Description: "reports three steps", Safe: true,
		Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
			report := tool.CallerFrom(ctx).Progress
			if report == nil {
				return tool.ErrorResult("nobody listens"), nil
			}
			for i := 1; i <= 3; i++ {
				report(tool.Progress{Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
			return tool.TextResult("done"), nil
		}}); err != nil {
		t.Fatal(err)
	}
	got := mustRun(t, h, `
		local seen = {}
		local answer = assert(tai.chat("step", {
			on_tool_start = function(ev) seen[#seen + 1] = "start " .. ev.name end,
			on_tool_progress = function(ev) seen[#seen + 1] = string.format("%s %g/%g %s", ev.name, ev.progress, ev.total, ev.message) end,
			on_tool_end = function(ev) seen[#seen + 1] = "end " .. ev.outcome end }))
		return answer, table.concat(seen, "|")`)
	if got[0] != "stepped" {
		t.Fatalf("answer = %v", got[0])
	}
	seen := got[1].(string)
	if !strings.HasPrefix(seen, "start steps|steps ") || !strings.HasSuffix(seen, "|steps 3/3 step 3|end ok") {
		t.Errorf("events = %q, want the start, progress with the latest last, then the end", seen)
	}
}
