package mcp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNoREPLCommandInProtocolPackages: no string literal in mcp/ or vault/
// (tests aside) names a command of tai's REPL ("/mcp login", "/compact"):
// those packages return typed errors and facts, and the front end words
// what to type next. The commands are read from the REPL's own source.
func TestNoREPLCommandInProtocolPackages(t *testing.T) {
	named := replCommands(t)
	checked := 0
	for _, root := range []string{".", "../vault"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					s = lit.Value
				}
				if m := named.FindString(s); m != "" {
					t.Errorf("%s: %q names the REPL command %q; return a typed error or a fact, and word the hint in Lua", path, s, strings.TrimSpace(m))
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d files read", checked)
	}
	for _, s := range []string{"run /mcp login notes", "compact it (/compact)", "start a new one (/new)", "/mcp add {\"x\": 1}"} {
		if named.FindString(s) == "" {
			t.Errorf("%q is not seen to name a command", s)
		}
	}
	for _, s := range []string{"POST /mcp", "http://127.0.0.1/mcp", "ending in /mcp instead of /sse", "/.well-known/oauth-protected-resource/mcp", "claude mcp add"} {
		if m := named.FindString(s); m != "" {
			t.Errorf("%q is seen to name a command (%q)", s, m)
		}
	}
}

// replCommands matches a REPL command in text: a builtin of repl.lua, or
// /mcp with one of its subcommands (mcpcommand.lua), standing as a word.
func replCommands(t *testing.T) *regexp.Regexp {
	t.Helper()
	repl, err := os.ReadFile("../stdlib/repl.lua")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^builtin\.(\w+) = \{`).FindAllStringSubmatch(string(repl), -1) {
		names = append(names, m[1])
	}
	mcpLua, err := os.ReadFile("../stdlib/mcpcommand.lua")
	if err != nil {
		t.Fatal(err)
	}
	subs := regexp.MustCompile(`M\.subcommands = \{([^}]*)\}`).FindStringSubmatch(string(mcpLua))
	if len(names) < 15 || subs == nil {
		t.Fatalf("the REPL's commands were not found (%d builtins)", len(names))
	}
	var sub []string
	for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(subs[1], -1) {
		sub = append(sub, q[1])
	}
	return regexp.MustCompile(`(^|[\s("'])/(` + strings.Join(names, "|") + `|mcp (` + strings.Join(sub, "|") + `))\b`)
}
