package bridge

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tai/engine/tool"
)

// TestTaskOnlyToolListedNotOffered: a tool that runs only as an MCP task
// (execution.taskSupport "required") is listed with a note saying so and
// never offered to the model, never callable; an "optional" one is
// offered and called as any other.
func TestTaskOnlyToolListedNotOffered(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	listing := `[{"name":"research","description":"runs as a task","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},` +
		`{"name":"either","description":"task or not","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]`
	if err := os.WriteFile(state, []byte(listing), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, tool.Yolo, "")
	out := f.add(t, "h", map[string]string{serverEnv: hostileServer, serverStateEnv: state})
	mustContain(t, "notes", strings.Join(out.Notes, "\n"), `tool "research" refused: it runs only as an MCP task`)
	if _, err := f.b.SetEnabled(ctxT(t), "h", "", true); err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, s := range f.reg.Specs() {
		if strings.HasPrefix(s.Name, "mcp_h_") {
			offered = append(offered, s.Name)
		}
	}
	if !slices.Equal(offered, []string{"mcp_h_either"}) {
		t.Fatalf("offered %v, want only mcp_h_either", offered)
	}
	infos, err := f.b.Tools(ctxT(t), "h")
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, ti := range infos {
		if ti.Tool == "research" {
			reason = ti.Reason
			if ti.Offered {
				t.Fatal("research is offered")
			}
		}
	}
	if reason != "not offered: "+TaskOnly {
		t.Fatalf("research's reason = %q", reason)
	}
	res, err := f.b.call(ctxT(t), "h", "research", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "runs only as an MCP task") {
		t.Fatalf("calling research: %v, %+v", err, res)
	}
	if res, err := f.b.call(ctxT(t), "h", "either", nil); err != nil || res.Text() != "ran either" {
		t.Fatalf("calling either: %v, %+v", err, res)
	}
}
