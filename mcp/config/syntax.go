package config

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SyntaxError reports pasted text that does not parse: where, what the
// parser found, the line as pasted and what to change.
type SyntaxError struct {
	// Format is "JSON" or "TOML".
	Format string
	// Line and Column locate the error, 1-based; Column counts characters.
	Line, Column int
	// Source is the offending line as pasted (a window of it when long).
	Source string
	// Msg says what the parser found.
	Msg string
	// Hint says what to fix.
	Hint string
}

// Error gives the position and message, the quoted line with a caret under
// the column, then the fix.
func (e *SyntaxError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, line %d, column %d: %s", e.Format, e.Line, e.Column, e.Msg)
	if e.Source != "" || e.Column > 0 {
		src, col := window(e.Source, e.Column)
		num := fmt.Sprint(e.Line)
		fmt.Fprintf(&b, "\n  %s | %s\n  %s | %s^", num, src, strings.Repeat(" ", len(num)), caretPad(src, col))
	}
	if e.Hint != "" {
		b.WriteString("\n")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// window cuts a long line to about 70 characters around col and returns
// the piece and col within it.
func window(line string, col int) (string, int) {
	line = strings.TrimRight(line, " \t\r")
	r := []rune(line)
	const width = 70
	if len(r) <= width {
		return string(r), col
	}
	start := col - width/2
	if start < 0 {
		start = 0
	}
	end := start + width
	if end > len(r) {
		end = len(r)
		start = max(0, end-width)
	}
	piece := string(r[start:end])
	col -= start
	if start > 0 {
		piece = "…" + piece
		col++
	}
	if end < len(r) {
		piece += "…"
	}
	return piece, col
}

// caretPad returns the run of blanks (tabs where src has tabs) that puts a
// caret under character col of src.
func caretPad(src string, col int) string {
	var b strings.Builder
	i := 1
	for _, r := range src {
		if i >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		i++
	}
	for ; i < col; i++ {
		b.WriteByte(' ')
	}
	return b.String()
}

// lineAt returns line n (1-based) of text, without its newline.
func lineAt(text string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return ""
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return text
}

// runeColumn turns a 1-based byte column of line into a character column.
func runeColumn(line string, byteCol int) int {
	if byteCol-1 > len(line) {
		return utf8.RuneCountInString(line) + 1 + (byteCol - 1 - len(line))
	}
	if byteCol < 1 {
		return 1
	}
	return utf8.RuneCountInString(line[:byteCol-1]) + 1
}

// smartQuotes are the typographic quotes web pages and word processors put
// where a config needs straight ones.
const smartQuotes = "“”„‟‘’‚‛«»″"

// jsonHint says what to fix for a JSON error msg at rune ch (0 at the end
// of the text), given the whole line.
func jsonHint(msg string, ch rune, line string) string {
	switch {
	case strings.ContainsRune(smartQuotes, ch) || strings.ContainsAny(line, smartQuotes):
		return "fix: this text has typographic quotes (“ ” ‘ ’), as a web page or word processor shows them; JSON needs straight double quotes (\"). Replace them all, or copy the block from the raw file, and paste again."
	case ch == '\'':
		return "fix: JSON strings take double quotes (\"), not single quotes (')."
	case ch == ':' && strings.Contains(msg, "array"):
		return "fix: a \"name\": value pair sits inside a list [ ]; pairs belong in an object, so write { } instead of the [ ] around them."
	case strings.Contains(msg, "unexpected EOF"):
		return "fix: the text ends before every { and [ is closed; paste the whole block, up to its last closing brace."
	case strings.Contains(msg, "after top-level value"):
		return "fix: more text follows the end of the config: paste one block at a time, and check for a closing brace too many."
	case strings.Contains(msg, "expecting ','"):
		return "fix: a comma is missing between two members or list items, just before this point."
	case strings.Contains(msg, "object name"):
		return "fix: object keys need double quotes, as in \"command\": \"npx\"."
	case strings.Contains(msg, "after object name"):
		return "fix: a colon (:) must follow each key."
	case strings.Contains(msg, "at start of value") || strings.HasPrefix(msg, "invalid literal"):
		return "fix: a value must be a \"quoted string\", a number, true, false, null, an object { } or a list [ ]."
	}
	return "fix: check the JSON at this point."
}

// tomlHint says what to fix for a TOML error msg.
func tomlHint(msg string, line string) string {
	switch {
	case strings.ContainsAny(line, smartQuotes):
		return "fix: this text has typographic quotes (“ ” ‘ ’); TOML needs straight quotes (\" or '). Replace them and paste again."
	case strings.Contains(msg, "already") || strings.Contains(msg, "duplicate") || strings.Contains(msg, "defined") || strings.Contains(msg, "should be a table"):
		return "fix: the same key or table is defined twice (READMEs often show two alternatives one after the other); keep one of them."
	}
	return "fix: check the TOML at this point."
}
