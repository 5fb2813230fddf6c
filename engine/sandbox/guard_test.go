package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGuardPutsBack: what sandboxed commands change of a repository's
// config and hooks is put back once the last of them ends, to what it
// was before the first began, even when another started after the
// change; a hook folder swapped for a link is never followed; git's
// example hooks are left.
func TestGuardPutsBack(t *testing.T) {
	project := t.TempDir()
	git := filepath.Join(project, ".git")
	elsewhere := t.TempDir()
	for f, body := range map[string]string{"config": "[core]\n", "hooks/pre-commit.sample": "#!/bin/sh\n", "HEAD": "ref: refs/heads/main\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(git, f)), 0o755)
		os.WriteFile(filepath.Join(git, f), []byte(body), 0o644)
	}
	os.WriteFile(filepath.Join(elsewhere, "keep"), []byte("mine"), 0o644)
	paths := gitGuarded(filepath.Join(project))
	if !slices.Contains(paths, filepath.Join(git, "config")) || !slices.Contains(paths, filepath.Join(git, "hooks")) {
		t.Fatalf("guarded: %q", paths)
	}
	var g Guard
	first := g.Sandboxed(paths)
	os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tsshCommand = evil\n"), 0o644)
	second := g.Sandboxed(paths) // starts after the change
	os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/side\n"), 0o644)
	if back := first(); len(back) != 0 {
		t.Fatalf("put back while another command runs: %q", back)
	}
	os.RemoveAll(filepath.Join(git, "hooks"))
	os.Symlink(elsewhere, filepath.Join(git, "hooks"))
	back := second()
	if b, _ := os.ReadFile(filepath.Join(git, "config")); string(b) != "[core]\n" {
		t.Errorf("config: %q (put back %q)", b, back)
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "keep")); string(b) != "mine" {
		t.Errorf("a file behind the link was touched: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(git, "hooks")); err != nil || !st.IsDir() {
		t.Errorf("hooks is not a folder again: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(git, "HEAD")); string(b) != "ref: refs/heads/side\n" {
		t.Errorf("HEAD, which git writes, was put back: %q", b)
	}
	// A new example hook stays; a new hook goes.
	done := g.Sandboxed(paths)
	os.WriteFile(filepath.Join(git, "hooks", "pre-push.sample"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(git, "hooks", "pre-push"), []byte("#!/bin/sh\nevil\n"), 0o755)
	if back := done(); !slices.Equal(back, []string{filepath.Join(git, "hooks", "pre-push")}) {
		t.Errorf("put back %q", back)
	}
	if _, err := os.Stat(filepath.Join(git, "hooks", "pre-push.sample")); err != nil {
		t.Errorf("an example hook was removed: %v", err)
	}
}
