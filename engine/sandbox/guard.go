package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Guard keeps the files through which a command run outside the sandbox
// would run code (a git repository's config and hooks) as they were
// before sandboxed commands ran: Landlock cannot keep them read-only
// while git add, commit and checkout write the files beside them
// (index.lock, HEAD, ORIG_HEAD in the same folder), so a Guard puts back
// what sandboxed commands changed once the last of them ends, and a
// command run outside the sandbox waits for that. The zero value is
// ready; it is safe for concurrent use.
type Guard struct {
	// lift is held shared by each sandboxed command and exclusively by
	// each command outside the sandbox, which so never runs while a
	// sandboxed one may have changed a guarded file.
	lift sync.RWMutex
	mu   sync.Mutex
	kept map[string]*guarded // by path, while sandboxed commands run
}

// guarded is one guarded path as it was before the first of the
// sandboxed commands now running started.
type guarded struct {
	users int
	// parent is the real path of the folder holding the guarded path: a
	// folder put in its place (a link to another repository) is never
	// written through.
	parent string
	files  map[string]keptFile // path → content; a folder's files by path
	dir    bool                // the path is a folder of files (hooks)
	// For the working tree's .git itself (see gitGuarded): what it was, a
	// folder (wasDir), a link (link), a file (in files) or nothing; only
	// what it is is put back, never what a folder holds.
	entry  bool
	wasDir bool
	link   string
}

type keptFile struct {
	data []byte
	mode os.FileMode
}

// maxGuarded is the largest file a Guard keeps: git's config and hooks
// are far smaller; a larger one is left as it is.
const maxGuarded = 1 << 20

// Sandboxed records paths (Policy.Guard) as they are, unless a sandboxed
// command already running did, and returns the function to call once the
// command has ended: it puts back, when no other sandboxed command still
// runs, every guarded file that changed, and returns the paths it put
// back.
func (g *Guard) Sandboxed(paths []string) (done func() []string) {
	g.lift.RLock()
	g.mu.Lock()
	if g.kept == nil {
		g.kept = map[string]*guarded{}
	}
	for _, p := range paths {
		k := g.kept[p]
		if k == nil {
			k = snapshot(p)
			g.kept[p] = k
		}
		k.users++
	}
	g.mu.Unlock()
	return func() []string {
		defer g.lift.RUnlock()
		g.mu.Lock()
		defer g.mu.Unlock()
		var back []string
		for _, p := range paths {
			k := g.kept[p]
			if k.users--; k.users > 0 {
				continue
			}
			delete(g.kept, p)
			back = append(back, k.restore(p)...)
		}
		return back
	}
}

// Unsandboxed waits until no sandboxed command runs (and what they
// changed is put back), and returns the function to call once the
// command outside the sandbox has ended; no sandboxed command starts
// meanwhile.
func (g *Guard) Unsandboxed() (done func()) {
	g.lift.Lock()
	return g.lift.Unlock
}

// snapshot keeps path: a file's content, or the files of a folder.
func snapshot(path string) *guarded {
	k := &guarded{files: map[string]keptFile{}, parent: realPath(filepath.Dir(path)), entry: filepath.Base(path) == ".git"}
	st, err := os.Lstat(path)
	if k.entry {
		switch {
		case err != nil:
		case st.IsDir():
			k.wasDir = true
		case st.Mode()&os.ModeSymlink != 0:
			k.link, _ = os.Readlink(path)
		default:
			if f, ok := readKept(path, st); ok {
				k.files[path] = f
			}
		}
		return k
	}
	if err != nil {
		k.dir = strings.HasSuffix(path, "/hooks")
		return k
	}
	if !st.IsDir() {
		if f, ok := readKept(path, st); ok {
			k.files[path] = f
		}
		return k
	}
	k.dir = true
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			if f, ok := readKept(p, st); ok {
				k.files[p] = f
			}
		}
	}
	return k
}

func readKept(path string, st os.FileInfo) (keptFile, bool) {
	if !st.Mode().IsRegular() || st.Size() > maxGuarded {
		return keptFile{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return keptFile{}, false
	}
	return keptFile{data: b, mode: st.Mode().Perm()}, true
}

// restore puts path back as k kept it and returns the paths it changed.
// A hook git ships as an example (NAME.sample) never runs, so one made
// meanwhile is left.
func (k *guarded) restore(path string) []string {
	if k.entry {
		return k.restoreEntry(path)
	}
	// A link or file put where a folder on the way was (.git/info):
	// removed, so nothing is written through it.
	var back []string
	if d := filepath.Dir(path); filepath.Base(d) == "info" {
		if st, err := os.Lstat(d); err == nil && !st.IsDir() && os.Remove(d) == nil {
			back = append(back, d)
		}
		if _, ok := k.files[path]; ok {
			os.MkdirAll(d, 0o755)
		}
	}
	if realPath(filepath.Dir(path)) != k.parent {
		return back
	}
	now := map[string]bool{}
	if st, err := os.Lstat(path); k.dir && err == nil && !st.IsDir() {
		// A link or file where the folder of hooks was.
		if os.Remove(path) == nil {
			back = append(back, path)
		}
	}
	if k.dir {
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			now[filepath.Join(path, e.Name())] = true
		}
	} else {
		now[path] = true
	}
	for p := range now {
		if _, ok := k.files[p]; ok || strings.HasSuffix(p, ".sample") {
			continue
		}
		st, err := os.Lstat(p)
		if err != nil || st.IsDir() {
			continue
		}
		if os.Remove(p) == nil {
			back = append(back, p)
		}
	}
	for p, f := range k.files {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == f.mode {
			if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, f.data) {
				continue
			}
		}
		os.RemoveAll(p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if os.WriteFile(p, f.data, f.mode) == nil {
			os.Chmod(p, f.mode)
			back = append(back, p)
		}
	}
	slices.Sort(back)
	return back
}

// restoreEntry puts the working tree's .git back as what it was: a
// folder (what it holds is left, but the guarded files in it), a file
// naming the repository's folder (a worktree's), a link, or nothing (a
// repository a command made there is left, without the files guarded).
func (k *guarded) restoreEntry(path string) []string {
	st, err := os.Lstat(path)
	f, wasFile := k.files[path]
	switch {
	case err != nil:
		if !wasFile && k.link == "" {
			return nil
		}
	case k.wasDir && st.IsDir():
		return nil
	case !k.wasDir && !wasFile && k.link == "" && st.IsDir():
		return nil // made by a command: git init
	case k.link != "" && st.Mode()&os.ModeSymlink != 0:
		if target, _ := os.Readlink(path); target == k.link {
			return nil
		}
	case wasFile && st.Mode().IsRegular():
		if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, f.data) {
			return nil
		}
	}
	if err == nil {
		if st.IsDir() {
			os.RemoveAll(path)
		} else {
			os.Remove(path)
		}
	}
	switch {
	case k.wasDir:
		os.MkdirAll(path, 0o755)
	case k.link != "":
		os.Symlink(k.link, path)
	case wasFile:
		os.WriteFile(path, f.data, f.mode)
	}
	return []string{path}
}

// gitGuarded lists what a Guard keeps for commands run in dir: the .git
// entry of the working tree git finds from dir (a folder, or a file
// naming one), then the config, hooks, attributes and commondir of that
// repository (its common folder's too, for a worktree), or of the one a
// command would make there (dir/.git) when there is none.
func gitGuarded(dir string) []string {
	if dir == "" {
		return nil
	}
	entry := GitEntry(dir)
	gitDir := entry
	if entry == "" {
		entry = filepath.Join(dir, ".git")
	} else if st, err := os.Lstat(entry); err == nil && st.Mode().IsRegular() {
		gitDir = gitFileTarget(entry)
	}
	if gitDir == "" {
		gitDir = filepath.Join(dir, ".git")
	}
	dirs := []string{gitDir}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	// The entry first: what it is decides where the rest is.
	out := []string{entry}
	for _, d := range dirs {
		for _, name := range []string{"config", "config.worktree", "commondir", "hooks", filepath.Join("info", "attributes")} {
			out = append(out, filepath.Join(d, name))
		}
	}
	return out
}

// GitEntry returns the .git entry (a folder, or a file naming one) of
// the working tree git finds from dir, or "" when there is none: two
// folders of one repository have the same.
func GitEntry(dir string) string {
	if dir == "" {
		return ""
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dot := filepath.Join(d, ".git")
		if _, err := os.Lstat(dot); err == nil {
			return dot
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// gitFileTarget reads a .git file ("gitdir: PATH", a worktree's or a
// submodule's) and returns the folder it names.
func gitFileTarget(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(file), target)
	}
	return filepath.Clean(target)
}
