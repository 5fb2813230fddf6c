package lua

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
//	tai.file_trusted(path) -> true | false, why  the person's own, in a folder only they (or root) can write to
func (h *Host) openFiles(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("file_trusted", L.NewFunction(luaFileTrusted))
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

// luaFileTrusted is tai.file_trusted(path) -> true | false, why: whether
// path may speak for the person (a project's instruction file, the .git
// that marks a project's root): it is owned by them or by root, and its
// folder is owned by them or by root and writable by no other user (not
// by every user, as /tmp is; not by a group other than their own). A
// path that does not exist is not trusted.
func luaFileTrusted(L *glua.LState) int {
	if why := untrusted(L.CheckString(1)); why != "" {
		L.Push(glua.LFalse)
		L.Push(glua.LString(why))
		return 2
	}
	L.Push(glua.LTrue)
	return 1
}

// untrusted says why path is not the person's to trust, "" when it is.
func untrusted(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	uid := uint32(os.Getuid())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != uid && sys.Uid != 0 {
		return fmt.Sprintf("it belongs to another user (uid %d)", sys.Uid)
	}
	dir := filepath.Dir(path)
	dst, err := os.Stat(dir)
	if err != nil {
		return err.Error()
	}
	sys, ok := dst.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	perm := dst.Mode().Perm()
	switch {
	case sys.Uid != uid && sys.Uid != 0:
		return fmt.Sprintf("its folder %s belongs to another user (uid %d)", dir, sys.Uid)
	case perm&0o002 != 0:
		return fmt.Sprintf("its folder %s is writable by every user", dir)
	case perm&0o020 != 0 && sys.Gid != uint32(os.Getgid()):
		return fmt.Sprintf("its folder %s is writable by the group %d, not yours", dir, sys.Gid)
	}
	return ""
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
