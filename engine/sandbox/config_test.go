package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tai's own configuration (init.lua, lua/) runs in tai itself, outside
// any sandbox: no sandboxed command may write it, whether it works in
// that folder, in one holding it through a symbolic link (dotfiles), or
// in one holding $XDG_CONFIG_HOME; the folders around it stay writable.
func TestConfigNeverWritable(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	root := filepath.Dir(w.home)
	mk := func(f string) {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("-- init\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// ~/.config/tai is a link into a dotfiles folder.
	dotfiles := filepath.Join(w.home, "dotfiles")
	mk(filepath.Join(dotfiles, "tai", "init.lua"))
	mk(filepath.Join(dotfiles, "vimrc"))
	os.MkdirAll(filepath.Join(w.home, ".config"), 0o700)
	if err := os.Symlink(filepath.Join(dotfiles, "tai"), filepath.Join(w.home, ".config", "tai")); err != nil {
		t.Fatal(err)
	}
	// Another person's setting: $XDG_CONFIG_HOME outside the home folder.
	work := filepath.Join(root, "work")
	mk(filepath.Join(work, "cfg", "tai", "init.lua"))
	mk(filepath.Join(work, "cfg", "other"))
	xdg := append(append([]string(nil), w.env...), "XDG_CONFIG_HOME="+filepath.Join(work, "cfg"))

	cases := []struct {
		name, dir string
		env       []string
		p         Policy
		init, ok  string
	}{
		{"shell in the config folder", filepath.Join(w.home, ".config", "tai"), w.env,
			ForShell(ShellSpec{Dir: filepath.Join(w.home, ".config", "tai"), Env: w.env, Vault: w.vault}),
			"init.lua", ""},
		{"shell in dotfiles", dotfiles, w.env,
			ForShell(ShellSpec{Dir: dotfiles, Env: w.env, Vault: w.vault}),
			filepath.Join(dotfiles, "tai", "init.lua"), filepath.Join(dotfiles, "vimrc")},
		{"server granted dotfiles", dotfiles, w.env,
			ForServer(ServerSpec{Name: "fs", Command: "sh", Args: []string{dotfiles}, Env: w.env, Vault: w.vault}),
			filepath.Join(dotfiles, "tai", "init.lua"), filepath.Join(dotfiles, "vimrc")},
		{"server granted the config folder", dotfiles, w.env,
			ForServer(ServerSpec{Name: "fs", Command: "sh", Write: []string{"~/.config/tai"}, Env: w.env, Vault: w.vault}),
			filepath.Join(dotfiles, "tai", "init.lua"), ""},
		{"shell beside $XDG_CONFIG_HOME", work, xdg,
			ForShell(ShellSpec{Dir: work, Env: xdg, Vault: w.vault}),
			filepath.Join(work, "cfg", "tai", "init.lua"), filepath.Join(work, "cfg", "other")},
	}
	for _, c := range cases {
		script := `echo "print('pwned')" >> "$1" && echo WROTE-INIT; mkdir -p "$(dirname "$1")/lua/x" && echo MADE-LUA; cat "$1" >/dev/null || echo CANNOT-READ-INIT`
		if c.ok != "" {
			script += `; echo x >> "$2" || echo CANNOT-WRITE-BESIDE`
		}
		_, out := run(t, []string{"sh", "-c", script, "sh", c.init, c.ok}, c.dir, c.env, &c.p)
		for _, bad := range []string{"WROTE-INIT", "MADE-LUA", "CANNOT-READ-INIT", "CANNOT-WRITE-BESIDE"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %s (%s):\n%s", c.name, bad, c.p.Describe(), out)
			}
		}
	}
}
