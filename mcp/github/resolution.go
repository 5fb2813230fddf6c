package github

import (
	"strconv"

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
