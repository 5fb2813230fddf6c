package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tai/mcp/pathrule"
)

// toolchain is a version manager or a per-user runtime that installs
// into the home folder: where it lives, and what a program it runs must
// read.
type toolchain struct {
	name string
	// roots are the folders it installs into and runs from, each as a
	// list of places tried in order (see where); a program found in one,
	// or a shim that leads into one, is granted them all.
	roots [][]string
	// reads are more files and folders it reads when it runs (its
	// configuration, the versions it is told to use), patterns allowed.
	reads [][]string
}

// toolchains lists the managers and runtimes tai knows, with their
// documented layouts. Each root is granted whole, for reading and
// executing, never written: a server runs what the person installed and
// cannot change it.
func toolchains() []toolchain {
	return []toolchain{
		// pyenv, rbenv and nodenv: shims are bash scripts that exec the
		// manager in its libexec folder, which execs versions/V/bin/X.
		{name: "pyenv", roots: [][]string{{"$PYENV_ROOT", "~/.pyenv"}}},
		{name: "rbenv", roots: [][]string{{"$RBENV_ROOT", "~/.rbenv"}}},
		{name: "nodenv", roots: [][]string{{"$NODENV_ROOT", "~/.nodenv"}}},
		// asdf: shims exec asdf (from its own folder, or on PATH), which
		// execs installs/PLUGIN/V/bin/X; it reads ~/.tool-versions.
		{name: "asdf", roots: [][]string{{"$ASDF_DATA_DIR", "~/.asdf"}, {"$ASDF_DIR", "~/.asdf"}},
			reads: [][]string{{"$ASDF_CONFIG_FILE", "~/.asdfrc"}, {"~/.tool-versions"}}},
		// mise: shims are links to mise itself, which execs
		// installs/TOOL/V/bin/X after reading its configuration.
		{name: "mise", roots: [][]string{{"$MISE_DATA_DIR", "$XDG_DATA_HOME/mise", "~/.local/share/mise"}},
			reads: [][]string{{"$MISE_CONFIG_DIR", "$XDG_CONFIG_HOME/mise", "~/.config/mise"}, {"~/.tool-versions"}}},
		// volta: shims are links to volta-shim, which reads
		// tools/user/platform.json and execs tools/image/node/V/bin/node.
		{name: "volta", roots: [][]string{{"$VOLTA_HOME", "~/.volta"}}},
		{name: "nvm", roots: [][]string{{"$NVM_DIR", "~/.nvm"}}},
		// fnm: PATH holds a per-shell link into node-versions.
		{name: "fnm", roots: [][]string{{"$FNM_DIR", "$XDG_DATA_HOME/fnm", "~/.local/share/fnm"}, {"~/.fnm"}}},
		{name: "sdkman", roots: [][]string{{"$SDKMAN_DIR", "~/.sdkman"}}},
		{name: "bun", roots: [][]string{{"$BUN_INSTALL", "~/.bun"}}},
		{name: "deno", roots: [][]string{{"$DENO_INSTALL", "~/.deno"}}},
		// cargo's bin folder holds rustup's proxies, which exec the
		// toolchains in ~/.rustup; the rest of ~/.cargo holds the
		// registry's credentials and is not granted.
		{name: "rustup", roots: [][]string{{"$CARGO_HOME/bin", "~/.cargo/bin"}, {"$RUSTUP_HOME", "~/.rustup"}}},
		// Go: go install's binaries, and the SDKs golang.org/dl's
		// wrappers (~/go/bin/go1.N) run.
		{name: "go", roots: [][]string{{"$GOBIN", "$GOPATH/bin", "~/go/bin"}, {"~/sdk"}}},
		// uv: the Pythons it installed and the tools uv tool install
		// made (whose links are in ~/.local/bin).
		{name: "uv", roots: [][]string{uvPythons(), {"$UV_TOOL_DIR", "$XDG_DATA_HOME/uv/tools", "~/.local/share/uv/tools"}}},
		{name: "homebrew", roots: [][]string{{"$HOMEBREW_PREFIX", "/home/linuxbrew/.linuxbrew"}, {"~/.linuxbrew"}}},
		// pip install --user: its scripts in ~/.local/bin, their packages
		// in ~/.local/lib/pythonX.Y.
		{name: "~/.local/bin", roots: [][]string{{"~/.local/bin"}}, reads: [][]string{{"~/.local/lib/python*"}}},
	}
}

// uvPythons are the places uv installs Pythons in, in its order.
func uvPythons() []string {
	return []string{"$UV_PYTHON_INSTALL_DIR", "$XDG_DATA_HOME/uv/python", "~/.local/share/uv/python"}
}

// where is the first of places that env names: "$VAR/rest" when VAR is
// set to an absolute path, "~/rest" from home, an absolute path as
// itself. It returns "" when none does.
func where(places []string, env []string, home string) string {
	for _, pl := range places {
		switch {
		case strings.HasPrefix(pl, "$"):
			name, rest, _ := strings.Cut(pl[1:], "/")
			if v := lookEnv(env, name); filepath.IsAbs(v) {
				return filepath.Join(filepath.Clean(v), rest)
			}
		case strings.HasPrefix(pl, "~/"):
			if home != "" && home != "/" {
				return filepath.Join(home, pl[2:])
			}
		case filepath.IsAbs(pl):
			return filepath.Clean(pl)
		}
	}
	return ""
}

// toolchainGrants returns what a server may read of the toolchains its
// programs (the command and what it leads to, see chain) come from: each
// matched toolchain's roots and reads that exist, shown as themselves.
// Where each lives is taken from tai's own environment, base, never from
// the entry's, and none may be the home folder, hold it, or be one of
// its entries.
func toolchainGrants(progs []string, base []string, home string) []Path {
	var out []Path
	for _, tc := range toolchains() {
		var roots []string
		for _, r := range tc.roots {
			if d := where(r, base, home); d != "" && exists(d) && !tooBroad(d, home) {
				roots = append(roots, d, realPath(d))
			}
		}
		if !slices.ContainsFunc(progs, func(p string) bool {
			return slices.ContainsFunc(roots, func(r string) bool { return pathrule.Within(p, r) })
		}) {
			continue
		}
		var grant []string
		for _, r := range tc.roots {
			grant = append(grant, where(r, base, home))
		}
		for _, r := range tc.reads {
			d := where(r, base, home)
			if m, err := filepath.Glob(d); err == nil && strings.ContainsAny(d, "*?[") {
				grant = append(grant, m...)
			} else {
				grant = append(grant, d)
			}
		}
		out = addGrants(out, grant, home)
	}
	// A manager found by its layout wherever it lives: a shim in a
	// shims folder beside the manager's libexec (pyenv, rbenv, nodenv)
	// or beside asdf's installs.
	for _, p := range progs {
		if filepath.Base(filepath.Dir(p)) != "shims" {
			continue
		}
		root := filepath.Dir(filepath.Dir(p))
		for _, m := range []string{"libexec/pyenv", "libexec/rbenv", "libexec/nodenv", "installs", "bin/asdf"} {
			if exists(filepath.Join(root, m)) {
				out = addGrants(out, []string{root}, home)
				break
			}
		}
	}
	return out
}

// addGrants adds to out, for reading, those of paths that exist and are
// not too broad (see tooBroad), each once.
func addGrants(out []Path, paths []string, home string) []Path {
	for _, g := range paths {
		if g == "" || tooBroad(g, home) || slices.ContainsFunc(out, func(o Path) bool { return o.Path == g }) {
			continue
		}
		if _, err := os.Stat(g); err == nil {
			out = append(out, Path{Path: g})
		}
	}
	return out
}

// tooBroad reports whether granting d would grant the home folder, a
// folder above it, or one of its entries whole (~/.config, ~/.local);
// a file is never too broad.
func tooBroad(d, home string) bool {
	if d == "/" {
		return true
	}
	if home == "" || home == "/" {
		return false
	}
	if st, err := os.Stat(d); err == nil && !st.IsDir() {
		return false
	}
	return pathrule.Within(home, d) || filepath.Dir(d) == home && !slices.Contains(ownFolders(home), d)
}

// ownFolders are the entries of the home folder that are a toolchain's
// own, whole (~/.pyenv, ~/.volta, …): granting one grants nothing else.
func ownFolders(home string) []string {
	var out []string
	for _, tc := range toolchains() {
		for _, r := range tc.roots {
			for _, pl := range r {
				if rest, ok := strings.CutPrefix(pl, "~/"); ok && !strings.Contains(rest, "/") {
					out = append(out, filepath.Join(home, rest))
				}
			}
		}
	}
	return out
}

// chain returns the programs command leads to, as found from dir on path:
// the file found and its real path (a shim that is a link to its manager,
// as mise's and volta's are), the interpreter its #! line names, and,
// for a script, what it execs by absolute path or by name (a pyenv,
// rbenv or asdf shim's manager), followed in turn a few levels deep.
func chain(command, path, dir string) []string {
	var out []string
	var follow func(prog string, depth int)
	follow = func(prog string, depth int) {
		if prog == "" || slices.Contains(out, prog) || depth > 3 {
			return
		}
		out = append(out, prog)
		real := realPath(prog)
		if real != prog {
			out = append(out, real)
		}
		interp, execs := scriptOf(real)
		for _, next := range append(interp, execs...) {
			if !strings.Contains(next, "/") {
				next = lookPath(next, path, dir)
			}
			if next != "" {
				follow(filepath.Clean(next), depth+1)
			}
		}
	}
	follow(lookPath(command, path, dir), 0)
	return out
}

// scriptOf returns, when file is a script, the interpreter its #! line
// names (the program env runs, as a name) and the programs its exec
// lines run: their first word that is a plain path or name, quoted or
// not, with no variable in it.
func scriptOf(file string) (interp, execs []string) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	lines := bytes.Split(head[:n], []byte("\n"))
	rest, ok := bytes.CutPrefix(lines[0], []byte("#!"))
	if !ok {
		return nil, nil
	}
	words := strings.Fields(string(rest))
	if len(words) == 0 {
		return nil, nil
	}
	interp = []string{words[0]}
	if filepath.Base(words[0]) == "env" {
		interp = nil
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
				interp = []string{w}
				break
			}
		}
	}
	for _, l := range lines[1:] {
		words := strings.Fields(string(l))
		if len(words) < 2 || words[0] != "exec" {
			continue
		}
		w := strings.Trim(words[1], `"'`)
		if w != "" && !strings.ContainsAny(w, "$`\\*?") && !strings.HasPrefix(w, "-") {
			execs = append(execs, w)
		}
	}
	return interp, execs
}
