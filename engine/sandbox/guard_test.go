package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestGuardKeepsTheRepositoryWhereItWas: a .git swapped for a file or a
// link naming another repository (whose config a command outside the
// sandbox would then read), a commondir planted in it, or an info folder
// swapped for a link, are put back; a repository a command makes where
// there was none is left, without the config it wrote.
func TestGuardKeepsTheRepositoryWhereItWas(t *testing.T) {
	setup := func(t *testing.T) (project, git, evil string) {
		project = t.TempDir()
		git = filepath.Join(project, ".git")
		evil = t.TempDir()
		os.MkdirAll(filepath.Join(git, "info"), 0o755)
		os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n"), 0o644)
		os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(evil, "config"), []byte("[core]\n\tsshCommand = evil\n"), 0o644)
		return
	}
	for _, c := range []struct {
		name  string
		plant func(project, git, evil string)
	}{
		{"a file naming another folder", func(_, git, evil string) {
			os.Rename(git, git+".old")
			os.WriteFile(git, []byte("gitdir: "+evil+"\n"), 0o644)
		}},
		{"a link to another folder", func(_, git, evil string) {
			os.Rename(git, git+".old")
			os.Symlink(evil, git)
		}},
		{"a commondir", func(_, git, evil string) {
			os.WriteFile(filepath.Join(git, "commondir"), []byte(evil+"\n"), 0o644)
		}},
		{"info as a link", func(_, git, evil string) {
			os.RemoveAll(filepath.Join(git, "info"))
			os.Symlink(evil, filepath.Join(git, "info"))
			os.WriteFile(filepath.Join(git, "info", "attributes"), []byte("* filter=x\n"), 0o644)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			project, git, evil := setup(t)
			var g Guard
			done := g.Sandboxed(gitGuarded(project))
			c.plant(project, git, evil)
			back := done()
			if st, err := os.Lstat(git); err != nil || !st.IsDir() {
				t.Fatalf(".git is not a folder again (%v); put back %q", err, back)
			}
			if b, _ := os.ReadFile(filepath.Join(git, "config")); string(b) != "[core]\n" {
				t.Errorf("config: %q", b)
			}
			if _, err := os.Stat(filepath.Join(git, "commondir")); err == nil {
				t.Error("the planted commondir stayed")
			}
			if st, err := os.Lstat(filepath.Join(git, "info")); err == nil && !st.IsDir() {
				t.Error("info is still a link")
			}
			if b, _ := os.ReadFile(filepath.Join(evil, "config")); !strings.Contains(string(b), "evil") {
				t.Errorf("the other folder's config was written through: %q", b)
			}
		})
	}
	t.Run("a repository made where there was none", func(t *testing.T) {
		project := t.TempDir()
		var g Guard
		done := g.Sandboxed(gitGuarded(project))
		os.MkdirAll(filepath.Join(project, ".git", "hooks"), 0o755)
		os.WriteFile(filepath.Join(project, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(project, ".git", "config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
		os.WriteFile(filepath.Join(project, ".git", "hooks", "pre-push"), []byte("evil"), 0o755)
		done()
		if _, err := os.Stat(filepath.Join(project, ".git", "HEAD")); err != nil {
			t.Errorf("the new repository is gone: %v", err)
		}
		for _, f := range []string{"config", "hooks/pre-push"} {
			if _, err := os.Stat(filepath.Join(project, ".git", f)); err == nil {
				t.Errorf("%s stayed", f)
			}
		}
	})
}
