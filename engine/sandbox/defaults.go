package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tai/mcp/pathrule"
)

// DefaultDeny is the list of folders the shell tool's commands may not
// read, as shipped: the keys of ssh and gpg and the credentials of the
// cloud command-line tools. The vault's folder is denied whatever the
// list says.
func DefaultDeny() []string {
	return []string{"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.oci", "~/.kube", "~/.docker"}
}

// systemDirs are the folders every stdio server may read and execute:
// programs, libraries and configuration, and the kernel's views of
// processes and devices (where the kernel lets a process see only its
// own domain's processes' secrets: Landlock refuses ptrace-like access,
// /proc/PID/mem and environ among it, to processes outside the domain).
func systemDirs() []string {
	dirs := []string{"/usr", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/nix/store", "/run/systemd/resolve"}
	if libs, err := filepath.Glob("/lib*"); err == nil {
		dirs = append(dirs, libs...)
	}
	return dirs
}

// ServerSpec is what ForServer builds a stdio server's policy from.
type ServerSpec struct {
	// Name is the server's name, which names its state folder.
	Name string
	// Command and Args are its command line; Cwd its working folder.
	Command string
	Args    []string
	Cwd     string
	// Dir is tai's working folder, where the server runs when the entry
	// names no Cwd: it may read it (npx finds a local install there),
	// unless it is the home folder or holds it.
	Dir string
	// Env is the environment it starts with (its PATH finds the command;
	// HOME, XDG_* and the caches' variables say where things are); nil
	// means tai's.
	Env []string
	// Base is tai's own environment, before the entry's variables: the
	// person's home folder (and so the deny list) and the caches shown as
	// such are found from it; nil means Env. An entry's env may move where
	// the server looks (npm_config_cache=~, HOME=/elsewhere), never what is
	// denied, and a cache it moves is granted as itself and shown by its
	// path, not as its own package cache.
	Base []string
	// Off, Required, NoNetwork, Read and Write are what the entry's
	// sandbox field says: Read and Write grant folders (absolute, from ~,
	// or from Cwd) beyond the default.
	Off, Required, NoNetwork bool
	Read, Write              []string
	// Deny are never granted, even when the entry names them; nil means
	// DefaultDeny. The vault's folder is always denied.
	Deny []string
	// Vault is the vault file.
	Vault string
}

// ForServer returns the policy a stdio server runs under by default: it
// may read and execute the system folders and the runtime it runs with:
// the programs its command leads to (see chain), each with its install,
// the whole of a version manager's or per-user runtime's folder when it
// comes from one (see toolchains; uv's Pythons for uv and uvx), else the
// folder it lives in (see runtimeGrant). It may
// connect to Docker's socket for docker, and it gets a private state
// folder ($XDG_STATE_HOME/tai/servers/<name>), a private temporary folder
// (its TMPDIR) and private package caches for its launcher (npm's for npx
// and node, uv's for uv and uvx, pip's for pip and python) in its state
// folder, which its environment names (see ownCaches); the person's
// shared caches it neither reads nor writes. The folders its entry names are granted: arguments that
// are existing folders and cwd read and write, arguments that are
// existing files read with their project (see scriptRoot), and the
// sandbox field's grants; without a cwd, the folder it runs in, tai's,
// is readable unless it holds the home folder. Nothing else of
// the home folder, never the vault's folder nor what Deny lists: a grant
// inside one is left out, and one holding one is granted without it, each
// with a note. The network stays open unless NoNetwork. Each of these is a
// named rule of serverRules, applied in order.
func ForServer(s ServerSpec) Policy {
	b := newServerBuild(s)
	for _, r := range serverRules {
		r.apply(b)
	}
	return b.p
}

// RunDir is the folder a server runs in: its entry's cwd, resolved from
// tai's working folder dir (from the process's when empty), else dir
// itself; "" when it cannot be made absolute.
func RunDir(cwd, dir, home string) string {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir = Resolve(dir, home, "")
	if cwd == "" {
		return dir
	}
	return Resolve(cwd, home, dir)
}

// Resolve returns the absolute path path names for a program running in
// dir: ~ and ~/… from home, a relative path from dir, clean, with its
// symbolic links resolved as far as it exists (a missing tail kept as
// written). It returns "" for an empty path and for one still relative
// (dir is not absolute): never granted, since the kernel would read it
// from wherever the keeper runs.
func Resolve(path, home, dir string) string {
	if strings.HasPrefix(path, "~") && (home == "" || !filepath.IsAbs(home)) {
		return ""
	}
	p := expand(path, home, dir)
	if !filepath.IsAbs(p) {
		return ""
	}
	var tail []string
	for cur := p; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, tail...)...)
		}
		if cur == "/" {
			return p
		}
		tail = append([]string{filepath.Base(cur)}, tail...)
	}
}

// broadGrants warns of the folders an entry grants that reach far: the
// whole file system, the home folder, or one holding tai's configuration
// (config), which stays read-only.
func broadGrants(p Policy, config string) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range append(append([]Path(nil), p.Write...), p.Read...) {
		if g.Kind != "" || seen[g.Path] {
			continue
		}
		seen[g.Path] = true
		shown := tilde(g.Path, p.Home)
		switch {
		case g.Path == "/":
			out = append(out, "/ is granted: the server reaches every file on this machine you can, but what is denied")
		case p.Home != "" && p.Home != "/" && pathrule.Within(p.Home, g.Path):
			out = append(out, fmt.Sprintf("%s is granted: the server reaches your whole home folder, but what is denied", shown))
		case config != "" && (pathrule.Within(config, g.Path) || pathrule.Within(realPath(config), g.Path)):
			out = append(out, fmt.Sprintf("%s holds tai's configuration (%s): the server can read it, never write it", shown, tilde(config, p.Home)))
		}
	}
	return out
}

// ShellSpec is what ForShell builds the shell tool's policy from.
type ShellSpec struct {
	// Dir is the working folder; empty means tai's.
	Dir string
	// Env is the commands' environment (HOME, TMPDIR, XDG_CACHE_HOME,
	// GOCACHE, GOMODCACHE, GOPATH say where things are); nil means tai's.
	Env []string
	// Deny are never read nor written; nil means DefaultDeny. The vault's
	// folder is always denied.
	Deny []string
	// Write are more folders commands may write.
	Write []string
	// Off, Required and NoNetwork are as in Policy.
	Off, Required, NoNetwork bool
	// Vault is the vault file.
	Vault string
}

// ForShell returns the policy the shell tool's commands run under by
// default: they may read everything but the vault's folder and what Deny
// lists, and write only the working folder, the temporary folders and
// the caches (XDG_CACHE_HOME, where Go's build cache and pip's live, npm's,
// and Go's module cache).
func ForShell(s ShellSpec) Policy {
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	home := HomeOf(env)
	dir := RunDir("", s.Dir, home)
	p := Policy{Off: s.Off, Required: s.Required, NoNetwork: s.NoNetwork, Home: home}
	p.Deny = denied(s.Deny, s.Vault, home)
	p.Read = []Path{{Path: "/", Kind: KindSystem}}
	if dir != "" {
		p.Write = append(p.Write, Path{Path: dir})
	}
	for _, t := range []string{"/tmp", "/var/tmp", lookEnv(env, "TMPDIR")} {
		if t != "" {
			p.Write = append(p.Write, Path{Path: filepath.Clean(t), Kind: KindTemp})
		}
	}
	cache := lookEnv(env, "XDG_CACHE_HOME")
	if cache == "" && home != "" {
		cache = filepath.Join(home, ".cache")
	}
	caches := []string{cache, lookEnv(env, "GOCACHE"), goModCache(env, home), npmCache(env, home)}
	for _, c := range caches {
		if c != "" && filepath.IsAbs(c) {
			p.Write = append(p.Write, Path{Path: filepath.Clean(c), Kind: KindCache, Make: c == cache})
		}
	}
	for _, w := range s.Write {
		if path := Resolve(w, home, dir); path != "" {
			p.Write = append(p.Write, Path{Path: path})
		}
	}
	p.Write, p.Notes = keepOut(p.Write, p.Deny, p.Notes, home)
	p.Protect = protectHome(p.Write, home)
	keepConfig(&p, configDir(env, home))
	p.Guard = gitGuarded(dir)
	return p
}

// keepConfig keeps tai's own configuration folder (init.lua, lua/) from
// being written, since what is written there runs in tai itself, outside
// any sandbox: a folder granted for writing that holds it is granted
// without it (it is granted for reading), and one at or inside it, even through
// a symbolic link (a dotfiles folder, say), is granted for reading only,
// with a note.
func keepConfig(p *Policy, config string) {
	if config == "" {
		return
	}
	cfg := []string{config, realPath(config)}
	var write []Path
	for _, w := range p.Write {
		real := realPath(w.Path)
		if w.Kind == "" && slices.ContainsFunc(cfg, func(c string) bool { return pathrule.Within(c, w.Path) || pathrule.Within(c, real) }) {
			p.Read = append(p.Read, Path{Path: config})
		}
		if slices.ContainsFunc(cfg, func(c string) bool { return pathrule.Within(w.Path, c) || pathrule.Within(real, c) }) {
			p.Read = append(p.Read, Path{Path: w.Path, Kind: w.Kind})
			p.Notes = append(p.Notes, fmt.Sprintf("%s is granted for reading only: tai's own configuration is never written", tilde(w.Path, p.Home)))
			continue
		}
		write = append(write, w)
	}
	p.Write = write
	p.Protect = append(p.Protect, Path{Path: config})
}

// configDir is tai's own configuration folder: $XDG_CONFIG_HOME/tai, else
// ~/.config/tai.
func configDir(env []string, home string) string {
	if v := lookEnv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		return filepath.Join(filepath.Clean(v), "tai")
	}
	if home == "" || home == "/" {
		return ""
	}
	return filepath.Join(home, ".config", "tai")
}

// protectHome returns the home folder's hidden entries (shell start-up
// files, ~/.config, ~/.local, …), where a program left to run later
// would hide, when a folder granted for writing holds the home folder
// (tai run from ~, say): they stay readable but are never written. The
// start-up files are named even when missing, so none can be made.
func protectHome(write []Path, home string) []Path {
	if home == "" || home == "/" || !slices.ContainsFunc(write, func(w Path) bool { return pathrule.Within(home, w.Path) }) {
		return nil
	}
	names := []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".config", ".local"}
	if hidden, err := filepath.Glob(filepath.Join(home, ".*")); err == nil {
		for _, h := range hidden {
			names = append(names, filepath.Base(h))
		}
	}
	slices.Sort(names)
	var out []Path
	for _, n := range slices.Compact(names) {
		out = append(out, Path{Path: filepath.Join(home, n)})
	}
	return out
}

// denied is the deny list: the vault's folder, then list (DefaultDeny
// when nil) from the home folder.
func denied(list []string, vault, home string) []Path {
	var out []Path
	if vault != "" {
		out = append(out, Path{Path: filepath.Dir(expand(vault, home, "/")), Kind: KindVault})
	}
	kind := ""
	if list == nil {
		list, kind = DefaultDeny(), KindDefault
	}
	for _, d := range list {
		if p := expand(d, home, "/"); p != "" && p != "/" {
			out = append(out, Path{Path: p, Kind: kind})
		}
	}
	return out
}

// keepOut leaves out of grants what lies inside a denied path, and notes
// a grant that holds one (it is granted without it, see carve).
func keepOut(grants, deny []Path, notes []string, home string) ([]Path, []string) {
	var out []Path
	realDeny := make([]string, len(deny))
	for i, d := range deny {
		realDeny[i] = realPath(d.Path)
	}
	for _, g := range grants {
		real := realPath(g.Path)
		i := slices.IndexFunc(deny, func(d Path) bool {
			return pathrule.Within(g.Path, d.Path) || pathrule.Within(real, d.Path)
		})
		if i < 0 {
			i = slices.IndexFunc(realDeny, func(d string) bool { return pathrule.Within(real, d) })
		}
		if i >= 0 {
			notes = append(notes, fmt.Sprintf("%s is left out: it is inside %s, which is never granted", tilde(g.Path, home), denyName(deny[i], home)))
			continue
		}
		var without []string
		for j, d := range deny {
			if g.Kind == "" && (pathrule.Within(d.Path, g.Path) || pathrule.Within(realDeny[j], real)) {
				without = append(without, denyName(d, home))
			}
		}
		if len(without) > 0 {
			notes = append(notes, fmt.Sprintf("%s is granted without %s", tilde(g.Path, home), strings.Join(without, ", ")))
		}
		out = append(out, g)
	}
	return out, notes
}

func denyName(d Path, home string) string {
	if d.Kind == KindVault {
		return KindVault
	}
	return tilde(d.Path, home)
}

// projectMarkers name the files and folders that make a folder a
// program's own: a script given as an argument is read with the rest of
// its project.
func projectMarkers() []string {
	return []string{"package.json", "node_modules", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
		".venv", "venv", ".git", "go.mod", "Cargo.toml", "deno.json", "deno.jsonc", "Gemfile", "composer.json", "pom.xml", "build.gradle"}
}

// scriptRoot is what a server that runs the script file may read: the
// outermost node_modules folder holding it (its dependencies are its
// siblings), else the nearest folder above it with a project marker,
// else its own folder; never the home folder nor one above it, /, a
// temporary folder shared with others, nor one holding a path of never
// (tai's configuration, the vault's folder): the file alone then.
func scriptRoot(file, home string, never []string) string {
	if i := strings.Index(file, "/node_modules/"); i >= 0 {
		return file[:i+len("/node_modules")]
	}
	ok := func(dir string) bool {
		return dir != "/" && dir != "." && !pathrule.Within(home, dir) && !slices.Contains([]string{"/tmp", "/var/tmp", "/dev/shm"}, dir) &&
			!slices.ContainsFunc(never, func(n string) bool { return n != "" && pathrule.Within(n, dir) })
	}
	for dir := filepath.Dir(file); ok(dir); dir = filepath.Dir(dir) {
		for _, m := range projectMarkers() {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
	}
	if dir := filepath.Dir(file); ok(dir) {
		return dir
	}
	return file
}

// runtimeRoot is the folder a runtime lives in: the one holding its bin
// folder (~/.nvm/versions/node/v22 for …/v22/bin/node), else its own.
func runtimeRoot(prog string) string {
	dir := filepath.Dir(prog)
	if filepath.Base(dir) == "bin" {
		return filepath.Dir(dir)
	}
	return dir
}

// runtimeGrant is what a server may read of the runtime prog that lives
// outside the system folders: its root (runtimeRoot), unless that is the
// home folder, holds it or is one of its entries (~/bin/tool, ~/.local/bin/uvx,
// ~/tool), when it is the program's own folder, or the program alone
// when that is the home folder. One in the home folder is shown by its
// path, any other as the system's.
func runtimeGrant(prog, home string) Path {
	if home == "" || home == "/" {
		return Path{Path: runtimeRoot(prog), Kind: KindSystem}
	}
	broad := func(d string) bool { return pathrule.Within(home, d) || filepath.Dir(d) == home }
	root := runtimeRoot(prog)
	switch {
	case !pathrule.Within(root, home) && !broad(root):
		return Path{Path: root, Kind: KindSystem}
	case !broad(root):
		return Path{Path: root}
	}
	if dir := filepath.Dir(prog); !pathrule.Within(home, dir) {
		return Path{Path: dir}
	}
	return Path{Path: prog}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// lookPath finds an executable as the keeper will: a name with a slash
// from dir, any other on path.
func lookPath(name, path, dir string) string {
	if name == "" {
		return ""
	}
	if strings.Contains(name, "/") {
		return expand(name, "", dir)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func npmCache(env []string, home string) string {
	for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if v := lookEnv(env, k); v != "" {
			return v
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".npm")
}

func goModCache(env []string, home string) string {
	if v := lookEnv(env, "GOMODCACHE"); v != "" {
		return v
	}
	if gp := filepath.SplitList(lookEnv(env, "GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, "go", "pkg", "mod")
}

// dockerSocket is the socket docker talks to.
func dockerSocket(env []string) string {
	if h, ok := strings.CutPrefix(lookEnv(env, "DOCKER_HOST"), "unix://"); ok {
		return h
	}
	return "/var/run/docker.sock"
}

func stateHome(env []string, home string) string {
	if v := lookEnv(env, "XDG_STATE_HOME"); filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(home, ".local", "state")
}

// HomeOf is the home folder env names (HOME, when absolute), else the
// process's: what ~ means for a program given env.
func HomeOf(env []string) string {
	if h := lookEnv(env, "HOME"); filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	h, _ := os.UserHomeDir()
	return h
}

// lookEnv returns the value of k in env.
func lookEnv(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// fileName makes a server's name one folder name.
func fileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if s := string(b); s != "" && s != "." && s != ".." {
		return s
	}
	return "server"
}
