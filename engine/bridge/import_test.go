package bridge

import (
	"reflect"
	"testing"
)

func TestConfigPaths(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name, client string
		p            Places
		want         []string
	}{
		{name: "claude desktop linux", client: "claude-desktop", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.config/Claude/claude_desktop_config.json"}},
		{name: "claude desktop xdg", client: "claude-desktop", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(map[string]string{"XDG_CONFIG_HOME": "/x"})},
			want: []string{"/x/Claude/claude_desktop_config.json"}},
		{name: "claude desktop mac", client: "claude-desktop", p: Places{Home: "/h", Dir: "/p", GOOS: "darwin", Getenv: env(nil)},
			want: []string{"/h/Library/Application Support/Claude/claude_desktop_config.json"}},
		{name: "claude code", client: "claude-code", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.claude.json", "/p/.mcp.json"}},
		{name: "cursor", client: "cursor", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.cursor/mcp.json", "/p/.cursor/mcp.json"}},
		{name: "vscode", client: "vscode", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.config/Code/User/mcp.json", "/p/.vscode/mcp.json"}},
		{name: "codex home", client: "codex", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(map[string]string{"CODEX_HOME": "/c"})},
			want: []string{"/c/config.toml"}},
		{name: "gemini", client: "gemini", p: Places{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.gemini/settings.json", "/p/.gemini/settings.json"}},
		{name: "gemini in the home folder", client: "gemini", p: Places{Home: "/h", Dir: "/h/", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.gemini/settings.json"}},
		{name: "cursor in the home folder", client: "cursor", p: Places{Home: "/h", Dir: "/h", GOOS: "linux", Getenv: env(nil)},
			want: []string{"/h/.cursor/mcp.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigPaths(tt.client, tt.p)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ConfigPaths = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if _, err := ConfigPaths("zed", Places{}); err == nil {
		t.Fatal("an unknown client was accepted")
	}
}

func TestClaudeCodeServers(t *testing.T) {
	doc := `{"numStartups": 3, "mcpServers": {"user": {"command": "a"}},
		"projects": {"/p": {"mcpServers": {"proj": {"command": "b"}}}, "/other": {"mcpServers": {"no": {"command": "c"}}}}}`
	got, err := claudeCodeServers([]byte(doc), "/p")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"mcpServers":{"proj":{"command": "b"},"user":{"command": "a"}}}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if got, _ := claudeCodeServers([]byte(`{"projects": {}}`), "/p"); got != "" {
		t.Fatalf("no servers gave %q", got)
	}
}
