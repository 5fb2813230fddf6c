package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"tai/mcp"
)

func TestExpandString(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret-token", "EMPTY": "", "HOST": "api.example.org", "db_path": "/data/db.sqlite", "brave-api-key": "bk-1234"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	tests := []struct {
		name, in, want string
		missing        []string
	}{
		{"plain", "Bearer ${TOKEN}", "Bearer s3cret-token", nil},
		{"default unused", "${TOKEN:-x}", "s3cret-token", nil},
		{"default when unset", "${API_BASE_URL:-https://api.example.com}/mcp", "https://api.example.com/mcp", nil},
		{"default when empty", "${EMPTY:-fallback}", "fallback", nil},
		{"empty default", "${CONTEXT7_API_KEY:-}", "", nil},
		{"dash default when unset", "${NOPE-dflt}", "dflt", nil},
		{"env prefix", "Bearer ${env:TOKEN}", "Bearer s3cret-token", nil},
		{"input id", "${input:db_path}", "/data/db.sqlite", nil},
		{"input id with dashes", "${input:brave-api-key}", "bk-1234", nil},
		{"input default", "${input:nope:-${HOST}/x}", "api.example.org/x", nil},
		{"missing keeps literal", "Bearer ${MISSING}", "Bearer ${MISSING}", []string{"MISSING"}},
		{"missing input", "${input:github_mcp_pat}", "${input:github_mcp_pat}", []string{"github_mcp_pat"}},
		{"set but empty", "${EMPTY}", "", nil},
		{"two refs", "${HOST}:${TOKEN}", "api.example.org:s3cret-token", nil},
		{"bare dollar untouched", "my-$$e-$ecret $TOKEN", "my-$$e-$ecret $TOKEN", nil},
		{"unclosed", "${TOKEN", "${TOKEN", nil},
		{"not a name", "${1abc} ${} ${a b}", "${1abc} ${} ${a b}", nil},
		{"nested default missing", "${A:-${B}}", "${B}", []string{"B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var missing []string
			got := expandString(tt.in, lookup, func(n string) { missing = append(missing, n) }, 0)
			if got != tt.want || !slices.Equal(missing, tt.missing) {
				t.Errorf("expand(%q) = %q, missing %q; want %q, missing %q", tt.in, got, missing, tt.want, tt.missing)
			}
		})
	}
}

func TestExpandEntry(t *testing.T) {
	e := mcp.Entry{
		Name: "x", Transport: "stdio", Command: "${workspaceFolder}/bin/srv",
		Args:    []string{"--key", "${KEY}", "${input:other}"},
		Env:     map[string]string{"A": "${KEY}", "B": "plain"},
		Headers: map[string]string{"Authorization": "Bearer ${KEY}"},
		URL:     "", Allow: []string{"t"},
	}
	asked := []string{}
	lookup := Chain(FolderVars("/proj"), func(n string) (string, bool) {
		asked = append(asked, n)
		if n == "KEY" {
			return "k-123456", true
		}
		return "", false
	})
	got, missing := Expand(e, lookup)
	if got.Command != "/proj/bin/srv" || got.Args[1] != "k-123456" || got.Env["A"] != "k-123456" || got.Env["B"] != "plain" || got.Headers["Authorization"] != "Bearer k-123456" {
		t.Errorf("Expand = %+v", got)
	}
	if !slices.Equal(missing, []string{"other"}) {
		t.Errorf("missing = %q, want [other]", missing)
	}
	if e.Args[1] != "${KEY}" || e.Env["A"] != "${KEY}" {
		t.Errorf("Expand changed its input: %+v", e)
	}
	err := MissingError("x", missing)
	var mv *MissingVarsError
	if !errors.As(err, &mv) || !strings.Contains(err.Error(), `tai.vault.secret_set("other"`) || !strings.Contains(err.Error(), "${other}") {
		t.Errorf("MissingError = %v", err)
	}
	if MissingError("x", nil) != nil {
		t.Error("MissingError with nothing missing is not nil")
	}
}

func TestExpandOwnEnv(t *testing.T) {
	// mcp-remote reads ${SLACK_MCP_API_KEY} in its --header from the env
	// the entry gives it; tai resolves it the same way.
	e := mcp.Entry{Command: "npx", Args: []string{"--header", "Authorization: Bearer ${SLACK_MCP_API_KEY}"},
		Env: map[string]string{"SLACK_MCP_API_KEY": "my-$$e-$ecret", "PASS": "${PASS}"}}
	got, missing := Expand(e, func(n string) (string, bool) { return map[string]string{"PASS": "outer"}[n], n == "PASS" })
	if got.Args[1] != "Authorization: Bearer my-$$e-$ecret" || got.Env["PASS"] != "outer" || len(missing) != 0 {
		t.Errorf("Expand = %+v, missing %q", got, missing)
	}
}

func TestFolderVarsEmptyDir(t *testing.T) {
	_, missing := Expand(mcp.Entry{Args: []string{"${workspaceFolder}"}}, FolderVars(""))
	if !slices.Equal(missing, []string{"workspaceFolder"}) {
		t.Errorf("missing = %q", missing)
	}
}
