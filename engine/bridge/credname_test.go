package bridge

import (
	"encoding/json"
	"strings"
	"testing"

	"tai/engine/tool"
)

// TestPlainValueNotRedacted: a variable that holds a file's path
// (MEMORY_FILE_PATH, with PATH in its name) is no credential, so a
// server's error that names its value shows it, while a credential's
// value (GITHUB_TOKEN's) stays hidden in the same error.
func TestPlainValueNotRedacted(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	const token = "ghp_notshown0123456789"
	src, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": map[string]any{
		"command": "sh",
		"args":    []string{"-c", `echo "cannot open $MEMORY_FILE_PATH (token $GITHUB_TOKEN)" >&2; exit 3`},
		"env":     map[string]string{"MEMORY_FILE_PATH": "/path/to/memory.json", "GITHUB_TOKEN": token},
	}}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: string(src)})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Refused {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	reason := rep.Servers[0].Reason
	mustContain(t, "reason", reason, "cannot open /path/to/memory.json")
	if strings.Contains(reason, token) || strings.Contains(reason, "REDACTED:MEMORY_FILE_PATH") {
		t.Errorf("reason = %q: the token shown, or the path hidden", reason)
	}
}
