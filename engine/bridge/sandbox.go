package bridge

import (
	"strings"
	"unicode/utf8"

	"tai/mcp"
)

// sandboxLine says in one line what the sandbox lets e's server do.
func sandboxLine(e mcp.Entry) string {
	s := e.Sandbox
	if s.IsOff() {
		return "off: it runs with all of your rights"
	}
	reads := append([]string{"system", "caches"}, shownPaths(s.Grants(), "read")...)
	writes := append([]string{"its own state", "a private temp folder"}, shownPaths(s.Grants(), "write")...)
	net := "open"
	if s != nil && s.NoNetwork {
		net = "closed"
	}
	line := "reads: " + strings.Join(reads, ", ") + "; writes: " + strings.Join(writes, ", ") + "; network: " + net
	if s.IsRequired() {
		line += " (required)"
	}
	return line
}

func shownPaths(gs []mcp.Grant, mode string) []string {
	var out []string
	for _, g := range gs {
		if g.Mode == mode {
			out = append(out, mcp.VisibleLine(g.Path))
		}
	}
	return out
}

// wrapLine breaks text at spaces into lines of at most width characters
// (a word longer than that keeps a line of its own).
func wrapLine(text string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Split(text, " ") {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			out = append(out, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(out, line)
}
