package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tai/vault"
)

// TestPlantedGitCodeNeverRunsOutsideTheSandbox: with a rule that runs
// git push outside the sandbox, the model's sandboxed commands plant a
// core.sshCommand in .git/config and a pre-push hook; both are put back
// when the command ends, so the lifted git push runs neither. Sandboxed
// git add, commit and checkout still work.
func TestPlantedGitCodeNeverRunsOutsideTheSandbox(t *testing.T) {
	e, home, _ := shellWorld(t)
	project := e.dir
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com",
		"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	bare := filepath.Join(home, "remote.git")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(home, "init", "-q", "--bare", bare)
	git(project, "init", "-q")
	git(project, "add", ".")
	git(project, "commit", "-qm", "first")
	git(project, "remote", "add", "origin", bare)
	git(project, "remote", "add", "far", "ssh://127.0.0.1:1/x.git")
	if err := e.store.PermissionAdd(vault.Permission{Dir: project, Tool: "shell", Prefix: "git push", Unsandboxed: true}); err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(project, ".git", "config"))
	mark := filepath.Join(t.TempDir(), "ran")

	res := dispatch(t, e, "shell", map[string]any{"command": "git config core.sshCommand 'touch " + mark + "; false'"})
	if !strings.Contains(res.Text(), "(the sandbox put back .git/config") {
		t.Errorf("the planted config was not put back:\n%s", res.Text())
	}
	if now, _ := os.ReadFile(filepath.Join(project, ".git", "config")); string(now) != string(config) {
		t.Errorf(".git/config is now\n%s", now)
	}
	res = dispatch(t, e, "shell", map[string]any{"command": "printf '#!/bin/sh\\ntouch " + mark + "\\n' > .git/hooks/pre-push && chmod +x .git/hooks/pre-push"})
	if !strings.Contains(res.Text(), ".git/hooks/pre-push") {
		t.Errorf("the planted hook was not put back:\n%s", res.Text())
	}
	res = dispatch(t, e, "shell", map[string]any{"command": "echo more >> go.mod && git add go.mod && git commit -qm more && git checkout -q -b side && git checkout -q - && git log --oneline | wc -l"})
	if res.IsError || !strings.Contains(res.Text(), "2") || strings.Contains(res.Text(), "put back") {
		t.Fatalf("sandboxed git add, commit and checkout:\n%s", res.Text())
	}
	for _, push := range []string{"git push -q origin HEAD:main", "git push -q far HEAD:main"} {
		res = dispatch(t, e, "shell", map[string]any{"command": push})
		if !strings.HasPrefix(res.Text(), "(outside the sandbox: rule for 'git push'") {
			t.Fatalf("%s did not run outside the sandbox:\n%s", push, res.Text())
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("%s ran what the model planted:\n%s", push, res.Text())
		}
	}
	git(bare, "log", "-q", "--oneline", "main")

	// A repository the model makes in a folder below, with a hook of its
	// own, is not pushed from outside the sandbox (the hook would touch a
	// file the sandbox cannot write).
	mark = filepath.Join(home, "hooked")
	res = dispatch(t, e, "shell", map[string]any{"command": "git init -q sub && cd sub && git commit -q --allow-empty -m x && git remote add origin " + bare +
		" && printf '#!/bin/sh\\ntouch " + mark + "\\n' > .git/hooks/pre-push && chmod +x .git/hooks/pre-push && echo MADE"})
	if !strings.Contains(res.Text(), "MADE") {
		t.Fatalf("making a repository below:\n%s", res.Text())
	}
	res = dispatch(t, e, "shell", map[string]any{"command": "git push -q origin HEAD:other", "cwd": "sub"})
	if strings.HasPrefix(res.Text(), "(outside the sandbox:") {
		t.Errorf("a push from a repository the model made ran outside the sandbox:\n%s", res.Text())
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("the hook of a repository the model made ran:\n%s", res.Text())
	}

	// A program named in the command's own options stays in the sandbox.
	ran := filepath.Join(home, "ran")
	for _, push := range []string{"git push '--receive-pack=touch " + ran + "' origin HEAD:main",
		"git push --exec 'touch " + ran + "' origin HEAD:main"} {
		res = dispatch(t, e, "shell", map[string]any{"command": push})
		if strings.HasPrefix(res.Text(), "(outside the sandbox:") {
			t.Errorf("%s ran outside the sandbox:\n%s", push, res.Text())
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%s ran the program its option names:\n%s", push, res.Text())
		}
	}
}
