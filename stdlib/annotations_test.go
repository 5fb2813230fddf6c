package stdlib_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// luaFunc is one function a stdlib module exports (M.name or M:name).
type luaFunc struct {
	name    string // as written: M.render, M:entry, M.hooks.on_answer
	line    int
	params  []string // without a method's self; "..." for varargs
	returns bool     // some return of its own gives a value
}

// moduleFuncs lists the functions assigned into the module table M at the
// top level of a chunk.
func moduleFuncs(src []byte, name string) ([]luaFunc, error) {
	chunk, err := parse.Parse(strings.NewReader(string(src)), name)
	if err != nil {
		return nil, err
	}
	var out []luaFunc
	add := func(name string, line int, f *ast.FunctionExpr) {
		lf := luaFunc{name: name, line: line, params: slices.Clone(f.ParList.Names), returns: returnsValue(f.Stmts)}
		if f.ParList.HasVargs {
			lf.params = append(lf.params, "...")
		}
		out = append(out, lf)
	}
	for _, st := range chunk {
		switch s := st.(type) {
		case *ast.FuncDefStmt:
			if s.Name.Receiver != nil {
				if n := dotted(s.Name.Receiver); strings.HasPrefix(n, "M") {
					add(n+":"+s.Name.Method, s.Line(), s.Func)
				}
			} else if n := dotted(s.Name.Func); strings.HasPrefix(n, "M.") {
				add(n, s.Line(), s.Func)
			}
		case *ast.AssignStmt:
			for i, l := range s.Lhs {
				if i >= len(s.Rhs) {
					break
				}
				if f, ok := s.Rhs[i].(*ast.FunctionExpr); ok && strings.HasPrefix(dotted(l), "M.") {
					add(dotted(l), s.Line(), f)
				}
			}
		}
	}
	return out, nil
}

// dotted is the name an expression like M.a.b spells, "" for any other.
func dotted(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.IdentExpr:
		return x.Value
	case *ast.AttrGetExpr:
		k, ok := x.Key.(*ast.StringExpr)
		if o := dotted(x.Object); ok && o != "" {
			return o + "." + k.Value
		}
	}
	return ""
}

// returnsValue reports whether a return among stmts (not in a function
// they define) gives a value.
func returnsValue(stmts []ast.Stmt) bool {
	for _, st := range stmts {
		var inner [][]ast.Stmt
		switch s := st.(type) {
		case *ast.ReturnStmt:
			if len(s.Exprs) > 0 {
				return true
			}
		case *ast.DoBlockStmt:
			inner = [][]ast.Stmt{s.Stmts}
		case *ast.WhileStmt:
			inner = [][]ast.Stmt{s.Stmts}
		case *ast.RepeatStmt:
			inner = [][]ast.Stmt{s.Stmts}
		case *ast.IfStmt:
			inner = [][]ast.Stmt{s.Then, s.Else}
		case *ast.NumberForStmt:
			inner = [][]ast.Stmt{s.Stmts}
		case *ast.GenericForStmt:
			inner = [][]ast.Stmt{s.Stmts}
		}
		for _, b := range inner {
			if returnsValue(b) {
				return true
			}
		}
	}
	return false
}

var (
	paramLine  = regexp.MustCompile(`^---@param\s+(\S+?)\??\s+\S`)
	returnLine = regexp.MustCompile(`^---@return\s+\S`)
)

// annotationProblems checks the LuaLS comment block right above each
// function: a ---@param with a type for every parameter, in order, and
// none for another; a ---@return when the function returns a value, and
// none when it never does.
func annotationProblems(file string, src []byte) ([]string, error) {
	funcs, err := moduleFuncs(src, file)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	var out []string
	for _, f := range funcs {
		var params []string
		ret := false
		for i := f.line - 2; i >= 0 && strings.HasPrefix(strings.TrimSpace(lines[i]), "--"); i-- {
			l := strings.TrimSpace(lines[i])
			if m := paramLine.FindStringSubmatch(l); m != nil {
				params = append([]string{m[1]}, params...)
			}
			ret = ret || returnLine.MatchString(l)
		}
		where := fmt.Sprintf("%s:%d: %s", file, f.line, f.name)
		if !slices.Equal(params, f.params) {
			out = append(out, fmt.Sprintf("%s(%s) has ---@param for (%s): give one with a type for each parameter, in order", where, strings.Join(f.params, ", "), strings.Join(params, ", ")))
		}
		switch {
		case f.returns && !ret:
			out = append(out, where+" returns a value but has no ---@return")
		case !f.returns && ret:
			out = append(out, where+" never returns a value but has a ---@return")
		}
	}
	return out, nil
}

// TestModuleFunctionsAnnotated: every function a stdlib module exports
// carries LuaLS annotations for its parameters and what it returns, as
// meta/tai.lua does for the Go-registered API.
func TestModuleFunctionsAnnotated(t *testing.T) {
	files, err := filepath.Glob("*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no stdlib Lua files found (%v)", err)
	}
	total := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		funcs, err := moduleFuncs(src, file)
		if err != nil {
			t.Fatal(err)
		}
		total += len(funcs)
		probs, err := annotationProblems(file, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Error(p)
		}
	}
	if total < 100 {
		t.Fatalf("only %d module functions found: the walk is broken", total)
	}
}

// TestAnnotationCheckCatches: the check finds a missing parameter, a
// parameter of another name, a missing return and a return of a function
// that gives none.
func TestAnnotationCheckCatches(t *testing.T) {
	src := `local M = {}
---@param a string
---@return string
function M.good(a) if a then return a end end
---@param a string
function M.noreturn(a, b) return a end
---@param x string
function M:method(a) end
---@return string
M.none = function() end
return M
`
	probs, err := annotationProblems("t.lua", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"t.lua:6: M.noreturn(a, b) has ---@param for (a): give one with a type for each parameter, in order",
		"t.lua:6: M.noreturn returns a value but has no ---@return",
		"t.lua:8: M:method(a) has ---@param for (x): give one with a type for each parameter, in order",
		"t.lua:10: M.none never returns a value but has a ---@return",
	}
	if !slices.Equal(probs, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(probs, "\n"), strings.Join(want, "\n"))
	}
}
