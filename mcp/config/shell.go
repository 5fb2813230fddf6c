package config

import (
	"path/filepath"
	"slices"
	"strings"

	"tai/mcp"
)

// isShell reports a command that runs a script given with -c.
func isShell(command string) bool {
	switch filepath.Base(command) {
	case "sh", "bash", "zsh", "dash", "ash", "ksh", "mksh", "fish":
		return true
	}
	return false
}

// ShellRef is one variable of an entry's env that the shell script the
// entry runs reads, and one ${…} name its value is built from.
type ShellRef struct {
	Var  string // the env variable the script reads ($T)
	Name string // a ${…} name in its value (gh of "${gh}")
}

// ThroughShell returns, for an entry whose command is a shell running a
// script given with -c (sh, bash, zsh, dash, ash, ksh, mksh, fish, also
// behind env or /usr/bin/env), each variable of the entry's env that a
// word after the command reads ($T, ${T}, "$T"), with each ${…} name its
// value is built from: the script can put those values on the command
// line of a program it starts, where the process list shows them. Any
// other command gives nil, since what it does with its environment is
// its own. Sorted, each pair once.
func ThroughShell(e mcp.Entry) []ShellRef {
	words := append([]string{e.Command}, e.Args...)
	words = afterEnv(words)
	if len(words) < 2 || !isShell(words[0]) || !hasC(words[1:]) {
		return nil
	}
	var out []ShellRef
	for _, w := range words[1:] {
		for _, v := range shellVars(w) {
			value, ok := e.Env[v]
			if !ok {
				continue
			}
			commandLineRefs(value, nil, func(name string) { out = append(out, ShellRef{Var: v, Name: name}) }, 1)
		}
	}
	slices.SortFunc(out, func(a, b ShellRef) int {
		return strings.Compare(a.Var+"\x00"+a.Name, b.Var+"\x00"+b.Name)
	})
	return slices.Compact(out)
}

// afterEnv returns words without a leading env command, its options and
// its NAME=value assignments: the command env runs and its arguments.
func afterEnv(words []string) []string {
	for len(words) > 0 && filepath.Base(words[0]) == "env" {
		words = words[1:]
	options:
		for len(words) > 0 {
			w := words[0]
			switch {
			case w == "--":
				words = words[1:]
				break options
			case w == "-u" || w == "-C" || w == "--unset" || w == "--chdir":
				words = words[min(2, len(words)):]
			case strings.HasPrefix(w, "-") || strings.Contains(w, "="):
				words = words[1:]
			default:
				break options
			}
		}
	}
	return words
}

// hasC reports whether the shell's options include -c (alone or among
// others: -ec, -lc).
func hasC(args []string) bool {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'c') {
			return true
		}
	}
	return false
}

// shellVars returns the names of the variables s reads as a shell script
// would: $NAME and ${NAME…}.
func shellVars(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '{' {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || k > j && s[k] >= '0' && s[k] <= '9') {
			k++
		}
		if k > j {
			out = append(out, s[j:k])
		}
	}
	return out
}
