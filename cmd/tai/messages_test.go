package main

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

// placeholder is a <word> standing for something the reader must fill
// in, which a message never asks of them.
var placeholder = regexp.MustCompile(`<[a-z][a-z_ -]*>`)

// TestRefusalsHoldNoHashOrPlaceholder: no error or refusal tai writes
// (fmt.Errorf, errors.New, tool.ErrorResult in Go; warn and say in the
// Lua REPL) holds a <placeholder> or the hex digest of a call.
func TestRefusalsHoldNoHashOrPlaceholder(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{"cmd", "engine", "lua", "mcp", "vault"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch pkg, _ := sel.X.(*ast.Ident); {
				case pkg != nil && pkg.Name == "fmt" && sel.Sel.Name == "Errorf",
					pkg != nil && pkg.Name == "errors" && sel.Sel.Name == "New",
					pkg != nil && pkg.Name == "tool" && sel.Sel.Name == "ErrorResult":
				default:
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				text, _ := strconv.Unquote(lit.Value)
				checked++
				if m := placeholder.FindString(text); m != "" {
					t.Errorf("%s: a message holds the placeholder %s: %q", fset.Position(lit.Pos()), m, text)
				}
				for _, a := range call.Args[1:] {
					if id, ok := a.(*ast.Ident); ok && strings.EqualFold(id.Name, "digest") {
						t.Errorf("%s: a message shows the call's digest: %q", fset.Position(lit.Pos()), text)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 200 {
		t.Fatalf("only %d messages checked: the walk missed the sources", checked)
	}
	luaMsg := regexp.MustCompile(`\b(warn|say)\(\s*"([^"]*)"`)
	files, _ := filepath.Glob(filepath.Join(root, "stdlib", "*.lua"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range luaMsg.FindAllStringSubmatch(line, -1) {
				if p := placeholder.FindString(m[2]); p != "" {
					t.Errorf("%s:%d: a message holds the placeholder %s: %q", f, i+1, p, m[2])
				}
			}
		}
	}
}
