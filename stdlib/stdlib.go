package stdlib

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed *.lua
var files embed.FS

//go:embed meta/*.lua
var meta embed.FS

// Files returns the embedded Lua files, flat, named "<module>.lua".
func Files() fs.FS { return files }

// Meta returns the definitions of the tai module for lua-language-server
// (LuaLS), as "meta/tai.lua": annotations for editors, which the module
// loader never sees.
func Meta() fs.FS { return meta }

// dumped is one file Dump writes: its path under the folder, its content.
type dumped struct {
	rel  string
	data []byte
}

// dumpList returns every embedded file: the modules, meta/, then help/.
func dumpList() ([]dumped, error) {
	var out []dumped
	for _, fsys := range []fs.FS{files, meta, help} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			out = append(out, dumped{rel: p, data: data})
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Dump writes every embedded file into dir (created 0755 when missing),
// the modules at its top, the LuaLS definitions in dir/meta and the help
// topics in dir/help, and
// returns the paths written. It refuses to overwrite a file that already
// exists there, so edits made after an earlier dump are never lost.
func Dump(dir string) ([]string, error) {
	if dir == "" {
		return nil, errors.New("stdlib: no folder given to dump into")
	}
	list, err := dumpList()
	if err != nil {
		return nil, err
	}
	for _, f := range list {
		p := filepath.Join(dir, filepath.FromSlash(f.rel))
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("stdlib: %s already exists; remove it or dump into an empty folder", p)
		}
	}
	var written []string
	for _, f := range list {
		p := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("stdlib: create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return written, fmt.Errorf("stdlib: write %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, nil
}
