package config

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name, text                 string
		entry, transport, cmd, url string
		args                       []string
		env, headers               map[string]string
		refused, note              string // substrings of a refused / any note
	}{
		{name: "claude http banner", text: `claude mcp add --transport http tai http://127.0.0.1:8765/mcp --header "Authorization: Bearer ${TAI_MCP_KEY}"`,
			entry: "tai", transport: "http", url: "http://127.0.0.1:8765/mcp", headers: map[string]string{"Authorization": "Bearer ${TAI_MCP_KEY}"}},
		{name: "claude stdio env after --", text: "$ claude mcp add memory -e MEMORY_FILE_PATH=/tmp/m.json -- npx -y @modelcontextprotocol/server-memory",
			entry: "memory", transport: "stdio", cmd: "npx", args: []string{"-y", "@modelcontextprotocol/server-memory"}, env: map[string]string{"MEMORY_FILE_PATH": "/tmp/m.json"}},
		{name: "claude continuation and scope", text: "claude mcp add -s user \\\n  --env A=1 B=2 \\\n  fs -- npx -y '@modelcontextprotocol/server-filesystem' \"/tmp/a b\"",
			entry: "fs", transport: "stdio", cmd: "npx", args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp/a b"}, env: map[string]string{"A": "1", "B": "2"}, note: "ignored -s user"},
		{name: "claude headers then url", text: `claude mcp add -t http web -H "X-A: 1" "X-B: 2" https://mcp.acme.dev/mcp`,
			entry: "web", transport: "http", url: "https://mcp.acme.dev/mcp", headers: map[string]string{"X-A": "1", "X-B": "2"}},
		{name: "claude sse refused", text: "claude mcp add --transport sse linear https://mcp.linear.app/sse", refused: "/mcp instead of /sse"},
		{name: "claude unknown flag", text: "claude mcp add --frobnicate abc x https://mcp.acme.dev/mcp", refused: "the flag --frobnicate"},
		{name: "claude client id on stdio", text: "claude mcp add --client-id abc x https://mcp.acme.dev/mcp", refused: "oauth is for http servers"},
		{name: "claude no name", text: "claude mcp add --transport http", refused: "names no server"},
		{name: "claude http two words", text: "claude mcp add -t http x https://mcp.acme.dev/mcp extra", refused: "one URL"},
		{name: "codex stdio", text: "codex mcp add context7 -- npx -y @upstash/context7-mcp",
			entry: "context7", transport: "stdio", cmd: "npx", args: []string{"-y", "@upstash/context7-mcp"}},
		{name: "codex url bearer", text: "codex mcp add api --url https://api.acme.dev/mcp --bearer-token-env-var API_TOKEN",
			entry: "api", transport: "http", url: "https://api.acme.dev/mcp", headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"}},
		{name: "codex env=", text: "codex mcp add m --env=K=v -- srv",
			entry: "m", transport: "stdio", cmd: "srv", args: []string{}, env: map[string]string{"K": "v"}},
		{name: "codex has no -t", text: "codex mcp add -t http x https://mcp.acme.dev/mcp", refused: "the flag -t"},
		{name: "gemini stdio", text: "gemini mcp add myserver python server.py",
			entry: "myserver", transport: "stdio", cmd: "python", args: []string{"server.py"}},
		{name: "gemini http", text: `gemini mcp add -t http api https://mcp.acme.dev/mcp -H "Authorization: Bearer ${K}"`,
			entry: "api", transport: "http", url: "https://mcp.acme.dev/mcp", headers: map[string]string{"Authorization": "Bearer ${K}"}},
		{name: "gemini unknown flag", text: "gemini mcp add --trust s python server.py", refused: "the flag --trust"},
		{name: "bad env", text: "claude mcp add -e sk-NOPE m -- srv", refused: "the value after -e is not KEY=VALUE"},
		{name: "bad header", text: "codex mcp add m --url https://mcp.acme.dev/mcp --bearer-token-env-var T extra", refused: "is not expected"},
		{name: "bad gemini header", text: "gemini mcp add -t http m https://mcp.acme.dev/mcp -H tok", refused: "the value after -H is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, notes, err := Normalize(tc.text, nil)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if tc.refused != "" {
				if len(entries) != 0 || !slices.ContainsFunc(notes, func(n Note) bool { return n.Level == LevelRefused && strings.Contains(n.Text, tc.refused) }) {
					t.Fatalf("entries %+v notes %+v, want a refusal with %q", entries, notes, tc.refused)
				}
				for _, n := range notes {
					if strings.Contains(n.Text, "sk-NOPE") {
						t.Errorf("a refusal shows the value it refused: %s", n.Text)
					}
				}
				return
			}
			if len(entries) != 1 {
				t.Fatalf("entries = %+v notes %+v", entries, notes)
			}
			e := entries[0]
			if e.Name != tc.entry || e.Transport != tc.transport || e.Command != tc.cmd || e.URL != tc.url || e.Source != SourceExplicit || e.Enabled {
				t.Errorf("entry = %+v", e)
			}
			if tc.args != nil && !slices.Equal(e.Args, tc.args) {
				t.Errorf("args = %q, want %q", e.Args, tc.args)
			}
			if !maps.Equal(e.Env, tc.env) && (len(e.Env) != 0 || len(tc.env) != 0) {
				t.Errorf("env = %v, want %v", e.Env, tc.env)
			}
			if !maps.Equal(e.Headers, tc.headers) && (len(e.Headers) != 0 || len(tc.headers) != 0) {
				t.Errorf("headers = %v, want %v", e.Headers, tc.headers)
			}
			for _, n := range notes {
				if n.Level != LevelInfo {
					t.Errorf("note %+v", n)
				}
			}
			if tc.note != "" && !slices.ContainsFunc(notes, func(n Note) bool { return strings.Contains(n.Text, tc.note) }) {
				t.Errorf("notes %+v, want one with %q", notes, tc.note)
			}
		})
	}
}

func TestNormalizeCommandLineNeedsShell(t *testing.T) {
	for _, text := range []string{
		`claude mcp add x -- sh -c "echo $(id)"`,
		`claude mcp add x -- srv | tee log`,
		`claude mcp add x -- srv "open`,
	} {
		_, _, err := Normalize(text, nil)
		if err == nil || !strings.Contains(err.Error(), "without a shell") {
			t.Errorf("%s: err = %v", text, err)
		}
	}
}
