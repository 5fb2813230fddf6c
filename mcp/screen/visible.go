package screen

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with everything a terminal could act on instead of
// showing rendered visibly, newlines and tabs kept: C0 controls (ESC, BEL
// and CR among them), DEL and bytes that are not UTF-8 become \xNN; C1
// controls, bidi marks, embeddings, overrides and isolates, the line and
// paragraph separators, zero-width spaces and word joiners, the byte order
// mark and Unicode tag characters (text hidden from the reader but not
// from a model) become \uNNNN or \UNNNNNNNN. The client passes every
// error text and a server's stderr through it, since both come from the server: a
// title change, a screen clear or a clipboard write (OSC 52) then shows as
// text. Text from a model, a tool or a server goes through it before tai
// shows it.
func Visible(s string) string { return visible(s, false) }

// VisibleLine is Visible for one word or value that a person must read
// exactly (an argv word, a name, a URL), shown on one line: line breaks
// and tabs become \n, \r and \t, and every character that shows as nothing
// or as a blank other than the space becomes \uNNNN (\UNNNNNNNN above the
// BMP): zero-width characters, Unicode tag characters, bidi controls,
// every other format character (Cf), the line and paragraph separators,
// odd spaces (no-break, em, ideographic…), variation selectors and
// private-use characters. Two strings that print alike under VisibleLine
// are equal.
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
		if r == utf8.RuneError && size == 1 || unsafeRune(r, oneline) {
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
	eachVisible(s[i:], oneline, func(tok string, _ bool) { b.WriteString(tok) })
	return b.String()
}

// eachVisible calls emit with s cut into what VisibleLine (oneline) or
// Visible shows: one character as itself (escaped false), or the escape
// that stands for one character or byte (escaped true). Folding cuts
// between tokens only, so no escape is split.
func eachVisible(s string, oneline bool, emit func(tok string, escaped bool)) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch {
			case keepASCII(c, oneline):
				emit(s[i:i+1], false)
			case oneline && c == '\n':
				emit(`\n`, true)
			case oneline && c == '\r':
				emit(`\r`, true)
			case oneline && c == '\t':
				emit(`\t`, true)
			default:
				emit(fmt.Sprintf("\\x%02x", c), true)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			emit(fmt.Sprintf("\\x%02x", c), true)
		case unsafeRune(r, oneline) && r > 0xffff:
			emit(fmt.Sprintf("\\U%08x", r), true)
		case unsafeRune(r, oneline):
			emit(fmt.Sprintf("\\u%04x", r), true)
		default:
			emit(s[i:i+size], false)
		}
		i += size
	}
}

// keepASCII reports whether the ASCII byte c is shown as itself: printable
// characters, and newline and tab unless oneline.
func keepASCII(c byte, oneline bool) bool {
	return c >= 0x20 && c < 0x7f || (c == '\n' || c == '\t') && !oneline
}

// unsafeRune reports a non-ASCII character a terminal acts on or that
// reorders or hides what is shown: C1 controls, bidi marks, embeddings,
// overrides and isolates, the Unicode line and paragraph separators,
// zero-width spaces, word joiners, the BOM and tag characters. strict
// adds every character that shows as nothing or as a blank (see
// VisibleLine).
func unsafeRune(r rune, strict bool) bool {
	switch {
	case r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200b, r >= 0x2060 && r <= 0x2064, r == 0xfeff, r >= 0xe0000 && r <= 0xe007f:
		return true // zero-width space, word joiner, invisible operators, BOM, tags
	case !strict:
		return false
	}
	switch {
	case unicode.In(r, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Co, unicode.Variation_Selector):
		return true // format (zero-width, tags, soft hyphen), odd spaces, private use
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x2800:
		return true // combining grapheme joiner, Hangul fillers, blank Braille
	case r == 0xfffc:
		return true // object replacement
	}
	return !unicode.IsGraphic(r) // unassigned, surrogates, noncharacters
}
