package bridge

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tai/engine/sandbox"
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
