package bridge

import (
	"strings"
	"testing"

	"tai/engine/tool"
)

// mcp_call and tai.mcp.call (through Callable) with a server or tool name
// of megabytes answer a short error that quotes it clipped; a tool the
// server lists is still called by its own name.
func TestMCPCallHugeNamesAnswerBriefly(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.add(t, "srv", nil)
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("Z", 5<<20)
	for _, args := range []map[string]any{
		{"server": "srv", "tool": huge},
		{"server": "srv", "tool": "echo\nforged"},
		{"server": huge, "tool": "echo"},
	} {
		res, err := f.reg.Dispatch(ctxT(t), "mcp_call", args)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !res.IsError || len(got) > 400 || strings.Contains(got, "\n") {
			t.Fatalf("mcp_call %.60v: %d bytes: %.300q", args, len(got), got)
		}
		// tai.mcp.call in Lua takes the error of Callable as it is.
		_, err = f.b.Callable(ctxT(t), args["server"].(string), args["tool"].(string))
		if err == nil || len(err.Error()) > 400 || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Callable %.60v: %.300q", args, err)
		}
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_call", map[string]any{"server": "srv", "tool": "echo", "args": map[string]any{"text": "hi"}})
	if err != nil || res.IsError || text(res) != "hi" {
		t.Fatalf("mcp_call echo: %v %v", text(res), err)
	}
}
