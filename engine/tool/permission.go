package tool

import (
	"fmt"
	"path/filepath"
	"strings"

	"tai/mcp/config"
	"tai/mcp/pathrule"
	"tai/mcp/screen"
	"tai/vault"
)

// shellMeta are the characters that make a command line more than a
// program and its plain arguments: operators, redirections, expansions,
// substitutions, globs, comments, escapes and line breaks. A command
// holding any of them is never covered by a prefix rule.
const shellMeta = ";&|<>()$`\\*?[]{}~!#\n\r"

// CommandWords returns the words of a shell command line when it is only
// a program and plain arguments (quotes allowed), and false when it holds
// any shell metacharacter or control character, or does not split.
func CommandWords(command string) ([]string, bool) {
	for _, r := range command {
		if r < 0x20 && r != '\t' || r == 0x7f || strings.ContainsRune(shellMeta, r) {
			return nil, false
		}
	}
	words, err := config.SplitWords(command)
	if err != nil || len(words) == 0 {
		return nil, false
	}
	return words, true
}

// CheckPrefix says why prefix cannot be kept as a shell rule: it is not a
// plain command prefix, holds a word with a blank, or is only a program
// that runs what its arguments say (a rule for "bash" or "env" alone
// would cover every command).
func CheckPrefix(prefix string) error {
	words, ok := CommandWords(prefix)
	if !ok {
		return fmt.Errorf("the prefix %s is not a plain command: give the command's first words, with no shell operator, redirection, variable or glob", screen.VisibleLine(prefix))
	}
	for _, w := range words {
		if strings.ContainsAny(w, " \t") {
			return fmt.Errorf("the prefix %s has a quoted word with a blank in it, which a rule cannot keep: give the words before it", screen.VisibleLine(prefix))
		}
	}
	if len(words) == 1 && runsOthers(words[0]) {
		return fmt.Errorf("a rule for %s alone would cover any command it is given; give more words (%s build.sh), or keep a rule for the whole shell tool (tai.permissions.add{tool = \"shell\"})", screen.VisibleLine(words[0]), screen.VisibleLine(words[0]))
	}
	return nil
}

func hasWords(words, want []string) bool {
	if len(words) < len(want) {
		return false
	}
	for i, w := range want {
		if words[i] != w {
			return false
		}
	}
	return true
}

// PermissionAllows returns the rule among rules (kept for the folder dir)
// that lets the call c run without a question, if one does. A rule
// without a prefix covers every call of its tool whose path and cwd
// arguments (if any) lie in dir, every call for a bridged tool; one with a prefix covers
// the shell tool's calls whose command (or argv) starts with the prefix's
// words and holds nothing else a shell would act on, run in dir or a
// folder inside it.
func PermissionAllows(rules []vault.Permission, dir string, c Consent) (vault.Permission, bool) {
	key := c.Tool
	if c.Origin != "" {
		key = c.Origin
	}
	for _, r := range rules {
		if r.Dir != dir || r.Tool != key {
			continue
		}
		if r.Prefix == "" && (c.Origin != "" || pathsInside(c.Args, dir)) {
			return r, true
		}
		if c.Origin == "" && c.Tool == "shell" && shellCallHasPrefix(c.Args, dir, r.Prefix) {
			return r, true
		}
	}
	return vault.Permission{}, false
}

// Rules reports whether a kept permission rule lets the call c run without
// a question. Interactive approval consults it before it asks.
type Rules func(c Consent) bool

// KeptRules returns the Rules of the permissions store keeps for the
// folder dir (see PermissionAllows), read at each question so a rule kept
// or removed by another session counts at once. When they cannot be read
// no rule covers the call, so the person is asked.
func KeptRules(store *vault.Store, dir string) Rules {
	return func(c Consent) bool {
		list, err := store.PermissionList(dir)
		if err != nil {
			return false
		}
		_, ok := PermissionAllows(list, dir, c)
		return ok
	}
}

// argv reads the shell tool's argv argument as the tool does (a list of
// strings, as decoded from JSON or built in Go); false when it is absent
// or not such a list.
func argv(args map[string]any) ([]string, bool) {
	a := ReadArgs(args)
	words := a.Strings("argv")
	return words, words != nil && a.Err() == nil
}

// shellCallHasPrefix reports whether the shell tool's arguments run the
// command prefix in dir (or below it), with nothing but a timeout beside.
func shellCallHasPrefix(args map[string]any, dir, prefix string) bool {
	want, ok := CommandWords(prefix)
	if !ok {
		return false
	}
	for k, v := range args {
		switch k {
		case "command", "argv", "timeout":
		case "cwd":
			s, isStr := v.(string)
			if !isStr || !inside(s, dir) {
				return false
			}
		default:
			return false
		}
	}
	if command, isStr := args["command"].(string); isStr && args["argv"] == nil {
		words, ok := CommandWords(command)
		return ok && hasWords(words, want)
	}
	words, ok := argv(args)
	if !ok || args["command"] != nil {
		return false
	}
	return hasWords(words, want)
}

// pathsInside reports whether a native tool call's path and cwd
// arguments, when it has them, lie in dir: a rule kept for a folder
// covers what the tool does there, never a file elsewhere (~/.bashrc).
func pathsInside(args map[string]any, dir string) bool {
	for _, k := range []string{"path", "cwd"} {
		v, ok := args[k]
		if !ok {
			continue
		}
		s, isStr := v.(string)
		if !isStr || !inside(s, dir) {
			return false
		}
	}
	return true
}

// inside reports whether path (relative to dir when not absolute) is dir
// or below it, symbolic links resolved as far as the path exists (a link
// inside the folder that points out of it is not inside).
func inside(path, dir string) bool {
	if path == "" {
		return true
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return pathrule.Within(pathrule.Resolve(filepath.Clean(path)), pathrule.Resolve(filepath.Clean(dir)))
}

// SuggestPrefix proposes the prefix a rule covering the shell call c
// would keep: the program, and its subcommand when the second word is a
// plain word ("git status" for "git status --short", "ls" for "ls -la");
// for a program that runs what its arguments say (a shell, env, xargs,
// an interpreter: see runsOthers) the whole command.
// It returns false when c is not a shell call a prefix rule can cover.
func SuggestPrefix(c Consent) (string, bool) {
	if c.Origin != "" || c.Tool != "shell" {
		return "", false
	}
	var words []string
	if command, ok := c.Args["command"].(string); ok {
		if words, ok = CommandWords(command); !ok {
			return "", false
		}
	} else if _, given := c.Args["argv"]; given {
		if words, ok = argv(c.Args); !ok {
			return "", false
		}
	}
	if len(words) == 0 || !plainWord(words[0]) {
		return "", false
	}
	switch {
	case runsOthers(words[0]):
		// A prefix of a program that runs what its arguments say would
		// cover every command: only the whole command is proposed.
		for _, w := range words {
			if !plainWord(w) {
				return "", false
			}
		}
	case len(words) > 1 && plainWord(words[1]) && words[1][0] != '-':
		words = words[:2]
	default:
		words = words[:1]
	}
	prefix := strings.Join(words, " ")
	if _, ok := PermissionAllows([]vault.Permission{{Tool: "shell", Prefix: prefix}}, "", Consent{Tool: "shell", Args: onlyCommand(c.Args)}); !ok {
		return "", false
	}
	return prefix, true
}

// runsOthers reports whether program (a path's last element) runs a
// command or script its arguments give: shells, interpreters, and the
// programs that run another (env, sudo, xargs, find -exec, …).
func runsOthers(program string) bool {
	switch filepath.Base(program) {
	case "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox",
		"env", "sudo", "doas", "su", "xargs", "exec", "eval", "nohup", "timeout", "nice", "ionice",
		"time", "command", "builtin", "watch", "strace", "setsid", "chroot", "unshare", "nsenter", "script",
		"find", "parallel", "ssh", "docker", "podman", "kubectl", "npx", "bunx", "pnpx", "uvx",
		"python", "python3", "node", "deno", "bun", "perl", "ruby", "php", "lua", "awk", "gawk", "sed", "tclsh", "osascript":
		return true
	}
	return false
}

// plainWord reports whether w is a word a prefix can hold as it is:
// letters, digits and - _ . / : + = @ , % only.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:+=@,%", r)
		if !ok {
			return false
		}
	}
	return true
}

// onlyCommand is args without cwd, for checking a prefix against the
// command alone.
func onlyCommand(args map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"command", "argv"} {
		if v, ok := args[k]; ok {
			out[k] = v
		}
	}
	return out
}
