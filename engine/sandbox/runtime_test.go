package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server whose program lives in the home folder (~/bin/tool, ~/tool)
// may read that program's folder, never the whole home folder, and the
// consent line names what it reads rather than calling it the system's.
func TestRuntimeInHomeGrantsNotHome(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	for _, prog := range []string{filepath.Join(w.home, "bin", "tool"), filepath.Join(w.home, "tool")} {
		if err := os.MkdirAll(filepath.Dir(prog), 0o700); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\ncat \"$1\" && echo READ-OTHER\nls \"$HOME\" >/dev/null && echo LISTED-HOME\necho RAN\n"
		if err := os.WriteFile(prog, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		p := ForServer(ServerSpec{Name: "tool", Command: prog, Env: w.env, Vault: w.vault})
		if d := p.Describe(); !strings.Contains(d, "~/") || strings.HasPrefix(d, "reads: system;") {
			t.Errorf("%s: the consent line does not name what it reads: %s", prog, d)
		}
		_, out := run(t, []string{prog, w.other}, w.project, w.env, &p)
		if !strings.Contains(out, "RAN") {
			t.Errorf("%s did not run:\n%s", prog, out)
		}
		for _, bad := range []string{"READ-OTHER", "LISTED-HOME", "SECRET"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %s (%s):\n%s", prog, bad, p.Describe(), out)
			}
		}
	}
}
