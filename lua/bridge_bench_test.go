package lua

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/tool"
)

// BenchmarkMCPBridgedCall compares, in one run, a bridged echo through
// tai.call("mcp_bench_echo") under --yolo (registry, approval, audit,
// redaction, the bridge's lookups) with a direct c:call on a
// tai.mcp.connect session to the same server program, and with
// tai.call of a Lua tool that does nothing (the registry and its audit
// alone). bridged − direct − registry is what the bridge itself costs.
func BenchmarkMCPBridgedCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	h := newHost(b, Options{Vault: openTestVault(b, "pw"), Mode: tool.Yolo}, nil)
	cfg, _ := json.Marshal(map[string]any{"bench": map[string]any{
		"transport": "stdio", "command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": "bench"},
	}})
	if _, err := h.DoString(ctx, fmt.Sprintf(`
		tai.vault.secret_set("bench-token", "not-in-the-echo-1234")
		local rep = assert(tai.mcp.add{source = %q})
		assert(rep.servers[1].outcome == "added", rep.servers[1].reason)
		assert(tai.mcp.enable{server = "bench"})
		assert(tai.call("mcp_bench_echo", {text = "warm"}))
		tai.tool{name = "noop", description = "does nothing", run = function() return "ok" end}`, string(cfg)), "setup"); err != nil {
		b.Fatal(err)
	}
	loops := map[string]string{
		"direct": fmt.Sprintf(`local c = assert(tai.mcp.connect{name = "bench", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = "bench"}})
			return function(n)
				for _ = 1, n do
					local r, err = c:call("echo", {text = %q})
					if not r then error(err) end
				end
				c:close()
			end`, exe, benchEcho),
		"registry": `return function(n)
				for _ = 1, n do
					local r, err = tai.call("noop", {})
					if not r then error(err) end
				end
			end`,
		"bridged": fmt.Sprintf(`return function(n)
				for _ = 1, n do
					local r, err = tai.call("mcp_bench_echo", {text = %q})
					if not r or r.isError then error(err or r.content[1].text) end
				end
			end`, benchEcho),
	}
	for _, name := range []string{"direct", "registry", "bridged"} {
		b.Run(name, func(b *testing.B) {
			fn := mustLoad(b, h, loops[name])
			b.ResetTimer()
			if _, err := h.Call(ctx, fn, glua.LNumber(b.N)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}
