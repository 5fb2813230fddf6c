package lua

import (
	"os"
	"strings"
	"testing"

	"tai/mcp/config"
	"tai/mcp/server"
)

// TestServeSnippetsNormalize feeds each client snippet the server prints
// to tai's own normalizer (with the shipped normalize.lua rules) and checks
// that it describes this server: one http entry at the URL, sending the
// key from where the snippet says, the key itself nowhere.
func TestServeSnippetsNormalize(t *testing.T) {
	h := newHost(t, Options{}, nil)
	norm := h.Normalizer()
	url := "http://127.0.0.1:8765/mcp"
	want := map[string]string{
		"Claude Code": "Bearer ${TAI_MCP_KEY}",
		"Gemini CLI":  "Bearer ${TAI_MCP_KEY}",
		"Cursor":      "Bearer ${TAI_MCP_KEY}",
		"VS Code":     "Bearer ${input:tai-mcp-key}",
		"Codex":       "Bearer ${TAI_MCP_KEY}",
		"Another tai": "Bearer ${TAI_MCP_KEY}",
	}
	snippets := server.Snippets("tai", url, taiAdd)
	if len(snippets) != len(want) {
		t.Fatalf("%d snippets, want %d", len(snippets), len(want))
	}
	for _, s := range snippets {
		t.Run(s.Client, func(t *testing.T) {
			// Claude Code's and Gemini CLI's are mcp add command lines,
			// another tai's a /mcp add line
			text := strings.TrimPrefix(s.Text, "/mcp add ")
			entries, notes, err := norm(text, "")
			if err != nil {
				t.Fatalf("normalize: %v\n%s", err, text)
			}
			for _, n := range notes {
				if n.Level == config.LevelRefused || n.Level == config.LevelWarn {
					t.Errorf("note %s: %s", n.Level, n.Text)
				}
			}
			if len(entries) != 1 {
				t.Fatalf("%d entries from\n%s", len(entries), text)
			}
			e := entries[0]
			if e.Name != "tai" || e.Transport != "http" || e.URL != url {
				t.Errorf("entry %+v", e)
			}
			if got := e.Headers["Authorization"]; got != want[s.Client] {
				t.Errorf("Authorization = %q, want %q (headers %v)", got, want[s.Client], e.Headers)
			}
		})
	}
}

// servedToolsFile lists, one per line, the tools a fresh tai serves (no
// init.lua, no servers): mcp/doc_test.go checks mcp/README.md against it.
const servedToolsFile = "../mcp/server/testdata/served-tools.txt"

// TestServedToolsList compares what the host's engine serves with
// servedToolsFile; -update rewrites the file.
func TestServedToolsList(t *testing.T) {
	h := newHost(t, Options{Vault: openTestVault(t, "")}, nil)
	e, err := h.Engine()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tool := range e.Served(nil).Tools() {
		b.WriteString(tool.Name + "\n")
	}
	if *update {
		if err := os.WriteFile(servedToolsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(servedToolsFile)
	if err != nil {
		t.Fatalf("%v (run go test ./lua -run TestServedToolsList -update)", err)
	}
	if string(got) != b.String() {
		t.Fatalf("%s is stale (run go test ./lua -run TestServedToolsList -update, then fix mcp/README.md):\nfile:\n%s\nserved:\n%s", servedToolsFile, got, b.String())
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if n := len(lines); n < 3 || lines[n-2] != "chat" || lines[n-1] != "completions" {
		t.Fatalf("the served list does not end with chat and completions: %v", lines)
	}
}
