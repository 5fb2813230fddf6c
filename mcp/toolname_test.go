package mcp

import (
	"strings"
	"testing"

	"tai/mcp/screen"
)

func TestCheckToolName(t *testing.T) {
	for _, name := range []string{"getUser", "DATA_EXPORT_v2", "admin.tools.list", "a", strings.Repeat("x", ToolNameMax), "mcp_github_create_issue"} {
		if err := CheckToolName(name); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"", "empty"},
		{strings.Repeat("x", ToolNameMax+1), `"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" (129 bytes)`},
		{strings.Repeat("Z", 5<<20), `(5242880 bytes)`},
		{"read file", "at byte 4"},
		{"a,b", "at byte 1"},
		{"ok\n#9999 forged", `"` + screen.VisibleLine("ok\n#9999 forged") + `"`},
		{"tool\u200b", "at byte 4"},
		{"naïve", "at byte 2"},
	} {
		err := CheckToolName(tc.name)
		if err == nil {
			t.Errorf("%.50q accepted", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || len(msg) > 300 || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("%.50q: %q, want it short, on one line, with %q", tc.name, msg, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"short", `"short"`},
		{"a\nb\x1b[2J", `"` + screen.VisibleLine("a\nb\x1b[2J") + `"`},
		{strings.Repeat("é", 30), `"` + strings.Repeat("é", 20) + `…" (60 bytes)`},
		{"x" + strings.Repeat("é", 30), `"x` + strings.Repeat("é", 19) + `…" (61 bytes)`},
		{strings.Repeat("\n", 100), `"` + screen.VisibleLine(strings.Repeat("\n", ClipMax)) + `…" (100 bytes)`},
	} {
		if got := Clip(tc.in); got != tc.want {
			t.Errorf("Clip(%.60q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
