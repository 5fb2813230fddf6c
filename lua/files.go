package lua

import (
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"

	glua "github.com/yuin/gopher-lua"
)

// openFiles installs the reads of the file system the REPL's completion,
// @file mentions and views need, and where tai runs:
//
//	tai.os                                      "linux", "darwin", …
//	tai.cwd() -> path                           the tools' working directory
//	tai.read_text(path [, max]) -> text, truncated | nil, err
//	                                            a regular file's text, bounded
//	tai.file_kind(path) -> "file" | "dir" | "other" | nil
//	tai.list_dir(path) -> {name, …} | nil, err   folders end with /
func (h *Host) openFiles(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("os", glua.LString(runtime.GOOS))
	tai.RawSetString("cwd", L.NewFunction(h.luaCwd))
	tai.RawSetString("read_text", L.NewFunction(luaReadText))
	tai.RawSetString("file_kind", L.NewFunction(luaFileKind))
	tai.RawSetString("list_dir", L.NewFunction(luaListDir))
}

// maxListDir bounds the names tai.list_dir returns.
const maxListDir = 2000

// luaListDir is tai.list_dir(path) -> {name, …} | nil, err: the entries of
// a folder, sorted, folders with a trailing slash (for completion).
func luaListDir(L *glua.LState) int {
	entries, err := os.ReadDir(L.CheckString(1))
	if err != nil {
		return fail(L, err.Error())
	}
	out := NewArray(L)
	for i, e := range entries {
		if i >= maxListDir {
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		out.Append(glua.LString(name))
	}
	L.Push(out)
	return 1
}

// luaFileKind is tai.file_kind(path) -> "file" | "dir" | "other" | nil:
// what path is, without opening it (symbolic links followed).
func luaFileKind(L *glua.LState) int {
	st, err := os.Stat(L.CheckString(1))
	switch {
	case err != nil:
		L.Push(glua.LNil)
	case st.Mode().IsRegular():
		L.Push(glua.LString("file"))
	case st.IsDir():
		L.Push(glua.LString("dir"))
	default:
		L.Push(glua.LString("other"))
	}
	return 1
}

// luaReadText is tai.read_text(path [, max]) -> text, truncated | nil, err:
// at most max bytes (default 1 MiB) of a regular file. Anything else (a
// folder, a FIFO, a device such as /dev/tty) is refused without being
// opened for reading, so a name chosen by a model or a repository can
// never make the screen that shows it wait.
func luaReadText(L *glua.LState) int {
	path := L.CheckString(1)
	limit := L.OptInt(2, 1<<20)
	if limit < 0 {
		L.ArgError(2, "max must not be negative")
	}
	st, err := os.Stat(path)
	if err != nil {
		return fail(L, err.Error())
	}
	if !st.Mode().IsRegular() {
		return fail(L, path+" is not a regular file")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail(L, err.Error())
	}
	defer f.Close()
	if st2, err := f.Stat(); err != nil || !st2.Mode().IsRegular() {
		return fail(L, path+" is not a regular file")
	}
	buf := make([]byte, limit+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(buf[:min(n, limit)]))
	L.Push(glua.LBool(n > limit))
	return 2
}

// luaCwd is tai.cwd(): the working directory of the file and shell tools
// (the engine's, else the process's).
func (h *Host) luaCwd(L *glua.LState) int {
	if o := h.opts.Engine; o != nil && o.Dir != "" {
		L.Push(glua.LString(o.Dir))
		return 1
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(wd))
	return 1
}
