package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"tai/mcp/pathrule"
)

// Denial is one access the sandbox refused a command, as its output shows.
type Denial struct {
	// Path is the file or folder, absolute.
	Path string
	// Under is the denied folder it lies in, "" for a write outside the
	// folders the policy lets the command write or a read outside those
	// it lets it read.
	Under Path
	// In is the folder it was to be made in, when that folder holds a
	// denied or protected path: nothing can be made directly in it (see
	// carve).
	In string
	// Read says it was refused for reading (and executing): the policy
	// grants neither Path nor a folder holding it.
	Read bool
	// Listing says Path is a folder on the way to the vault's folder,
	// which commands may not list (see carve); its files stay readable.
	Listing bool
}

// deniedLine finds the lines where a program reports a refusal: Landlock
// answers EACCES, which C programs print as "Permission denied" and Go
// programs as "permission denied".
var deniedLine = regexp.MustCompile(`(?i)permission denied`)

// pathWord finds the paths in such a line: absolute, from ~, or quoted.
var pathWord = regexp.MustCompile("(?:^|[\\s'\"`‘’“”(=:])((?:/|~/)[^\\s'\"`‘’“”():,]+)|['‘\"`]([^'’\"`\\s]+)['’\"`]")

// Explain returns the accesses in output (what a failed command printed)
// that the sandbox refused: a path it names on a "Permission denied" line
// that lies in a denied folder, or that the command could only have been
// writing, outside the folders it may write. Landlock says no more than
// EACCES, so each is checked: tai, which the sandbox does not restrict,
// must be allowed the same access, else the refusal was not the
// sandbox's. dir is the command's working folder, for relative paths.
func (p Policy) Explain(output, dir string) []Denial {
	if p.Off {
		return nil
	}
	var out []Denial
	seen := map[string]bool{}
	for _, line := range strings.Split(output, "\n") {
		if !deniedLine.MatchString(line) {
			continue
		}
		// A line that names a path the command may not read is about
		// that path, not about the others it names (the script that
		// printed it, say): those were not being written.
		var reads, writes []Denial
		for _, m := range pathWord.FindAllStringSubmatch(line, -1) {
			word := m[1] + m[2]
			path := expand(word, p.Home, dir)
			if path == "" || seen[path] {
				continue
			}
			if d, ok := p.denial(path); ok {
				seen[path] = true
				if d.Read || d.Under.Path != "" {
					reads = append(reads, d)
				} else {
					writes = append(writes, d)
				}
			}
		}
		out = append(out, reads...)
		if len(reads) == 0 {
			out = append(out, writes...)
		}
	}
	return out
}

// denial says whether the sandbox, not the file's permissions, refused
// path: tai may read (or write) it, and p keeps it from the command.
func (p Policy) denial(path string) (Denial, bool) {
	real := realPath(path)
	granted := everything(p.Read) || slices.ContainsFunc(append(append([]Path(nil), p.Read...), p.Write...), func(g Path) bool {
		return pathrule.Within(path, g.Path) || pathrule.Within(real, realPath(g.Path))
	})
	for _, d := range p.Deny {
		if granted && d.Kind == KindVault && (pathrule.Within(d.Path, path) || pathrule.Within(realPath(d.Path), real)) && !pathrule.Within(path, d.Path) {
			if st, err := os.Stat(path); err == nil && st.IsDir() {
				return Denial{Path: path, Listing: true}, true
			}
		}
	}
	for _, d := range p.Deny {
		if pathrule.Within(path, d.Path) || pathrule.Within(real, realPath(d.Path)) {
			if unix.Access(path, unix.R_OK) == nil || unix.Access(path, unix.W_OK) == nil {
				return Denial{Path: path, Under: d}, true
			}
			return Denial{}, false
		}
	}
	if !granted {
		if unix.Access(path, unix.R_OK) == nil {
			return Denial{Path: path, Read: true}, true
		}
		return Denial{}, false
	}
	writable := slices.ContainsFunc(p.Write, func(w Path) bool { return pathrule.Within(real, realPath(w.Path)) }) &&
		!slices.ContainsFunc(p.Protect, func(w Path) bool { return pathrule.Within(real, realPath(w.Path)) })
	if writable {
		parent := filepath.Dir(real)
		carved := slices.ContainsFunc(append(append([]Path(nil), p.Deny...), p.Protect...), func(d Path) bool {
			return pathrule.Within(d.Path, parent) && d.Path != parent
		})
		if _, err := os.Lstat(path); err == nil || !carved || unix.Access(parent, unix.W_OK) != nil {
			return Denial{}, false
		}
		return Denial{Path: path, In: parent}, true
	}
	err := unix.Access(path, unix.W_OK)
	if errors.Is(err, unix.ENOENT) {
		err = unix.Access(filepath.Dir(path), unix.W_OK)
	}
	return Denial{Path: path}, err == nil
}

// Hint says in a few lines, the fix first, what the sandbox refused and
// how the person can allow it, or "" when ds is empty. how says how, in
// the words of the program that shows it: a line or two, each of which
// Hint marks as the sandbox's, as it marks the line that says what was
// refused.
func (p Policy) Hint(ds []Denial, how string) string {
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(how, "\n") {
		if l != "" {
			b.WriteString("[sandbox] " + l + "\n")
		}
	}
	b.WriteString("[sandbox] tai's sandbox refused this command ")
	for i, d := range ds {
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case d.Listing:
			fmt.Fprintf(&b, "listing %s: commands may not list the folders on the way to the vault's folder (the files in them stay readable by name)", tilde(d.Path, p.Home))
		case d.In != "":
			fmt.Fprintf(&b, "making %s: nothing new can be made directly in %s, which holds folders kept from commands (make it in a folder inside)",
				tilde(d.Path, p.Home), tilde(d.In, p.Home))
		case d.Under.Path != "":
			fmt.Fprintf(&b, "access to %s: commands may not read or write %s", tilde(d.Path, p.Home), denyName(d.Under, p.Home))
		case d.Read:
			fmt.Fprintf(&b, "reading %s: commands may read only %s", tilde(d.Path, p.Home), strings.Join(shown(p.Read, false, p.Home), ", "))
		default:
			fmt.Fprintf(&b, "writing %s: commands may write only %s", tilde(d.Path, p.Home), strings.Join(shown(p.Write, false, p.Home), ", "))
		}
	}
	b.WriteString(".")
	return b.String()
}

// Tilde writes path for the person: from ~ when it is in the home folder.
func (p Policy) Tilde(path string) string { return tilde(path, p.Home) }
