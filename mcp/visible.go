package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible returns s with everything a terminal could act on instead of
// showing rendered visibly, newlines and tabs kept: C0 controls (ESC, BEL
// and CR among them), DEL and bytes that are not UTF-8 become \xNN; C1
// controls, bidi marks, embeddings, overrides and isolates and the line and
// paragraph separators become \uNNNN. The client passes every error text
// and a server's stderr through it, since both come from the server: a
// title change, a screen clear or a clipboard write (OSC 52) then shows as
// text. Text from a model, a tool or a server goes through it before tai
// shows it.
func Visible(s string) string { return visible(s, false) }

// VisibleLine is Visible for text shown on one line: newline and tab
// become \x0a and \x09 too.
func VisibleLine(s string) string { return visible(s, true) }

func visible(s string, oneline bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if keepASCII(c, oneline) {
			i++
			continue
		}
		if c < 0x80 {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < 0x80 {
			if keepASCII(c, oneline) {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", c)
		case unsafeRune(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// keepASCII reports whether the ASCII byte c is shown as itself: printable
// characters, and newline and tab unless oneline.
func keepASCII(c byte, oneline bool) bool {
	return c >= 0x20 && c < 0x7f || (c == '\n' || c == '\t') && !oneline
}

// unsafeRune reports a non-ASCII character a terminal acts on or that
// reorders what is shown: C1 controls, bidi marks, embeddings, overrides
// and isolates, and the Unicode line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
