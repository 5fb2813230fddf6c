package lua

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/stdlib"
)

// The embedded stdlib's modules are named tai.x (tai.repl, tai.chatview,
// tai.normalize, …), as Neovim's runtime is vim.x, so that the user's own
// modules never meet them by accident: a ~/.config/tai/lua/chat.lua or
// context.lua of one's own is what require("chat") or require("context")
// loads, and tai keeps its built-ins. Replacing a built-in is deliberate:
// lua/tai/x.lua replaces tai.x. For compatibility, the entry points whose
// flat override has always been documented (flatOverride) are replaced by
// lua/x.lua too, and a flat require("x") of a built-in name that no user
// file answers is the built-in itself, the very table tai uses.

// flatOverride reports whether lua/x.lua at the top of the user's folder
// replaces the built-in tai.x: true for tai's entry points (main.lua,
// repl.lua and the rules normalize.lua and resolve.lua), whose names no
// module of one's own takes by accident and whose flat override the
// documentation has always promised.
func flatOverride(x string) bool {
	switch x {
	case "main", "repl", "normalize", "resolve":
		return true
	}
	return false
}

// renamedModules pairs the flat names two built-ins had before they
// were named for what they hold with their names now: require("chat") and
// require("mcp") still find tai.chatview and tai.mcpcommand.
func renamedModules() [][2]string {
	return [][2]string{{"chat", "chatview"}, {"mcp", "mcpcommand"}}
}

// builtinNamed returns the built-in module that the flat name x stands
// for (x itself, or what an old name became), or "".
func builtinNamed(x string) string {
	for _, r := range renamedModules() {
		if x == r[0] {
			return r[1]
		}
	}
	if strings.Contains(x, ".") {
		return ""
	}
	if _, err := fs.Stat(stdlib.Files(), x+".lua"); err != nil {
		return ""
	}
	return x
}

// flatName is the flat name a user's file for built-in x has: x, or its
// old name.
func flatName(x string) string {
	for _, r := range renamedModules() {
		if x == r[1] {
			return r[0]
		}
	}
	return x
}

// installLoader puts the tai searcher second in package.loaders, after
// package.preload and before the package.path search (see search).
func (h *Host) installLoader() {
	L := h.L
	loaders, ok := L.GetField(L.Get(glua.RegistryIndex), "_LOADERS").(*glua.LTable)
	if !ok {
		panic("lua: package library not opened")
	}
	loaders.Insert(2, L.NewFunction(h.search))
}

// UserLuaDir returns the folder searched before the embedded stdlib, or ""
// when the host runs clean.
func (h *Host) UserLuaDir() string {
	if h.opts.Clean {
		return ""
	}
	return filepath.Join(h.opts.ConfigDir, "lua")
}

// InitFile returns the path of the user's init.lua when it exists and the
// host is not clean, else "".
func (h *Host) InitFile() string {
	if h.opts.Clean {
		return ""
	}
	p := filepath.Join(h.opts.ConfigDir, "init.lua")
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p
	}
	return ""
}

// search is the package.loaders entry: it returns the compiled module (or
// a loader that requires the built-in a flat name stands for) or a string
// saying where it looked.
//
//	require("builtin.x")  the embedded x.lua, always (for a file that wraps it)
//	require("tai.x")      for a built-in x: lua/tai/x.lua, then lua/x.lua when
//	                      flatOverride(x), then the embedded x.lua
//	require("x")          lua/x.lua (x.y: lua/x/y.lua), else the built-in
//	                      tai.x the name stands for; the entry points of
//	                      flatOverride always mean tai.x, so one table serves
//	                      init.lua and tai
func (h *Host) search(L *glua.LState) int {
	name := L.CheckString(1)
	if rest, ok := strings.CutPrefix(name, "builtin."); ok {
		if src, err := fs.ReadFile(stdlib.Files(), rest+".lua"); err == nil {
			return pushEmbedded(L, rest, src)
		}
		L.Push(glua.LString("\n\tno built-in 'stdlib/" + rest + ".lua'"))
		return 1
	}
	if rest, ok := strings.CutPrefix(name, "tai."); ok && builtinNamed(rest) == rest {
		return h.searchBuiltin(L, rest)
	}
	if b := builtinNamed(name); b != "" && flatOverride(b) {
		return pushRequire(L, "tai."+b)
	}
	rel := strings.ReplaceAll(name, ".", "/") + ".lua"
	var looked []string
	if dir := h.UserLuaDir(); dir != "" {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if src, err := os.ReadFile(p); err == nil {
			return pushUser(L, name, p, src)
		}
		looked = append(looked, "no file '"+p+"'")
	}
	if b := builtinNamed(name); b != "" {
		return pushRequire(L, "tai."+b)
	}
	looked = append(looked, "no built-in 'stdlib/"+rel+"'")
	L.Push(glua.LString("\n\t" + strings.Join(looked, "\n\t")))
	return 1
}

// searchBuiltin finds tai.x: the user's replacement, else the embedded
// x.lua. A user's lua/x.lua that no longer replaces it (see flatOverride)
// and differs from it is noted on stderr, so an override written for an
// older tai is not dropped in silence.
func (h *Host) searchBuiltin(L *glua.LState, x string) int {
	embedded, err := fs.ReadFile(stdlib.Files(), x+".lua")
	if err != nil {
		L.RaiseError("the built-in %s.lua cannot be read: %v", x, err)
	}
	if dir := h.UserLuaDir(); dir != "" {
		replacing := []string{filepath.Join(dir, "tai", x+".lua")}
		flat := filepath.Join(dir, flatName(x)+".lua")
		if flatOverride(x) {
			replacing = append(replacing, flat)
		}
		for _, p := range replacing {
			if src, err := os.ReadFile(p); err == nil {
				// A copy identical to the built-in file (what
				// --dump-stdlib wrote, unedited) changes nothing and is
				// not worth a notice.
				if !bytes.Equal(src, embedded) {
					h.tell(L, "warn", fmt.Sprintf("tai: %s overrides the built-in %s.lua", p, x))
				}
				return pushUser(L, "tai."+x, p, src)
			}
		}
		if src, err := os.ReadFile(flat); err == nil && !flatOverride(x) && !bytes.Equal(src, embedded) {
			h.tell(L, "warn", fmt.Sprintf("tai: %s is a module of your own, not the built-in %s.lua (tai's are tai.*: %s replaces it)",
				flat, x, replacing[0]))
		}
	}
	return pushEmbedded(L, x, embedded)
}

// pushUser pushes the compiled user file p for module name.
func pushUser(L *glua.LState, name, p string, src []byte) int {
	fn, err := L.Load(bytes.NewReader(src), p)
	if err != nil {
		L.RaiseError("error loading module '%s' from %s:\n\t%s", name, p, err.Error())
	}
	L.Push(fn)
	return 1
}

// pushEmbedded pushes the compiled embedded x.lua.
func pushEmbedded(L *glua.LState, x string, src []byte) int {
	fn, err := L.Load(bytes.NewReader(src), "stdlib/"+x+".lua")
	if err != nil {
		L.RaiseError("error loading built-in module '%s':\n\t%s", x, err.Error())
	}
	L.Push(fn)
	return 1
}

// pushRequire pushes a loader whose module is require(name)'s, so a flat
// name and the tai. name it stands for share one table.
func pushRequire(L *glua.LState, name string) int {
	L.Push(L.NewFunction(func(L *glua.LState) int {
		L.Push(L.GetGlobal("require"))
		L.Push(glua.LString(name))
		L.Call(1, 1)
		return 1
	}))
	return 1
}
