package config

import (
	"slices"
	"testing"

	"tai/mcp"
)

func TestExposed(t *testing.T) {
	tests := []struct {
		name        string
		e           mcp.Entry
		argv, query []string
	}{
		{name: "args and command", e: mcp.Entry{Command: "${BIN}", Args: []string{"--token", "${gh}", "${gh}"}},
			argv: []string{"BIN", "gh"}},
		{name: "through the entry's env", e: mcp.Entry{Command: "srv", Args: []string{"--t=${T}"}, Env: map[string]string{"T": "Bearer ${gh}"}},
			argv: []string{"T", "gh"}},
		{name: "env naming itself resolves outside", e: mcp.Entry{Command: "srv", Args: []string{"${T}"}, Env: map[string]string{"T": "${T}"}},
			argv: []string{"T"}},
		{name: "defaults", e: mcp.Entry{Command: "srv", Args: []string{"${A:-${B:-${gh}}}"}},
			argv: []string{"A", "B", "gh"}},
		{name: "env and headers alone expose nothing", e: mcp.Entry{Command: "srv", Env: map[string]string{"X": "${gh}"}, Headers: map[string]string{"A": "${k}"}}},
		{name: "URL query, not path or fragment", e: mcp.Entry{URL: "https://${HOST}/p/${P}?key=${k}&x=1#${F}"},
			query: []string{"k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, query := Exposed(tt.e)
			if !slices.Equal(argv, tt.argv) || !slices.Equal(query, tt.query) {
				t.Errorf("Exposed = %q, %q; want %q, %q", argv, query, tt.argv, tt.query)
			}
		})
	}
}
