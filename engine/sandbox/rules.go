package sandbox

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"tai/mcp/pathrule"
)

// Access rights, by what they let a command do. Refer (moving or linking a
// file from one folder to another) is granted only where both ends may be
// written; elsewhere the kernel answers EXDEV and mv copies instead.
const (
	readRights  landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	writeRights landlock.AccessFSSet = readRights | ll.AccessFSWriteFile | ll.AccessFSRemoveDir |
		ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeSym | ll.AccessFSTruncate | ll.AccessFSRefer
	// fileRights are those that mean something on a file that is not a
	// folder; the kernel refuses a rule on one that names others.
	fileRights landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSWriteFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev | ll.AccessFSResolveUnix
	deviceRights landlock.AccessFSSet = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// devices are what every sandboxed command may use whatever its policy:
// the null devices, randomness, its own terminal (/dev/tty; a shell
// command has none) and shared memory.
func devices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}
}

// ruleBuilder turns a Policy into Landlock rules.
type ruleBuilder struct {
	handled landlock.AccessFSSet // what the ruleset restricts
	deny    []string             // clean absolute paths, each also as its real path
	around  []string             // what the grant being added is carved around
	// unlisted are the denied paths whose names may not even be listed
	// (the vault's folder): the folders on the way to one are not
	// granted the right to list them, which would reach it.
	unlisted []string
	rules    []landlock.Rule
}

// grant appends one rule, with the rights the ruleset restricts.
func (b *ruleBuilder) grant(rights landlock.AccessFSSet, path string) {
	if r := rights & b.handled; r != 0 {
		b.rules = append(b.rules, landlock.PathAccess(r, path).IgnoreIfMissing())
	}
}

// rulesFor returns the rules that grant what p grants and nothing of
// what it denies, for a ruleset that restricts handled.
func rulesFor(p *Policy, handled landlock.AccessFSSet) []landlock.Rule {
	// The terminals' devices are never granted, not even by a grant of
	// everything: a command that opened the person's terminal, where tai
	// runs, could read what is typed to tai, write a line that looks like
	// tai's, or push keystrokes into it. A stdio server has its own
	// terminal already open, and as /dev/tty; a shell command has none.
	b := &ruleBuilder{handled: handled, deny: append(withReal(p.Deny), "/dev/pts")}
	for _, d := range p.Deny {
		if d.Kind == KindVault {
			b.unlisted = append(b.unlisted, withReal([]Path{d})...)
		}
	}
	b.around = b.deny
	for _, r := range p.Read {
		b.add(r.Path, readRights)
	}
	// What is protected is carved out of the folders granted for writing
	// that hold it, not out of those granted inside it.
	b.around = append(withReal(p.Protect), b.deny...)
	for _, w := range p.Write {
		b.add(w.Path, writeRights)
	}
	b.around = b.deny
	for _, d := range devices() {
		b.add(d, deviceRights)
	}
	b.add("/dev/shm", writeRights)
	for _, s := range p.Connect {
		b.add(s, ll.AccessFSResolveUnix|ll.AccessFSReadFile|ll.AccessFSWriteFile)
	}
	return b.rules
}

// withReal returns the paths of ps, each also as its real path when a
// symbolic link leads to it.
func withReal(ps []Path) []string {
	var out []string
	for _, d := range ps {
		out = append(out, d.Path)
		if real, err := filepath.EvalSymlinks(d.Path); err == nil && real != d.Path {
			out = append(out, real)
		}
	}
	return out
}

// add appends the rules that give rights on root and below it, except on
// the denied paths and below them.
//
// Landlock only grants: a rule on a folder reaches everything beneath it,
// and no rule further down can take a right back. So "everything under
// root but the denied paths" cannot be one rule. A root that holds a
// denied path is not granted itself; each of its entries is, but the one
// on the way to a denied path, which is split the same way, and so on
// down to the denied path, whose siblings are the last entries granted
// (granting / but ~/.ssh grants every entry of / but home, every entry of
// /home but the user's, and every entry of the home folder but .ssh).
// The folders on the way get only the right to list them, which reaches
// below them too: the names in a denied folder can be listed, never read,
// and nothing can be made directly in a folder on the way. The folders on
// the way to the vault's folder cannot even be listed, so neither can it
// (ls ~ is refused when the vault lives under the home folder).
//
// Symbolic links among the entries are skipped: a rule on a link grants
// its target, which may be the denied path. What they point to stays
// reachable through its own path where that is granted. Entries made
// after the rules were built are not reached.
func (b *ruleBuilder) add(root string, rights landlock.AccessFSSet) {
	if !filepath.IsAbs(root) {
		return // the kernel would read it from the keeper's folder
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return // missing: nothing to grant
	}
	for _, d := range b.deny {
		if pathrule.Within(root, d) || pathrule.Within(real, d) {
			return
		}
	}
	inside := slices.ContainsFunc(b.around, func(d string) bool { return pathrule.Within(d, real) })
	st, err := os.Stat(real)
	if err != nil {
		return
	}
	if !st.IsDir() {
		b.grant(rights&fileRights, real)
		return
	}
	if !inside {
		b.grant(rights, real)
		return
	}
	b.carve(real, rights)
}

// carve grants rights on each entry of dir but the denied ones, and
// carves again the entries on the way to a denied path (see add).
func (b *ruleBuilder) carve(dir string, rights landlock.AccessFSSet) {
	if !slices.ContainsFunc(b.unlisted, func(u string) bool { return pathrule.Within(u, dir) }) {
		b.grant(rights&ll.AccessFSReadDir, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 || slices.Contains(b.around, p) {
			continue
		}
		switch {
		case slices.ContainsFunc(b.around, func(d string) bool { return pathrule.Within(d, p) }):
			if e.IsDir() {
				b.carve(p, rights)
			}
		case e.IsDir():
			b.grant(rights, p)
		default:
			b.grant(rights&fileRights, p)
		}
	}
}
