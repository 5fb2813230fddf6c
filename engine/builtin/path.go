package builtin

import "path/filepath"

// resolvePath makes p absolute against dir.
func resolvePath(dir, p string) string {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
