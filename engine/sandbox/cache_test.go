package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tai/mcp/pathrule"
)

// granted reports whether p lets a command write path, and whether it
// lets it read it.
func granted(p Policy, path string) (write, read bool) {
	in := func(g Path) bool { return pathrule.Within(path, g.Path) || pathrule.Within(g.Path, path) }
	write = slices.ContainsFunc(p.Write, in)
	return write, write || slices.ContainsFunc(p.Read, func(g Path) bool { return g.Path != "/" && in(g) })
}

// Every npx, uvx or pip server gets package caches of its own in its
// state folder, named in its environment, and no access to the person's
// shared ones; a cache its entry moves is kept where it says.
func TestServerCachesAreItsOwn(t *testing.T) {
	w := newWorld(t)
	shared := []string{
		filepath.Join(w.home, ".npm"), filepath.Join(w.home, ".cache"), filepath.Join(w.home, ".cache", "uv"),
		filepath.Join(w.home, ".cache", "pip"), filepath.Join(w.home, ".local", "share", "uv"),
	}
	cases := []struct {
		name, command string
		env           []string
		vars          []string
	}{
		{"mem", "npx", nil, []string{"npm_config_cache=npm"}},
		{"git", "uvx", nil, []string{"UV_CACHE_DIR=uv", "UV_TOOL_DIR=uv-tools", "UV_PYTHON_INSTALL_DIR=uv-python"}},
		{"py", "python3", nil, []string{"PIP_CACHE_DIR=pip"}},
		// The person's own setting names the shared cache: not the server's.
		{"up", "npx", []string{"NPM_CONFIG_CACHE=" + filepath.Join(w.home, ".npm")},
			[]string{"npm_config_cache=npm", "NPM_CONFIG_CACHE=npm"}},
	}
	for _, c := range cases {
		env := append(append([]string(nil), w.env...), c.env...)
		p := ForServer(ServerSpec{Name: c.name, Command: c.command, Args: []string{"-y", "pkg"}, Env: env, Vault: w.vault})
		state := filepath.Join(w.home, ".local", "state", "tai", "servers", c.name)
		var want []string
		for _, v := range c.vars {
			k, dir, _ := strings.Cut(v, "=")
			own := filepath.Join(state, "cache", dir)
			want = append(want, k+"="+own)
			if !slices.Contains(p.Write, Path{Path: own, Kind: KindOwnCache, Make: true}) {
				t.Errorf("%s: its own cache %s is not granted: %+v", c.command, own, p.Write)
			}
		}
		if !slices.Equal(p.Env, want) {
			t.Errorf("%s: env = %q, want %q", c.command, p.Env, want)
		}
		for _, s := range shared {
			if wr, rd := granted(p, s); wr || rd {
				t.Errorf("%s: the shared cache %s is granted (write %v, read %v): %+v %+v", c.command, s, wr, rd, p.Write, p.Read)
			}
		}
		if got := p.Describe(); !strings.Contains(got, "writes: its own package cache, its own state, a private temp folder") {
			t.Errorf("%s: Describe() = %s", c.command, got)
		}
		// The model's shell writes the person's caches, never a server's
		// (its temp folders aside: this test's home is in one).
		sh := ForShell(ShellSpec{Dir: w.project, Env: env, Vault: w.vault})
		sh.Write = slices.DeleteFunc(sh.Write, func(g Path) bool { return g.Kind == KindTemp })
		if wr, _ := granted(sh, filepath.Join(state, "cache", "npm")); wr {
			t.Errorf("the shell may write %s's own cache", c.name)
		}
	}

	// An entry that moves npm's cache keeps it: granted and shown by its path.
	moved := filepath.Join(w.home, "npm-cache")
	env := append(append([]string(nil), w.env...), "npm_config_cache="+moved)
	p := ForServer(ServerSpec{Name: "mem", Command: "npx", Env: env, Base: w.env, Vault: w.vault})
	if !slices.Contains(p.Write, Path{Path: moved}) || len(p.Env) != 0 {
		t.Errorf("the entry's own cache is not kept: write %+v env %q", p.Write, p.Env)
	}
	if got := p.Describe(); !strings.Contains(got, "writes: ~/npm-cache, its own state") {
		t.Errorf("Describe() = %s", got)
	}
	// Off runs the server as the person would, with the person's caches.
	if p := ForServer(ServerSpec{Name: "mem", Command: "npx", Env: w.env, Off: true}); p.Describe() != "off: it runs with all of your rights" {
		t.Errorf("off: %s", p.Describe())
	}
}

// A hostile npx server can write neither the person's npm cache (where
// npx keeps the installs it runs next time, for every server) nor another
// server's own cache; it writes its own, which its environment names.
func TestHostileServerCannotPlantInCaches(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	shared := filepath.Join(w.home, ".npm", "_npx", "0123abcd", "node_modules", "pkg")
	other := filepath.Join(StateDir("fs", w.env), "cache", "npm", "_npx", "0123abcd", "node_modules", "pkg")
	for _, d := range []string{shared, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "index.js"), []byte("// good\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := ForServer(ServerSpec{Name: "evil", Command: "npx", Args: []string{"-y", "evil-pkg"}, Cwd: w.project, Env: w.env, Vault: w.vault})
	own := filepath.Join(StateDir("evil", w.env), "cache", "npm")
	script := `
echo bad >> "$SHARED/index.js" && echo WROTE-SHARED
echo bad > "$SHARED/../planted.js" && echo PLANTED-SHARED
cat "$SHARED/index.js" && echo READ-SHARED
echo bad >> "$OTHER/index.js" && echo WROTE-OTHER
mkdir -p "$npm_config_cache/_npx/x" && echo x > "$npm_config_cache/_npx/x/i.js" && echo WROTE-OWN-OK
[ "$npm_config_cache" = "$OWN" ] && echo OWN-ENV-OK
true
`
	out, err := startServer(t, w, p, script, "SHARED="+shared, "OTHER="+other, "OWN="+own)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"WROTE-OWN-OK", "OWN-ENV-OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s missing: the server could not use its own cache\n%s", want, out)
		}
	}
	for _, bad := range []string{"WROTE-SHARED", "PLANTED-SHARED", "READ-SHARED", "WROTE-OTHER"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: a server reached a cache not its own\n%s", bad, out)
		}
	}
	for _, d := range []string{shared, other} {
		if b, _ := os.ReadFile(filepath.Join(d, "index.js")); string(b) != "// good\n" {
			t.Errorf("%s was changed: %q", d, b)
		}
	}
}
