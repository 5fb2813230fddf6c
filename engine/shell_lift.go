package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/vault"
)

// LiftShellSandbox turns the shell's sandbox off (lifted true) or back on
// for the model's commands in this process's own sessions, until the
// process ends: the person's /sandbox off and /sandbox on. Served MCP
// sessions are not lifted. Only the person reaches it (tai.sandbox.session
// from their own Lua); no tool the model can call does.
func (e *Engine) LiftShellSandbox(lifted bool) {
	e.shellLifted.Store(lifted)
}

// ShellSandboxLifted reports whether LiftShellSandbox(true) is in force.
func (e *Engine) ShellSandboxLifted() bool {
	return e.shellLifted.Load()
}

// shellLift says why the model's shell command with args in ctx runs
// outside the sandbox although the profile keeps it on, or "" when it
// does not. Only in this process's own sessions (served ones never read
// rules nor the lift): the person lifted it for this session
// (LiftShellSandbox), or a permission rule kept for the engine's folder
// with Unsandboxed covers the command (tool.PermissionAllows: its first
// words, a plain command, run in that folder or below).
func (e *Engine) shellLift(ctx context.Context, args map[string]any) string {
	if tool.CallerFrom(ctx).PersonsOwn() {
		return ""
	}
	if s, ok := SessionFrom(ctx); ok && s.Name() != "" {
		return ""
	}
	if e.shellLifted.Load() {
		return "the person lifted it for this session with /sandbox off"
	}
	dir, err := filepath.Abs(e.dir)
	if err != nil {
		return ""
	}
	list, err := e.store.PermissionList(dir)
	if err != nil {
		return ""
	}
	var lifting []vault.Permission
	for _, r := range list {
		if r.Unsandboxed {
			lifting = append(lifting, r)
		}
	}
	if r, ok := tool.PermissionAllows(lifting, dir, tool.Consent{Tool: "shell", Args: args}); ok && !namesProgram(args) && !otherRepository(args, dir) {
		return "rule for '" + r.Prefix + "' in this folder"
	}
	return ""
}

// otherRepository reports a git command run in a folder below dir that
// belongs to a repository other than dir's (one the model may have made
// there, with a config and hooks of its own making, which no Guard
// keeps): a rule kept for dir does not lift it.
func otherRepository(args map[string]any, dir string) bool {
	if !isGit(args) {
		return false
	}
	cwd, _ := args["cwd"].(string)
	switch {
	case cwd == "":
		cwd = dir
	case !filepath.IsAbs(cwd):
		cwd = filepath.Join(dir, cwd)
	}
	return sandbox.GitEntry(cwd) != sandbox.GitEntry(dir)
}

// isGit reports a shell call that runs git.
func isGit(args map[string]any) bool {
	words := callWords(args)
	return len(words) > 0 && filepath.Base(words[0]) == "git"
}

// callWords are the words of a shell call's command or argv.
func callWords(args map[string]any) []string {
	if command, ok := args["command"].(string); ok {
		words, _ := tool.CommandWords(command)
		return words
	}
	return tool.ReadArgs(args).Strings("argv")
}

// namesProgram reports a git command line whose options name a program
// for git to run (git push --receive-pack=PROGRAM, --exec, fetch's
// --upload-pack or -u, a -c setting): a rule for its first words trusts
// its arguments, and these would run what the model wrote there with all
// of the person's rights, so it stays in the sandbox.
func namesProgram(args map[string]any) bool {
	words := callWords(args)
	if len(words) < 2 || filepath.Base(words[0]) != "git" {
		return false
	}
	fetching := slices.Contains([]string{"fetch", "pull", "clone", "ls-remote", "archive"}, words[1])
	for _, w := range words[1:] {
		for _, opt := range []string{"--receive-pack", "--exec", "--upload-pack", "--config", "--template"} {
			if w == opt || strings.HasPrefix(w, opt+"=") {
				return true
			}
		}
		if w == "-c" || fetching && strings.HasPrefix(w, "-u") {
			return true
		}
	}
	return false
}
