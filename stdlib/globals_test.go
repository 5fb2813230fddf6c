package stdlib_test

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"tai/stdlib"
)

// TestModulesLeaveNoGlobals loads each embedded module in a fresh state and
// fails when loading it left a new global behind: a module hands out what
// it exports as the table require returns, and keeps the rest local.
// main.lua is the program itself, run rather than required.
func TestModulesLeaveNoGlobals(t *testing.T) {
	entries, err := fs.ReadDir(stdlib.Files(), ".")
	if err != nil {
		t.Fatal(err)
	}
	modules := 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".lua")
		if !ok || name == "main" {
			continue
		}
		modules++
		t.Run(name, func(t *testing.T) {
			got := run(t, `
local before = {}
for k in pairs(_G) do before[k] = true end
local m = require("builtin.`+name+`")
local added = {}
for k in pairs(_G) do
  if not before[k] then added[#added + 1] = tostring(k) end
end
table.sort(added)
return type(m), table.concat(added, " ")`)
			if got[0] != "table" {
				t.Errorf("require(%q) returned a %v, not the module's table", name, got[0])
			}
			if got[1] != "" {
				t.Errorf("loading %s.lua left globals behind: %v", name, got[1])
			}
		})
	}
	if modules < 5 {
		t.Fatalf("only %d embedded modules found", modules)
	}
}

// TestStdlibAssignsNoGlobals compiles every embedded file, main.lua too,
// and fails on any assignment to a global anywhere in it, in a function
// body as much as at load time: a name meant to be local but declared
// after its first assignment, or never declared, becomes a global the
// first time the code runs.
func TestStdlibAssignsNoGlobals(t *testing.T) {
	entries, err := fs.ReadDir(stdlib.Files(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lua") {
			continue
		}
		src, err := fs.ReadFile(stdlib.Files(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		chunk, err := parse.Parse(bytes.NewReader(src), e.Name())
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		proto, err := glua.Compile(chunk, e.Name())
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		for _, g := range globalsSet(proto) {
			if !intendedGlobals[e.Name()+" "+g.name] {
				t.Errorf("%s assigns the global %s (line %d)", e.Name(), g.name, g.line)
			}
		}
	}
}

// intendedGlobals are the globals a file sets on purpose, as "file name".
var intendedGlobals = map[string]bool{
	"main.lua arg": true, // a script's arguments, as every Lua interpreter sets them
}

// globalSet is one assignment to a global.
type globalSet struct {
	name string
	line int
}

// globalsSet returns each SETGLOBAL in proto and the functions inside it.
// An instruction holds its opcode in its top 6 bits and, for SETGLOBAL,
// the constant index of the name in its low 18.
func globalsSet(proto *glua.FunctionProto) []globalSet {
	var set []globalSet
	for pc, inst := range proto.Code {
		if int(inst>>26) != glua.OP_SETGLOBAL {
			continue
		}
		set = append(set, globalSet{name: proto.Constants[inst&0x3ffff].String(), line: proto.DbgSourcePositions[pc]})
	}
	for _, p := range proto.FunctionPrototypes {
		set = append(set, globalsSet(p)...)
	}
	return set
}
