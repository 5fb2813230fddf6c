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

// installLoader puts the tai searcher second in package.loaders, after
// package.preload and before the package.path search: require("x") finds
// $ConfigDir/lua/x.lua first (unless Clean), then the embedded stdlib's
// x.lua, then the usual disk path. require("builtin.x") finds only the
// embedded x.lua, for a user's file that wraps the one it replaces.
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

// search is the package.loaders entry: it returns the compiled module or a
// string saying where it looked.
func (h *Host) search(L *glua.LState) int {
	name := L.CheckString(1)
	builtinOnly := false
	if rest, ok := strings.CutPrefix(name, "builtin."); ok {
		// require("builtin.x") is always the shipped x.lua, so a user's
		// x.lua can wrap the module it replaces.
		name, builtinOnly = rest, true
	}
	rel := strings.ReplaceAll(name, ".", "/") + ".lua"
	var looked []string
	embedded, embErr := fs.ReadFile(stdlib.Files(), rel)
	if dir := h.UserLuaDir(); dir != "" && !builtinOnly {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if src, err := os.ReadFile(p); err == nil {
			fn, err := L.Load(bytes.NewReader(src), p)
			if err != nil {
				L.RaiseError("error loading module '%s' from %s:\n\t%s", name, p, err.Error())
			}
			// A copy identical to the built-in file (what --dump-stdlib
			// wrote, unedited) changes nothing and is not worth a notice.
			if embErr == nil && !bytes.Equal(src, embedded) {
				fmt.Fprintf(h.opts.Stderr, "tai: %s overrides the built-in %s\n", p, rel)
			}
			L.Push(fn)
			return 1
		}
		looked = append(looked, "no file '"+p+"'")
	}
	if embErr == nil {
		fn, err := L.Load(bytes.NewReader(embedded), "stdlib/"+rel)
		if err != nil {
			L.RaiseError("error loading built-in module '%s':\n\t%s", name, err.Error())
		}
		L.Push(fn)
		return 1
	}
	looked = append(looked, "no built-in 'stdlib/"+rel+"'")
	L.Push(glua.LString("\n\t" + strings.Join(looked, "\n\t")))
	return 1
}
