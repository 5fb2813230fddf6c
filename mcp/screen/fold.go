package screen

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// BlankRun is the length, in characters, from which a run of blanks is
// shown by Fold as a counted marker: "⟨3000 spaces⟩".
const BlankRun = 16

// Fold returns s as a person must see it before approving it, within
// about maxLines lines and maxBytes bytes, and a note saying what was left
// out ("" when nothing). Nothing can hide at the end: when s has more
// lines than maxLines the first and the last lines are shown with a line
// counting those between, and a line longer than its share of maxBytes
// keeps its start and its end around a count of the bytes between. Every
// run of at least BlankRun blanks (spaces, tabs, and the characters that
// show as nothing or as a blank: see VisibleLine) becomes a marker
// counting them, so padding cannot push what follows out of sight; the
// rest is rendered with Visible. A trailing newline is not a line of its
// own.
func Fold(s string, maxLines, maxBytes int) (shown, note string) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	total := len(lines)
	if maxLines < 2 {
		maxLines = 2
	}
	var keep [][]string
	left := 0
	if total > maxLines {
		tail := maxLines / 3
		if tail < 1 {
			tail = 1
		}
		head := maxLines - tail
		for _, l := range lines[:head] {
			keep = append(keep, foldTokens(l))
		}
		left = total - head - tail
		keep = append(keep, []string{fmt.Sprintf("⋯ %d line%s not shown ⋯", left, plural(left))})
		for _, l := range lines[total-tail:] {
			keep = append(keep, foldTokens(l))
		}
	} else {
		for _, l := range lines {
			keep = append(keep, foldTokens(l))
		}
	}
	size := 0
	for _, t := range keep {
		size += tokensLen(t)
	}
	cut := false
	if size > maxBytes {
		share := maxBytes / len(keep)
		if share < 80 {
			share = 80
		}
		for i, t := range keep {
			if n := tokensLen(t); n > share {
				keep[i] = cutMiddle(t, share)
				cut = true
			}
		}
	}
	var b strings.Builder
	for i, t := range keep {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, tok := range t {
			b.WriteString(tok)
		}
	}
	shown = b.String()
	switch {
	case left > 0:
		note = fmt.Sprintf("… %d more line%s (%d bytes in all)", left, plural(left), len(s))
	case cut:
		note = fmt.Sprintf("… %d bytes in all", len(s))
	}
	return shown, note
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// foldTokens cuts one line into what Fold shows of it: each character as
// Visible renders it, and each run of at least BlankRun blanks as one
// counted marker.
func foldTokens(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		j, runes := i, 0
		var first rune
		same := true
		for j < len(line) {
			r, size := utf8.DecodeRuneInString(line[j:])
			if !blankRune(r, size) {
				break
			}
			if runes == 0 {
				first = r
			} else if r != first {
				same = false
			}
			runes++
			j += size
		}
		if runes >= BlankRun {
			out = append(out, blankMarker(runes, first, same))
			i = j
			continue
		}
		if runes == 0 {
			_, size := utf8.DecodeRuneInString(line[i:])
			j = i + size
		}
		eachVisible(line[i:j], false, func(tok string, _ bool) { out = append(out, tok) })
		i = j
	}
	return out
}

// blankRune reports a character that shows as a blank or as nothing.
func blankRune(r rune, size int) bool {
	if r == utf8.RuneError && size == 1 {
		return false
	}
	return r == ' ' || r == '\t' || r >= 0xa0 && unsafeRune(r, true)
}

func blankMarker(n int, r rune, same bool) string {
	switch {
	case same && r == ' ':
		return fmt.Sprintf("⟨%d spaces⟩", n)
	case same && r == '\t':
		return fmt.Sprintf("⟨%d tabs⟩", n)
	case same:
		return fmt.Sprintf("⟨%d × %s⟩", n, VisibleLine(string(r)))
	}
	return fmt.Sprintf("⟨%d blanks⟩", n)
}

func tokensLen(t []string) int {
	n := 0
	for _, tok := range t {
		n += len(tok)
	}
	return n
}

// cutMiddle keeps the start and the end of a line's tokens, about max
// bytes in all, around a count of the bytes left out between them.
func cutMiddle(t []string, max int) []string {
	half := max / 2
	head, n := 0, 0
	for head < len(t) && n+len(t[head]) <= half {
		n += len(t[head])
		head++
	}
	tail, m := len(t), 0
	for tail > head && m+len(t[tail-1]) <= half {
		m += len(t[tail-1])
		tail--
	}
	dropped := tokensLen(t[head:tail])
	out := append([]string{}, t[:head]...)
	out = append(out, fmt.Sprintf("⟨… %d bytes not shown …⟩", dropped))
	return append(out, t[tail:]...)
}
