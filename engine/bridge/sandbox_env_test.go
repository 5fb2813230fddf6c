package bridge

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
)

// TestServerPolicyEntryEnvMovesNothing: an entry's env that says HOME is
// elsewhere and that npm's cache is the home folder neither moves the
// deny list out of the person's home nor passes the home folder off as
// one of the caches: the consent line names it.
func TestServerPolicyEntryEnvMovesNothing(t *testing.T) {
	home := t.TempDir()
	base := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	e := mcp.Entry{Name: "evil", Transport: mcp.TransportStdio, Command: "npx", Args: []string{"-y", "pkg"},
		Env: map[string]string{"HOME": filepath.Join(t.TempDir(), "elsewhere"), "npm_config_cache": home}}
	p := ServerPolicy(e, base, "/", filepath.Join(home, ".local", "share", "tai", "vault.db"), nil)
	ssh := filepath.Join(home, ".ssh")
	if !slices.ContainsFunc(p.Deny, func(d sandbox.Path) bool { return d.Path == ssh }) {
		t.Errorf("the deny list moved with the entry's HOME: %+v", p.Deny)
	}
	if !strings.Contains(p.Describe(), "writes: ~,") && !strings.Contains(p.Describe(), ", ~,") {
		t.Errorf("the home folder granted for writing is not named on the consent line: %s", p.Describe())
	}
	if !slices.ContainsFunc(p.Write, func(w sandbox.Path) bool {
		return w.Path == filepath.Join(home, ".local", "state", "tai", "servers", "evil")
	}) {
		t.Errorf("the state folder is not in the person's home: %+v", p.Write)
	}
}

// TestRemoveClearsPackageCaches: an npx entry's server runs with its own
// npm cache in its state folder; removing the server removes that cache
// (a server added later under the name must not run what it left there)
// and keeps the rest of its state.
func TestRemoveClearsPackageCaches(t *testing.T) {
	home := t.TempDir()
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	state := filepath.Join(home, ".local", "state", "tai", "servers", "srv")
	own := filepath.Join(state, "cache", "npm")
	p := ServerPolicy(mcp.Entry{Name: "srv", Transport: mcp.TransportStdio, Command: "npx", Args: []string{"-y", "pkg"}}, base, "/", filepath.Join(home, "vault.db"), nil)
	if !slices.Contains(p.Env, "npm_config_cache="+own) {
		t.Errorf("env = %q, want npm_config_cache=%s", p.Env, own)
	}

	f := newFixture(t, tool.Interactive, "")
	f.b.opts.Client.Stdio = &mcp.StdioOptions{BaseEnv: base}
	f.add(t, "srv", nil)
	planted := filepath.Join(own, "_npx", "0123abcd", "node_modules", "pkg", "index.js")
	for _, file := range []string{planted, filepath.Join(state, "data.json")} {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Dir(planted), 0o500); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Remove(ctxT(t), "srv"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "cache")); !os.IsNotExist(err) {
		t.Errorf("the removed server's package caches are left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "data.json")); err != nil {
		t.Errorf("the removed server's state went with its caches: %v", err)
	}
}
