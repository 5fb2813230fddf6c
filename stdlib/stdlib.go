// Package stdlib holds the Lua files shipped inside the tai binary: main.lua
// (start-up dispatch), repl.lua (the interactive loop and its commands) and
// the modules they use. The lua package loads them through its module loader,
// after the user's own $XDG_CONFIG_HOME/tai/lua/ folder, so any of them can be
// replaced by a file of the same name.
//
//	src, err := fs.ReadFile(stdlib.Files(), "repl.lua")
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

// Files returns the embedded Lua files, flat, named "<module>.lua".
func Files() fs.FS { return files }

// Dump writes every embedded file into dir (created 0755 when missing) and
// returns the paths written. It refuses to overwrite a file that already
// exists there, so edits made after an earlier dump are never lost.
func Dump(dir string) ([]string, error) {
	if dir == "" {
		return nil, errors.New("stdlib: no folder given to dump into")
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("stdlib: %s already exists; remove it or dump into an empty folder", p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("stdlib: create %s: %w", dir, err)
	}
	var written []string
	for _, e := range entries {
		data, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return written, err
		}
		p := filepath.Join(dir, e.Name())
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return written, fmt.Errorf("stdlib: write %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, nil
}
