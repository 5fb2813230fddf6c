package mcp

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docConst is one package-level constant read from the package's source.
type docConst struct {
	name  string
	str   string // for string constants
	num   int64  // for numeric constants (nanoseconds for durations)
	isStr bool
	dur   bool
}

// packageConsts parses the package's non-test Go files and evaluates every
// constant whose value it can compute from literals, time units and other
// constants. The result is sorted by name.
func packageConsts(t *testing.T) []docConst {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var specs []*ast.ValueSpec
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, s := range gd.Specs {
					specs = append(specs, s.(*ast.ValueSpec))
				}
			}
		}
	}
	env := map[string]docConst{}
	// Constants may refer to ones declared later: evaluate until no
	// progress.
	for progress := true; progress; {
		progress = false
		for _, s := range specs {
			for i, n := range s.Names {
				if _, done := env[n.Name]; done || i >= len(s.Values) {
					continue
				}
				v, err := evalConst(s.Values[i], env)
				if err != nil {
					continue
				}
				v.name = n.Name
				env[n.Name] = v
				progress = true
			}
		}
	}
	out := make([]docConst, 0, len(env))
	for _, v := range env {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

var timeUnits = map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
	"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}

func evalConst(e ast.Expr, env map[string]docConst) (docConst, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.INT:
			n, err := strconv.ParseInt(e.Value, 0, 64)
			return docConst{num: n}, err
		case token.STRING:
			s, err := strconv.Unquote(e.Value)
			return docConst{str: s, isStr: true}, err
		}
	case *ast.ParenExpr:
		return evalConst(e.X, env)
	case *ast.Ident:
		if v, ok := env[e.Name]; ok {
			return v, nil
		}
	case *ast.SelectorExpr:
		if pkg, ok := e.X.(*ast.Ident); ok && pkg.Name == "time" {
			if u, ok := timeUnits[e.Sel.Name]; ok {
				return docConst{num: int64(u), dur: true}, nil
			}
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && len(e.Args) == 1 && sel.Sel.Name == "Duration" {
			v, err := evalConst(e.Args[0], env)
			v.dur = true
			return v, err
		}
	case *ast.BinaryExpr:
		a, err := evalConst(e.X, env)
		if err != nil {
			return a, err
		}
		b, err := evalConst(e.Y, env)
		if err != nil || a.isStr || b.isStr {
			return a, fmt.Errorf("not numeric")
		}
		v := docConst{dur: a.dur || b.dur}
		switch e.Op {
		case token.MUL:
			v.num = a.num * b.num
		case token.ADD:
			v.num = a.num + b.num
		case token.SUB:
			v.num = a.num - b.num
		case token.QUO:
			if b.num == 0 {
				return v, fmt.Errorf("division by zero")
			}
			v.num = a.num / b.num
		case token.SHL:
			v.num = a.num << b.num
		default:
			return v, fmt.Errorf("operator %s", e.Op)
		}
		return v, nil
	case *ast.UnaryExpr:
		if e.Op == token.SUB {
			v, err := evalConst(e.X, env)
			v.num = -v.num
			return v, err
		}
	}
	return docConst{}, fmt.Errorf("cannot evaluate %T", e)
}

// renderings lists the ways the doc may write a constant's value.
func (c docConst) renderings() []string {
	switch {
	case c.isStr:
		return []string{c.str}
	case c.dur:
		d := time.Duration(c.num)
		r := []string{d.String()}
		if d%time.Second == 0 {
			r = append(r, fmt.Sprintf("%ds", d/time.Second))
		}
		return r
	}
	r := []string{strconv.FormatInt(c.num, 10)}
	if c.num > 0 && c.num%(1<<20) == 0 {
		r = append(r, fmt.Sprintf("%dMB", c.num>>20), fmt.Sprintf("%d MiB", c.num>>20))
	}
	if c.num > 0 && c.num%(1<<10) == 0 {
		r = append(r, fmt.Sprintf("%dKB", c.num>>10), fmt.Sprintf("%d KiB", c.num>>10))
	}
	return r
}

// docDrift lists what the doc fails to say about the constants: every
// MCP_* constant needs a table row naming it and its value, every Method*
// constant its wire name in backquotes, every Code* constant a row naming
// it and its code.
func docDrift(doc string, consts []docConst) []string {
	var problems []string
	// A constant's row is the table row whose first cell is exactly its
	// backquoted name.
	rows := map[string]string{}
	firstCell := regexp.MustCompile("^\\|\\s*`([A-Za-z_][A-Za-z0-9_]*)`\\s*\\|")
	for _, line := range strings.Split(doc, "\n") {
		if m := firstCell.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if _, seen := rows[m[1]]; !seen {
				rows[m[1]] = line
			}
		}
	}
	hasValue := func(row string, c docConst) bool {
		for _, r := range c.renderings() {
			if regexp.MustCompile(`(^|[^0-9A-Za-z.-])` + regexp.QuoteMeta(r) + `([^0-9A-Za-z]|$)`).MatchString(row) {
				return true
			}
		}
		return false
	}
	for _, c := range consts {
		switch {
		case strings.HasPrefix(c.name, "MCP_"), strings.HasPrefix(c.name, "Code") && !c.isStr:
			row, ok := rows[c.name]
			if !ok {
				problems = append(problems, fmt.Sprintf("README.md has no table row naming `%s`", c.name))
			} else if !hasValue(row, c) {
				problems = append(problems, fmt.Sprintf("README.md's row for `%s` does not give its value (one of %q): %s", c.name, c.renderings(), row))
			}
		case strings.HasPrefix(c.name, "Method") && c.isStr:
			if !strings.Contains(doc, "`"+c.str+"`") {
				problems = append(problems, fmt.Sprintf("README.md does not name the wire method `%s` (%s)", c.str, c.name))
			}
		}
	}
	return problems
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatalf("the package's MCP document: %v", err)
	}
	return string(b)
}

func TestMCPDocNamesEveryCapMethodAndCode(t *testing.T) {
	consts := packageConsts(t)
	kinds := map[string]int{}
	for _, c := range consts {
		for _, p := range []string{"MCP_", "Method", "Code"} {
			if strings.HasPrefix(c.name, p) {
				kinds[p]++
			}
		}
	}
	for _, p := range []string{"MCP_", "Method", "Code"} {
		if kinds[p] == 0 {
			t.Fatalf("found no %s* constants in the package source: the parser is broken", p)
		}
	}
	for _, p := range docDrift(readDoc(t), consts) {
		t.Error(p)
	}
}

func TestMCPDocDriftIsCaught(t *testing.T) {
	doc := readDoc(t)
	consts := packageConsts(t)
	tests := []struct {
		name   string
		mutate func(string) string
		want   string
	}{
		{name: "cap row removed", want: "`MCP_CALL_TIMEOUT`", mutate: func(s string) string {
			return regexp.MustCompile("(?m)^\\| `MCP_CALL_TIMEOUT`.*\n").ReplaceAllString(s, "")
		}},
		{name: "cap value changed", want: "`MCP_CONNECT_TIMEOUT`", mutate: func(s string) string {
			return regexp.MustCompile("(?m)^(\\| `MCP_CONNECT_TIMEOUT` \\| )20s").ReplaceAllString(s, "${1}25s")
		}},
		{name: "size value changed", want: "`MCP_HTTP_MAX_BODY`", mutate: func(s string) string {
			return regexp.MustCompile("(?m)^(\\| `MCP_HTTP_MAX_BODY` \\| ).*?\\|").ReplaceAllString(s, "${1}12MB |")
		}},
		{name: "method gone", want: "`tools/list`", mutate: func(s string) string {
			return strings.ReplaceAll(s, "`tools/list`", "tools-list")
		}},
		{name: "code gone", want: "`CodeMethodNotFound`", mutate: func(s string) string {
			return strings.ReplaceAll(s, "`CodeMethodNotFound`", "method not found")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mutated := tc.mutate(doc)
			if mutated == doc {
				t.Fatal("the mutation changed nothing; README.md's layout moved")
			}
			problems := strings.Join(docDrift(mutated, consts), "\n")
			if !strings.Contains(problems, tc.want) {
				t.Errorf("drift not reported for %s; problems:\n%s", tc.want, problems)
			}
		})
	}
}

func TestEvalConst(t *testing.T) {
	tests := []struct {
		src  string
		want docConst
	}{
		{`20 * time.Second`, docConst{num: int64(20 * time.Second), dur: true}},
		{`10 * 1024 * 1024`, docConst{num: 10 << 20}},
		{`64 << 10`, docConst{num: 64 << 10}},
		{`-32601`, docConst{num: -32601}},
		{`"2025-11-25"`, docConst{str: "2025-11-25", isStr: true}},
		{`time.Duration(5) * time.Millisecond`, docConst{num: int64(5 * time.Millisecond), dur: true}},
		{`(3600 * time.Second)`, docConst{num: int64(time.Hour), dur: true}},
	}
	for _, tc := range tests {
		e, err := parser.ParseExpr(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := evalConst(e, nil)
		if err != nil || got != tc.want {
			t.Errorf("evalConst(%s) = %+v, %v; want %+v", tc.src, got, err, tc.want)
		}
	}
	if r := (docConst{num: int64(3600 * time.Second), dur: true}).renderings(); strings.Join(r, ",") != "1h0m0s,3600s" {
		t.Errorf("renderings of an hour: %q", r)
	}
}

// servedTools reads the list of tools a fresh tai serves, which a test in
// the lua package keeps current.
func servedTools(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("server", "testdata", "served-tools.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// servedDrift lists what the doc's Served tools section fails to say about
// tools: their count, the native count, and a row for each extra.
func servedDrift(doc string, tools []string) []string {
	var problems []string
	n := len(tools)
	if n < 2 || tools[n-2] != "chat" || tools[n-1] != "completions" {
		return []string{fmt.Sprintf("the served list does not end with chat and completions: %v", tools)}
	}
	if want := fmt.Sprintf("serves %d tools: %d native ones and the two extras", n, n-2); !strings.Contains(strings.Join(strings.Fields(doc), " "), want) {
		problems = append(problems, fmt.Sprintf("README.md does not say %q", want))
	}
	for _, extra := range tools[n-2:] {
		if !regexp.MustCompile("(?m)^\\| `" + extra + "` \\| .+\\|").MatchString(doc) {
			problems = append(problems, fmt.Sprintf("README.md has no Served tools row for `%s`", extra))
		}
	}
	return problems
}

func TestMCPDocServedTools(t *testing.T) {
	for _, p := range servedDrift(readDoc(t), servedTools(t)) {
		t.Error(p)
	}
}

func TestMCPDocServedDriftIsCaught(t *testing.T) {
	doc, tools := readDoc(t), servedTools(t)
	tests := []struct {
		name   string
		doc    func(string) string
		tools  func([]string) []string
		wanted string
	}{
		{"a tool added", func(s string) string { return s }, func(l []string) []string { return append([]string{"new_tool"}, l...) }, "serves"},
		{"count edited", func(s string) string {
			return strings.Replace(s, fmt.Sprintf("serves %d tools", len(tools)), fmt.Sprintf("serves %d tools", len(tools)+5), 1)
		}, nil, "serves"},
		{"chat row gone", func(s string) string { return regexp.MustCompile("(?m)^\\| `chat` \\|.*\n").ReplaceAllString(s, "") }, nil, "`chat`"},
		{"completions row gone", func(s string) string {
			return regexp.MustCompile("(?m)^\\| `completions` \\|.*\n").ReplaceAllString(s, "")
		}, nil, "`completions`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, l := tc.doc(doc), tools
			if tc.tools != nil {
				l = tc.tools(append([]string(nil), tools...))
			}
			if d == doc && tc.tools == nil {
				t.Fatal("the mutation changed nothing; README.md's layout moved")
			}
			problems := strings.Join(servedDrift(d, l), "\n")
			if !strings.Contains(problems, tc.wanted) {
				t.Errorf("drift not reported (want %q); problems:\n%s", tc.wanted, problems)
			}
		})
	}
}

// repoRoot is the repository's root, seen from this package's folder.
const repoRoot = ".."

// goFiles parses the non-test Go files of the folder dir.
func goFiles(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// vaultTables reads the vault package's tables from its source: every
// package-level variable named bucket… whose value is []byte("name").
func vaultTables(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range goFiles(t, filepath.Join(repoRoot, "vault")) {
		ast.Inspect(f, func(n ast.Node) bool {
			s, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range s.Names {
				if !strings.HasPrefix(name.Name, "bucket") || i >= len(s.Values) {
					continue
				}
				call, ok := s.Values[i].(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					continue
				}
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						out = append(out, v)
					}
				}
			}
			return true
		})
	}
	sort.Strings(out)
	return out
}

// tablesDrift names each vault table the doc does not name in backquotes.
func tablesDrift(doc string, tables []string) []string {
	var problems []string
	for _, name := range tables {
		if !strings.Contains(doc, "`"+name+"`") {
			problems = append(problems, fmt.Sprintf("mcp/README.md does not name the vault table `%s` (a bucket the vault package declares)", name))
		}
	}
	return problems
}

func TestMCPDocNamesEveryVaultTable(t *testing.T) {
	tables := vaultTables(t)
	for _, want := range []string{"mcp_servers", "mcp_server_profiles", "mcp_tool_pins", "mcp_server_tools", "secrets"} {
		if !slices.Contains(tables, want) {
			t.Fatalf("found the vault tables %v, without %s: the parser is broken", tables, want)
		}
	}
	for _, p := range tablesDrift(readDoc(t), tables) {
		t.Error(p)
	}
	doc := strings.ReplaceAll(readDoc(t), "`mcp_tool_pins`", "the pins table")
	if got := strings.Join(tablesDrift(doc, tables), "\n"); !strings.Contains(got, "`mcp_tool_pins`") {
		t.Errorf("a vault table taken out of the doc is not reported: %q", got)
	}
}

// mapRow is one row of the code map: a package folder, the types it names
// and the files.
type mapRow struct {
	pkg          string
	types, files []string
}

// codeMap reads the rows of the doc's "## Code map" table.
func codeMap(doc string) ([]mapRow, error) {
	_, sec, ok := strings.Cut(doc, "\n## Code map\n")
	if !ok {
		return nil, fmt.Errorf(`README.md has no "## Code map" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	quoted := regexp.MustCompile("`([^`]+)`")
	names := func(cell string) []string {
		var out []string
		for _, m := range quoted.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	var rows []mapRow
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 4 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue
		}
		pkg := names(cells[0])
		if len(pkg) != 1 {
			return nil, fmt.Errorf("a code map row names no single package: %s", line)
		}
		rows = append(rows, mapRow{pkg: pkg[0], types: names(cells[2]), files: names(cells[3])})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("README.md's code map has no rows")
	}
	return rows, nil
}

// declaredTypes lists the types the non-test Go files of dir declare.
func declaredTypes(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range goFiles(t, dir) {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					out[s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
	}
	return out
}

// codeMapDrift checks each row against the tree at root: the package has
// Go files, declares each type, each file exists; and every package under
// mcp/ has a row.
func codeMapDrift(t *testing.T, root string, rows []mapRow) []string {
	t.Helper()
	var problems []string
	mapped := map[string]bool{}
	for _, r := range rows {
		mapped[r.pkg] = true
		types := declaredTypes(t, filepath.Join(root, r.pkg))
		if len(types) == 0 && len(goFiles(t, filepath.Join(root, r.pkg))) == 0 {
			problems = append(problems, fmt.Sprintf("mcp/README.md's code map names the package `%s`, which has no Go files (moved? update the map)", r.pkg))
			continue
		}
		for _, ty := range r.types {
			if !types[ty] {
				problems = append(problems, fmt.Sprintf("mcp/README.md's code map names the type `%s` in `%s`, which no Go file of %s declares (moved? update the map)", ty, r.pkg, r.pkg))
			}
		}
		for _, f := range r.files {
			if _, err := os.Stat(filepath.Join(root, f)); err != nil {
				problems = append(problems, fmt.Sprintf("mcp/README.md's code map names the file `%s` (row `%s`), which does not exist (moved? update the map)", f, r.pkg))
			}
		}
	}
	filepath.WalkDir(filepath.Join(root, "mcp"), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if !mapped[filepath.ToSlash(rel)] && len(goFiles(t, p)) > 0 {
			problems = append(problems, fmt.Sprintf("the package `%s` has no row in mcp/README.md's code map (add one: package, what it holds, types, files)", filepath.ToSlash(rel)))
		}
		return nil
	})
	return problems
}

func TestMCPDocCodeMap(t *testing.T) {
	rows, err := codeMap(readDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range codeMapDrift(t, repoRoot, rows) {
		t.Error(p)
	}
}

// TestMCPDocCodeMapDriftIsCaught: a type or file that moved, a package
// gone and a package without a row are each reported by name.
func TestMCPDocCodeMapDriftIsCaught(t *testing.T) {
	rows, err := codeMap(readDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(rows []mapRow) []mapRow) []mapRow {
		c := make([]mapRow, len(rows))
		for i, r := range rows {
			c[i] = mapRow{pkg: r.pkg, types: slices.Clone(r.types), files: slices.Clone(r.files)}
		}
		return f(c)
	}
	tests := []struct {
		name string
		rows []mapRow
		want string
	}{
		{"a type that moved", edit(func(r []mapRow) []mapRow { r[0].types = append(r[0].types, "Moved"); return r }), "the type `Moved` in `" + rows[0].pkg + "`"},
		{"a file that moved", edit(func(r []mapRow) []mapRow { r[0].files = append(r[0].files, "mcp/moved.go"); return r }), "the file `mcp/moved.go`"},
		{"a package gone", edit(func(r []mapRow) []mapRow { return append(r, mapRow{pkg: "engine/gone"}) }), "the package `engine/gone`, which has no Go files"},
		{"a package without a row", edit(func(r []mapRow) []mapRow {
			return slices.DeleteFunc(r, func(m mapRow) bool { return m.pkg == "mcp/config" })
		}), "the package `mcp/config` has no row"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(codeMapDrift(t, repoRoot, tc.rows), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("want a problem naming %q, got:\n%s", tc.want, got)
			}
		})
	}
}

// declaredNames lists every top-level name the non-test Go files of dir
// declare (types, functions, constants, variables) and every method name.
func declaredNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range goFiles(t, dir) {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				out[d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// qualifiedDrift checks each `pkg.Name` the doc writes in backquotes,
// where pkg is the last element of a package in the code map: that
// package must declare Name (or a method of that name).
func qualifiedDrift(t *testing.T, root, doc string, rows []mapRow) []string {
	t.Helper()
	dirs := map[string]string{}
	for _, r := range rows {
		dirs[filepath.Base(r.pkg)] = r.pkg
	}
	names := map[string]map[string]bool{}
	seen := map[string]bool{}
	var problems []string
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)").FindAllStringSubmatch(doc, -1) {
		pkg, ok := dirs[m[1]]
		if !ok || seen[m[1]+"."+m[2]] {
			continue
		}
		seen[m[1]+"."+m[2]] = true
		if names[pkg] == nil {
			names[pkg] = declaredNames(t, filepath.Join(root, pkg))
		}
		if !names[pkg][m[2]] {
			problems = append(problems, fmt.Sprintf("mcp/README.md names `%s.%s`, which %s does not declare (moved? name it where it lives now)", m[1], m[2], pkg))
		}
	}
	return problems
}

func TestMCPDocQualifiedNamesExist(t *testing.T) {
	doc := readDoc(t)
	rows, err := codeMap(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range qualifiedDrift(t, repoRoot, doc, rows) {
		t.Error(p)
	}
	moved := strings.Replace(doc, "`tool.MaxMatchedSchemas`", "`engine.MaxMatchedSchemas`", 1)
	if got := strings.Join(qualifiedDrift(t, repoRoot, moved, rows), "\n"); !strings.Contains(got, "`engine.MaxMatchedSchemas`") {
		t.Errorf("a name that moved to another package is not reported: %q", got)
	}
}
