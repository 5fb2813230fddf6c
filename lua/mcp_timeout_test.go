package lua

import (
	"strings"
	"testing"
	"time"

	"tai/engine"
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
