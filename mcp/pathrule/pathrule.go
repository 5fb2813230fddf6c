// Package pathrule holds tai's one rule for whether a path lies in a
// folder (Within), and the resolution of a path's symbolic links as far
// as it exists (Resolve) that the rule is applied to where a link could
// lead out of the folder.
//
// It is a leaf: it imports nothing of tai, and every package may import
// it: the sandbox's policies, the sandbox settings of a pasted config,
// the kept permission rules and the shell tool all judge containment
// through it, with the path first and the folder second.
package pathrule

import (
	"path/filepath"
	"strings"
)

// Within reports whether path is dir or lies inside it. Both are clean
// and absolute (or both clean and relative to the same folder): the
// test is on their text, so "/a/bc" is not within "/a/b", and a link is
// not followed (Resolve both first where that matters). Every path is
// within "/".
func Within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || len(path) > len(dir) && path[len(dir)] == '/' && path[:len(dir)] == dir
}

// Resolve returns the clean absolute path abs with the symbolic links of
// its longest existing leading part resolved; the rest is kept as
// written, so a path that does not exist yet resolves as far as its
// folders do.
func Resolve(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
