package lua

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/tool"
)

// fakeCommands puts npx and python on PATH as scripts that start the test
// binary's own MCP server, so configs naming them verify for real.
func fakeCommands(t *testing.T) {
	t.Helper()
	bin, server := serverBin(t)
	for _, name := range []string{"npx", "python"} {
		script := fmt.Sprintf("#!/bin/sh\nTAI_LUA_TEST_MCP=1 exec %q -test.run=^$\n", server)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// serverBin links the test binary as "server" into a new folder, where
// stand-in launchers that start it go too: a server's sandbox grants the
// folder of the runtime it runs with.
func serverBin(t *testing.T) (bin, server string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin = t.TempDir()
	server = filepath.Join(bin, "server")
	if err := os.Link(exe, server); err != nil {
		t.Fatal(err)
	}
	return bin, server
}

// TestMCPImport reads one fixture per client, from the place that client
// keeps its config, through tai.mcp.import.
func TestMCPImport(t *testing.T) {
	tests := []struct {
		client  string
		fixture string
		place   func(home, dir string) string
		want    string // server=outcome, …
		reason  string // a fragment of the first refusal
	}{
		{client: "claude-desktop", fixture: "001-claude-desktop-memory.json",
			place: func(home, _ string) string {
				return filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
			},
			want: "memory=added"},
		{client: "claude-code", fixture: "073-claude-code-mcpjson-sse-var-default.json",
			place: func(_, dir string) string { return filepath.Join(dir, ".mcp.json") },
			want:  "", reason: "sse"},
		{client: "cursor", fixture: "118-cursor-interpolation-workspacefolder-env.json",
			place: func(home, _ string) string { return filepath.Join(home, ".cursor", "mcp.json") },
			want:  "local-server=added"},
		{client: "vscode", fixture: "005-vscode-filesystem-workspacefolder.json",
			place: func(_, dir string) string { return filepath.Join(dir, ".vscode", "mcp.json") },
			want:  "filesystem=added"},
		{client: "codex", fixture: "022-codex-toml-playwright.toml",
			place: func(home, _ string) string { return filepath.Join(home, ".codex", "config.toml") },
			want:  "playwright=added"},
		{client: "gemini", fixture: "064-gemini-settings-includetools-commented-excludetools.json",
			place: func(home, _ string) string { return filepath.Join(home, ".gemini", "settings.json") },
			want:  "filteredserver=added"},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			fakeCommands(t)
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("API_KEY", "imported-api-key-value")
			h, _, dir := modelHost(t, tool.Yolo)
			data, err := os.ReadFile(filepath.Join("testdata", "import", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			p := tt.place(home, dir)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			run := fmt.Sprintf(`
				local rep = assert(tai.mcp.import{client = %q})
				local out, reasons, files = {}, {}, {}
				for _, f in ipairs(rep.files) do
					files[#files + 1] = f.path
					for _, s in ipairs(f.report.servers or {}) do
						if s.outcome == "refused" then reasons[#reasons + 1] = s.reason
						else out[#out + 1] = s.server .. "=" .. s.outcome end
					end
					for _, n in ipairs(f.report.notes or {}) do
						if n.level == "refused" then reasons[#reasons + 1] = n.text end
					end
					if f.error then reasons[#reasons + 1] = f.error end
				end
				return table.concat(out, ","), table.concat(reasons, " | "), table.concat(files, ",")`, tt.client)
			got := mustRun(t, h, run)
			if got[0] != tt.want || got[2] != p {
				t.Fatalf("import %s from %s: %q (refused: %q), files %q", tt.client, p, got[0], got[1], got[2])
			}
			if tt.reason != "" && !strings.Contains(strings.ToLower(got[1].(string)), tt.reason) {
				t.Fatalf("refusal %q does not mention %q", got[1], tt.reason)
			}
			// Importing again skips what is there.
			if tt.want != "" {
				again := mustRun(t, h, run)
				if !strings.HasSuffix(again[0].(string), "=skipped") {
					t.Fatalf("second import: %v", again)
				}
			}
		})
	}
}
