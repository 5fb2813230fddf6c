package lua_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
	"tai/engine/llm"
	"tai/lua"
	"tai/mcp"
	"tai/mcp/config"
	"tai/stdlib"
)

// metaFile is where the LuaLS definitions of the tai module live in the
// embedded stdlib.
const metaFile = "meta/tai.lua"

// TestMetaNamesEveryFunction walks the tai table of a host built as tai
// builds one (every function, value and sub-table, recursively) and the
// methods of every object type it registers (the type metatables named
// "tai.…", such as tai.mcp.client), and compares them with the names
// meta/tai.lua declares: each one the runtime has must be declared, and
// each one declared must exist.
func TestMetaNamesEveryFunction(t *testing.T) {
	src, err := fs.ReadFile(stdlib.Meta(), metaFile)
	if err != nil {
		t.Fatal(err)
	}
	declared, err := metaNames(src)
	if err != nil {
		t.Fatal(err)
	}
	h, err := lua.New(&lua.Options{ConfigDir: t.TempDir(), StateDir: t.TempDir(), Clean: true, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	live := liveNames(h.L, h.Module())
	if len(live) < 100 {
		t.Fatalf("only %d names found in the live tai table: the walk is broken", len(live))
	}
	var missing, extra []string
	for name := range live {
		if !declared[name] {
			missing = append(missing, name)
		}
	}
	for name := range declared {
		if !live[name] && !resolves(h.L, name) {
			extra = append(extra, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, n := range missing {
		t.Errorf("%s: registered by the Go side, not declared in stdlib/%s", n, metaFile)
	}
	for _, n := range extra {
		t.Errorf("%s: declared in stdlib/%s, but tai has no such name", n, metaFile)
	}
}

// liveNames returns the dotted name of everything under tai ("tai.mcp",
// "tai.mcp.connect", "tai.version") and "type:method" for the methods of
// each object type tai registers.
func liveNames(L *glua.LState, tai *glua.LTable) map[string]bool {
	names := map[string]bool{}
	seen := map[*glua.LTable]bool{}
	var walk func(prefix string, t *glua.LTable)
	walk = func(prefix string, t *glua.LTable) {
		if seen[t] {
			return
		}
		seen[t] = true
		t.ForEach(func(k, v glua.LValue) {
			key, ok := k.(glua.LString)
			if !ok {
				return
			}
			name := prefix + "." + string(key)
			names[name] = true
			if sub, ok := v.(*glua.LTable); ok {
				walk(name, sub)
			}
		})
	}
	walk("tai", tai)
	reg, _ := L.Get(glua.RegistryIndex).(*glua.LTable)
	reg.ForEach(func(k, v glua.LValue) {
		typ, ok := k.(glua.LString)
		mt, isTable := v.(*glua.LTable)
		if !ok || !isTable || !strings.HasPrefix(string(typ), "tai.") {
			return
		}
		methods, ok := mt.RawGetString("__index").(*glua.LTable)
		if !ok {
			return // a marker (tai.json.object), not an object type
		}
		methods.ForEach(func(m, _ glua.LValue) {
			if s, ok := m.(glua.LString); ok {
				names[string(typ)+":"+string(s)] = true
			}
		})
	})
	return names
}

// resolves reports whether a dotted name declared but not found by the
// walk is there when indexed as Lua code would (through __index, as
// tai.profile is).
func resolves(L *glua.LState, name string) bool {
	if strings.Contains(name, ":") {
		return false
	}
	parts := strings.Split(name, ".")
	if parts[0] != "tai" {
		return false
	}
	v := L.GetGlobal("tai")
	for _, p := range parts[1:] {
		if v.Type() != glua.LTTable {
			return false
		}
		v = L.GetField(v, p)
	}
	return v != glua.LNil
}

var (
	metaClass    = regexp.MustCompile(`^---@class\s+([\w.]+)`)
	metaLocal    = regexp.MustCompile(`^local\s+(\w+)\s*=\s*\{\}`)
	metaFunction = regexp.MustCompile(`^function\s+(tai(?:\.\w+)+)\s*\(`)
	metaMethod   = regexp.MustCompile(`^function\s+(\w+):(\w+)\s*\(`)
	metaField    = regexp.MustCompile(`^(tai(?:\.\w+)+)\s*=`)
)

// metaNames returns the names a LuaLS definitions file declares, in the
// walk's terms: "tai.x.y" for `function tai.x.y(` and `tai.x.y = …`,
// "class:method" for `function v:method(` where v is the local table a
// `---@class class` annotation names.
func metaNames(src []byte) (map[string]bool, error) {
	names := map[string]bool{}
	locals := map[string]string{} // local variable -> its class
	class := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if m := metaClass.FindStringSubmatch(line); m != nil {
			class = m[1]
			continue
		}
		if strings.HasPrefix(line, "---") {
			continue
		}
		if m := metaLocal.FindStringSubmatch(line); m != nil && class != "" {
			locals[m[1]] = class
		}
		class = ""
		if m := metaFunction.FindStringSubmatch(line); m != nil {
			names[m[1]] = true
		} else if m := metaMethod.FindStringSubmatch(line); m != nil {
			if c, ok := locals[m[1]]; ok {
				names[c+":"+m[2]] = true
			} else {
				names[m[1]+":"+m[2]] = true // reported as extra: no class
			}
		} else if m := metaField.FindStringSubmatch(line); m != nil {
			names[m[1]] = true
		}
	}
	return names, sc.Err()
}

// TestMetaIsNeverLoaded: the definitions are not a module (require cannot
// find them), and run by mistake they stop at once with a message saying
// what they are, before assigning the global tai.
func TestMetaIsNeverLoaded(t *testing.T) {
	h, err := lua.New(&lua.Options{ConfigDir: t.TempDir(), StateDir: t.TempDir(), Clean: true, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, mod := range []string{"meta.tai", "builtin.meta.tai"} {
		if _, err := h.DoString(t.Context(), `return require("`+mod+`")`, "test"); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("require(%q): %v, want module not found", mod, err)
		}
	}
	src, err := fs.ReadFile(stdlib.Meta(), metaFile)
	if err != nil {
		t.Fatal(err)
	}
	before := h.Module()
	_, err = h.DoString(t.Context(), string(src), metaFile)
	if err == nil || !strings.Contains(err.Error(), "only describes the tai module") {
		t.Fatalf("running %s: %v, want its guard error", metaFile, err)
	}
	if h.L.GetGlobal("tai") != before {
		t.Fatal("running the definitions replaced the global tai")
	}
}

// TestMetaShapesMatchTheGoTypes checks the classes of meta/tai.lua that
// describe tables converted from Go values through their JSON form: each
// declares exactly the JSON fields of its Go type.
func TestMetaShapesMatchTheGoTypes(t *testing.T) {
	src, err := fs.ReadFile(stdlib.Meta(), metaFile)
	if err != nil {
		t.Fatal(err)
	}
	fields := metaClassFields(src)
	for class, v := range map[string]any{
		"tai.Entry":             mcp.Entry{},
		"tai.EntryOAuth":        mcp.OAuth{},
		"tai.Note":              config.Note{},
		"tai.mcp.ServerInfo":    bridge.ServerInfo{},
		"tai.mcp.ServerOutcome": bridge.ServerOutcome{},
		"tai.mcp.ToolInfo":      bridge.ToolInfo{},
		"tai.mcp.AddReport":     bridge.AddReport{},
		"tai.mcp.ImportReport":  bridge.ImportReport{},
		"tai.mcp.ImportedFile":  bridge.ImportedFile{},
	} {
		want := jsonFields(reflect.TypeOf(v))
		got, ok := fields[class]
		if !ok {
			t.Errorf("stdlib/%s declares no class %s", metaFile, class)
			continue
		}
		for _, f := range want {
			if !slices.Contains(got, f) {
				t.Errorf("%s: field %s of %T is not declared", class, f, v)
			}
		}
		for _, f := range got {
			if !slices.Contains(want, f) {
				t.Errorf("%s: field %s is declared, but %T has no such field", class, f, v)
			}
		}
	}
}

// metaClassFields returns the ---@field names of each ---@class.
func metaClassFields(src []byte) map[string][]string {
	out := map[string][]string{}
	field := regexp.MustCompile(`^---@field\s+([\w]+)\??\s`)
	class := ""
	for _, line := range strings.Split(string(src), "\n") {
		if m := metaClass.FindStringSubmatch(line); m != nil {
			class = m[1]
			out[class] = []string{}
			continue
		}
		if !strings.HasPrefix(line, "---") {
			class = ""
			continue
		}
		if m := field.FindStringSubmatch(line); m != nil && class != "" {
			out[class] = append(out[class], m[1])
		}
	}
	return out
}

// jsonFields returns the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// TestMetaNamesResolve stands in for a type checker over the annotations
// themselves: every tai.… name an annotation line mentions (a parameter's,
// a field's or a result's type, or a function named in a description) is
// a class the file declares or a name of the module.
func TestMetaNamesResolve(t *testing.T) {
	src, err := fs.ReadFile(stdlib.Meta(), metaFile)
	if err != nil {
		t.Fatal(err)
	}
	names, err := metaNames(src)
	if err != nil {
		t.Fatal(err)
	}
	classes := metaClassFields(src)
	for _, m := range metaAlias.FindAllStringSubmatch(string(src), -1) {
		classes[m[1]] = nil
	}
	ref := regexp.MustCompile(`\btai(?:\.\w+)+`)
	for i, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "---@") || strings.HasPrefix(line, "---@class") || strings.HasPrefix(line, "---@alias") {
			continue
		}
		for _, r := range ref.FindAllString(line, -1) {
			if _, ok := classes[r]; !ok && !names[r] {
				t.Errorf("%s:%d: %s is neither a class nor a name of the module: %s", metaFile, i+1, r, line)
			}
		}
	}
}

// metaAlias matches an alias declaration: its name, then its type.
var metaAlias = regexp.MustCompile(`(?m)^---@alias\s+(\S+)\s+(.+)$`)

// TestMetaLogLevelsAreMCPs: the levels tai.mcp.LogLevel names are
// mcp.LogLevels, in order.
func TestMetaLogLevelsAreMCPs(t *testing.T) {
	src, err := fs.ReadFile(stdlib.Meta(), metaFile)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range mcp.LogLevels {
		want = append(want, fmt.Sprintf("%q", l))
	}
	for _, m := range metaAlias.FindAllStringSubmatch(string(src), -1) {
		if m[1] == "tai.mcp.LogLevel" {
			if got := strings.TrimSpace(m[2]); got != strings.Join(want, "|") {
				t.Fatalf("tai.mcp.LogLevel is %s, want %s", got, strings.Join(want, "|"))
			}
			return
		}
	}
	t.Fatal("meta/tai.lua declares no tai.mcp.LogLevel")
}

// TestMetaProvidersAreTheTable: the providers tai.Profile declares are
// the names of engine/llm's provider table, in its order, so a provider
// added there is declared here too.
func TestMetaProvidersAreTheTable(t *testing.T) {
	src, err := fs.ReadFile(stdlib.Meta(), metaFile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^---@field provider ((?:"\w+"\|?)+)\s`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("stdlib/%s: tai.Profile declares no provider enum", metaFile)
	}
	var got []string
	for _, q := range strings.Split(string(m[1]), "|") {
		got = append(got, strings.Trim(q, `"`))
	}
	if want := llm.ProviderNames(); !slices.Equal(got, want) {
		t.Errorf("stdlib/%s declares providers %v; engine/llm's table has %v", metaFile, got, want)
	}
}
