package github

import (
	"fmt"
	"strconv"
	"strings"

	"tai/mcp"
	"tai/mcp/config"
)

// Passes of the resolver, as Resolution.Pass records them.
const (
	// PassDeterministic reads the repository's files in a fixed order
	// (stdlib/resolve.lua).
	PassDeterministic = "deterministic"
	// PassAgent is the bounded subagent that runs when the deterministic
	// pass finds nothing.
	PassAgent = "subagent"
)

// Resolution is what the resolver made of a repository: one entry, ready
// for the consent screen and a live handshake, the other ways the
// repository offers and what was noticed as notes, and where the entry
// came from.
type Resolution struct {
	// Source is the repository (and folder) resolved.
	Source Source
	// Entry is the server entry; its Source is github:<owner>/<repo>.
	Entry mcp.Entry
	// Notes are the other ways found, what was left out and why, and the
	// secrets to store.
	Notes []config.Note
	// Pass is PassDeterministic or PassAgent.
	Pass string
	// File and Line say where the entry was read (File is a path in the
	// repository); Via says how it was read and why it won.
	File string
	Line int
	Via  string
}

// Origin returns one line naming the pass, the file and the line.
func (r Resolution) Origin() string {
	s := "found by the " + r.Pass + " pass"
	if r.File != "" {
		s += " in " + r.File
		if r.Line > 0 {
			s += " line " + strconv.Itoa(r.Line)
		}
	}
	if r.Via != "" {
		s += " (" + r.Via + ")"
	}
	return s
}

// Server is one of the servers a repository of several offers: its name,
// the URL that resolves it (a folder as github.com/o/r/tree/<ref>/<dir>,
// or a remote server's own URL) and, when the README shows it, its way
// to run.
type Server struct {
	Name string
	URL  string
	Way  string
}

// SeveralError says that a repository offers several distinct servers and
// none of them is the one to use: the person picks one of Servers.
type SeveralError struct {
	Source  Source
	Why     string // what showed it: "a README table links to them", …
	Servers []Server
}

// Error names the repository, why, and each server with the URL that
// resolves it, one to a line.
func (e *SeveralError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s offers %d servers, not one (%s): add one of them by its URL", e.Source, len(e.Servers), e.Why)
	for i, s := range e.Servers {
		fmt.Fprintf(&b, "\n  %d. %s  %s", i+1, s.Name, s.URL)
		if s.Way != "" && s.Way != s.URL {
			fmt.Fprintf(&b, "  (%s)", s.Way)
		}
	}
	return b.String()
}
