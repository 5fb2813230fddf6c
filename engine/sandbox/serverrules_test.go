package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestServerRulesEachCounts: every one of ForServer's rules is named once
// and changes the policy of some server: without it, one of these
// servers' policies is another.
func TestServerRulesEachCounts(t *testing.T) {
	w := newWorld(t)
	data := filepath.Join(w.home, "data")
	pythons := filepath.Join(w.home, ".local", "share", "uv", "python")
	for _, d := range []string{data, pythons} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	srv := filepath.Join(w.home, "tools", "srv")
	if err := os.MkdirAll(filepath.Dir(srv), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(srv, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	specs := []ServerSpec{
		{Name: "own", Command: srv, Env: w.env, Vault: w.vault},
		{Name: "files", Command: "npx", Args: []string{"-y", "pkg", data, filepath.Join(w.project, "README")}, Cwd: w.project, Env: w.env, Vault: w.vault,
			Read: []string{"~/.ssh", "~/other"}, Write: []string{"~"}},
		{Name: "here", Command: "sh", Dir: "/", Env: w.env, Vault: w.vault},
		{Name: "box", Command: "docker", Args: []string{"run", "-i", "img"}, Env: w.env, Vault: w.vault},
		{Name: "fetch", Command: "uvx", Args: []string{"mcp-server-fetch"}, Env: w.env, Vault: w.vault},
	}
	without := func(s ServerSpec, skip string) Policy {
		b := newServerBuild(s)
		for _, r := range serverRules {
			if r.name != skip {
				r.apply(b)
			}
		}
		return b.p
	}
	seen := map[string]bool{}
	for _, r := range serverRules {
		if r.name == "" || seen[r.name] {
			t.Errorf("rule %q is unnamed or named twice", r.name)
		}
		seen[r.name] = true
		counts := false
		for _, s := range specs {
			if !reflect.DeepEqual(without(s, r.name), ForServer(s)) {
				counts = true
				break
			}
		}
		if !counts {
			t.Errorf("rule %q changes no policy", r.name)
		}
	}
}
