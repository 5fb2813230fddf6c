package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tai/mcp/pathrule"
)

// serverBuild is one stdio server's policy while ForServer's rules build
// it, with what they share: the environments, the home, state and
// configuration folders, and the programs its command leads to.
type serverBuild struct {
	s         ServerSpec
	env, base []string
	home      string
	progs     []string // the programs the command leads to (see chain)
	launchers []string // their base names, the command's first
	state     string   // its private state folder
	keep      []string // the env names a rule sets that ownCaches keeps
	p         Policy
}

// newServerBuild starts s's policy: its sandbox settings, the deny list,
// and the folder it runs in, which every path the entry names is
// resolved against before any is checked against the deny list ("." is
// that folder, never the keeper's).
func newServerBuild(s ServerSpec) *serverBuild {
	b := &serverBuild{s: s, env: s.Env, base: s.Base}
	if b.env == nil {
		b.env = os.Environ()
	}
	if b.base == nil {
		b.base = b.env
	}
	b.home = HomeOf(b.base)
	b.p = Policy{Off: s.Off, Required: s.Required, NoNetwork: s.NoNetwork, PrivateTemp: true, Home: b.home}
	b.p.Deny = denied(s.Deny, s.Vault, b.home)
	b.p.Dir = RunDir(s.Cwd, s.Dir, b.home)
	b.progs = chain(s.Command, lookEnv(b.env, "PATH"), b.p.Dir)
	b.launchers = []string{filepath.Base(s.Command)}
	for _, r := range b.progs {
		b.launchers = append(b.launchers, filepath.Base(r))
	}
	b.state = StateDir(s.Name, b.base)
	return b
}

// config is tai's configuration folder.
func (b *serverBuild) config() string { return configDir(b.base, b.home) }

// grant grants the folder word names (what says it in a note), or notes
// why it is left out.
func (b *serverBuild) grant(to *[]Path, word, what string) {
	path := Resolve(word, b.home, b.p.Dir)
	if path == "" {
		b.p.Notes = append(b.p.Notes, fmt.Sprintf("%s is left out: it is a relative path, and the folder the server runs in is unknown", what))
		return
	}
	*to = append(*to, Path{Path: path})
	b.p.Granted = append(b.p.Granted, path)
}

// serverRule is one named rule of ForServer's.
type serverRule struct {
	name  string
	apply func(*serverBuild)
}

// serverRules are ForServer's rules in the order they apply: the order of
// the grants they add, and what the last ones take out of them.
var serverRules = []serverRule{
	{"system folders", func(b *serverBuild) {
		for _, d := range systemDirs() {
			b.p.Read = append(b.p.Read, Path{Path: d, Kind: KindSystem})
		}
	}},
	{"runtime", func(b *serverBuild) {
		b.p.Read = append(b.p.Read, toolchainGrants(b.progs, b.base, b.home)...)
		for _, r := range b.progs {
			if !slices.ContainsFunc(b.p.Read, func(g Path) bool { return pathrule.Within(r, g.Path) || pathrule.Within(realPath(r), g.Path) }) {
				b.p.Read = append(b.p.Read, runtimeGrant(realPath(r), b.home))
			}
		}
	}},
	{"uv's Pythons", func(b *serverBuild) {
		// uv runs the Pythons it installed, read-only, rather than
		// installing one more into the server's own cache.
		if !slices.ContainsFunc(b.launchers, func(l string) bool { return l == "uv" || l == "uvx" }) {
			return
		}
		for _, e := range [][]string{b.base, b.env} {
			if d := where(uvPythons(), e, b.home); d != "" && !tooBroad(d, b.home) && exists(d) {
				b.p.Read = append(b.p.Read, Path{Path: d})
				b.keep = append(b.keep, "UV_PYTHON_INSTALL_DIR")
			}
		}
	}},
	{"own caches", func(b *serverBuild) {
		b.p.Write, b.p.Env = ownCaches(b.launchers, b.env, b.base, b.state, b.keep)
		for _, w := range b.p.Write {
			if w.Kind == "" {
				// A cache the entry's env moved: a folder the entry names.
				b.p.Granted = append(b.p.Granted, w.Path)
			}
		}
	}},
	{"docker socket", func(b *serverBuild) {
		if slices.Contains(b.launchers, "docker") {
			b.p.Connect = append(b.p.Connect, dockerSocket(b.env))
		}
	}},
	{"state folder", func(b *serverBuild) {
		b.p.Write = append(b.p.Write, Path{Path: b.state, Kind: KindState, Make: true})
	}},
	{"arguments", func(b *serverBuild) {
		// A script's project is never a folder holding tai's
		// configuration or the vault.
		never := []string{b.config()}
		if b.s.Vault != "" {
			never = append(never, filepath.Dir(expand(b.s.Vault, b.home, "/")))
		}
		for _, a := range b.s.Args {
			if !strings.HasPrefix(a, "/") && !strings.HasPrefix(a, "~") && !strings.HasPrefix(a, ".") {
				continue
			}
			path := Resolve(a, b.home, b.p.Dir)
			if path == "" {
				continue
			}
			if st, err := os.Stat(path); err == nil && st.IsDir() {
				b.p.Write = append(b.p.Write, Path{Path: path})
				b.p.Granted = append(b.p.Granted, path)
			} else if err == nil {
				root := scriptRoot(path, b.home, never)
				b.p.Read = append(b.p.Read, Path{Path: root})
				b.p.Granted = append(b.p.Granted, root)
				b.p.Scripts = append(b.p.Scripts, root)
			}
		}
	}},
	{"working folder", func(b *serverBuild) {
		if b.s.Cwd != "" {
			b.grant(&b.p.Write, b.s.Cwd, "cwd "+b.s.Cwd)
		} else if b.s.Dir != "" && b.p.Dir != "" && !pathrule.Within(b.home, b.p.Dir) {
			b.p.Read = append(b.p.Read, Path{Path: b.p.Dir})
		}
	}},
	{"sandbox grants", func(b *serverBuild) {
		for _, r := range b.s.Read {
			b.grant(&b.p.Read, r, r)
		}
		for _, w := range b.s.Write {
			b.grant(&b.p.Write, w, w)
		}
	}},
	{"deny list", func(b *serverBuild) {
		b.p.Read, b.p.Notes = keepOut(b.p.Read, b.p.Deny, b.p.Notes, b.home)
		b.p.Write, b.p.Notes = keepOut(b.p.Write, b.p.Deny, b.p.Notes, b.home)
	}},
	{"broad grants", func(b *serverBuild) {
		b.p.Notes = append(b.p.Notes, broadGrants(b.p, b.config())...)
	}},
	{"home protected", func(b *serverBuild) {
		b.p.Protect = protectHome(b.p.Write, b.home)
	}},
	{"configuration kept", func(b *serverBuild) {
		keepConfig(&b.p, b.config())
	}},
}
