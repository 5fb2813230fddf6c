package screen

import (
	"strings"
	"unicode"
)

// ShowWidth is the columns ShowWords folds at when given no width: with
// the labels the consent screen puts before a word it fits an 80-column
// terminal.
const ShowWidth = 68

// Continued starts each further line of a word ShowWords folds.
const Continued = "↪ "

// ShowWords returns the lines that show words (an argv, names, a URL) to a
// person who must judge exactly what will run: each word on lines of its
// own, shell-quoted (Quote) and rendered with VisibleLine, so line breaks,
// escapes and invisible characters show as \n, \x1b, \u200b. A word wider
// than width columns (ShowWidth when width < 16) goes on over further
// lines that each start with Continued; no escape is split and nothing is
// left out. A first line never starts with Continued: Quote quotes a word
// that would.
func ShowWords(words []string, width int) []string {
	if width < 16 {
		width = ShowWidth
	}
	var out []string
	for _, w := range words {
		var line strings.Builder
		cols := 0
		first := true
		eachVisible(Quote(w), true, func(tok string, escaped bool) {
			n := len(tok)
			if !escaped {
				n = runeWidth([]rune(tok)[0])
			}
			limit := width
			if !first {
				limit = width - 2 // Continued takes two columns
			}
			if cols > 0 && cols+n > limit {
				out = append(out, lineStart(first)+line.String())
				line.Reset()
				cols, first = 0, false
			}
			line.WriteString(tok)
			cols += n
		})
		out = append(out, lineStart(first)+line.String())
	}
	return out
}

func lineStart(first bool) string {
	if first {
		return ""
	}
	return Continued
}

// Quote quotes word as a POSIX shell needs it to read it back as one word:
// unchanged when it is not empty and holds only letters, digits and
// @%+=:,./_- (ASCII), else in single quotes.
func Quote(word string) string {
	if word != "" && strings.IndexFunc(word, func(r rune) bool {
		return !(r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)))
	}) < 0 {
		return word
	}
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// LineBreak reports whether s holds a character that ends a line on a
// terminal or in a shell script: LF, CR, VT, FF, NEL or the Unicode line
// and paragraph separators. No real server needs one in its command line.
func LineBreak(s string) bool {
	return strings.ContainsAny(s, "\n\r\v\f\u0085\u2028\u2029")
}

// runeWidth is the columns a visible rune takes: two for East Asian wide
// characters and most emoji, none for combining marks, else one.
func runeWidth(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
