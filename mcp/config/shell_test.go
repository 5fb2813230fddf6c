package config

import (
	"reflect"
	"testing"

	"tai/mcp"
)

func TestThroughShell(t *testing.T) {
	env := map[string]string{"T": "${gh}", "U": "x-${GITHUB_TOKEN}", "PLAIN": "1"}
	curl := `curl -H "x: $T" -H "y: ${U}" https://example.com $PLAIN`
	both := []ShellRef{{"T", "gh"}, {"U", "GITHUB_TOKEN"}}
	tests := []struct {
		name string
		argv []string
		want []ShellRef
	}{
		{"sh -c", []string{"sh", "-c", curl}, both},
		{"bash -ec", []string{"/bin/bash", "-ec", curl}, both},
		{"zsh -c, quoted", []string{"zsh", "-c", `exec srv --token "$T"`}, []ShellRef{{"T", "gh"}}},
		{"fish -c", []string{"fish", "-c", "srv $T"}, []ShellRef{{"T", "gh"}}},
		{"dash -c", []string{"dash", "-c", "srv ${T:-none}"}, []ShellRef{{"T", "gh"}}},
		{"ash -c", []string{"ash", "-c", "srv $T"}, []ShellRef{{"T", "gh"}}},
		{"env sh -c", []string{"env", "sh", "-c", "srv $T"}, []ShellRef{{"T", "gh"}}},
		{"/usr/bin/env -i A=1 -u B sh -c", []string{"/usr/bin/env", "-i", "A=1", "-u", "B", "sh", "-c", "srv $T"}, []ShellRef{{"T", "gh"}}},
		{"a shell without -c", []string{"sh", "script.sh", "$T"}, nil},
		{"not a shell", []string{"node", "server.js", "$T"}, nil},
		{"env running no shell", []string{"env", "A=1", "python3", "-c", "print('$T')"}, nil},
		{"a variable the entry does not set", []string{"sh", "-c", "srv $OTHER $9 $"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ThroughShell(mcp.Entry{Command: tt.argv[0], Args: tt.argv[1:], Env: env})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ThroughShell(%q) = %v, want %v", tt.argv, got, tt.want)
			}
		})
	}
}
