package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible returns s with everything a terminal could act on instead of
// showing rendered visibly, newlines and tabs kept: C0 controls (ESC, BEL
// and CR among them), DEL and bytes that are not UTF-8 become \xNN; C1
// controls, bidi overrides and isolates and the line and paragraph
// separators become \uNNNN. The client passes every error text and a
// server's stderr through it, since both come from the server: a title
// change, a screen clear or a clipboard write (OSC 52) then shows as text.
func Visible(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case unsafeRune(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether a terminal may act on r rather than show it.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	}
	return false
}
