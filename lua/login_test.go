package lua

import (
	"reflect"
	"testing"

	"tai/engine/tool"
)

// TestMCPLoginCallbackPort: tai.mcp.login takes callback_port as the
// integer Lua passes (and /mcp login --callback-port N), refusing one
// that is no port.
func TestMCPLoginCallbackPort(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	got := mustRun(t, h, `
		local m, err = tai.mcp.login{server = "nosuch", callback_port = 3118}
		local ok, bad = pcall(tai.mcp.login, {server = "nosuch", callback_port = 70000})
		return m == nil, err:match("not registered") ~= nil, ok, tostring(bad):match("port number") ~= nil`)
	if want := []any{true, true, false, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
