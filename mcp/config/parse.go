package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/tailscale/hujson"
)

// Formats of a parsed document.
const (
	// FormatJSON is JSON, JSONC or a JSON fragment.
	FormatJSON = "json"
	// FormatTOML is a TOML document.
	FormatTOML = "toml"
	// FormatURL is a bare http(s) URL, parsed as {"url": …}.
	FormatURL = "url"
)

// MaxText is the largest text Parse accepts: a pasted config is a few
// kilobytes; anything past this is not one.
const MaxText = 1 << 20

// MaxNesting is the deepest nesting of brackets and braces Parse reads.
const MaxNesting = 64

// tooDeep returns the offset of the first bracket or brace past
// MaxNesting levels outside strings and comments, or -1.
func tooDeep(text string, toml bool) int {
	depth := 0
	var quote byte
	escaped := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			switch {
			case escaped:
				escaped = false
			case c == '\\' && quote == '"':
				escaped = true
			case c == quote || c == '\n':
				quote = 0
			}
		case c == '"' || (toml && c == '\''):
			quote = c
		case toml && c == '#', !toml && c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '[' || c == '{':
			depth++
			if depth > MaxNesting {
				return i
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return -1
}

// Document is parsed pasted text, handed to the Rules.
type Document struct {
	// Value is the parsed text: an *Object for a JSON object, TOML
	// document or bare URL, or a JSON array, string, number, bool or nil.
	Value any
	// Format is FormatJSON, FormatTOML, FormatURL or FormatCLI.
	Format string
	// Name is Options.Name: the name for a bare entry, or "".
	Name string
	// GOOS is the operating system the entries will run on.
	GOOS string
}

var (
	tomlHeader = regexp.MustCompile(`^\[\[?\s*[A-Za-z0-9_."' -]+\s*\]\]?\s*(#.*)?$`)
	tomlKey    = regexp.MustCompile(`^[A-Za-z0-9_-]+(\s*\.\s*[A-Za-z0-9_-]+)*\s*=|^"[^"]*"\s*=`)
	fenceLine  = regexp.MustCompile("^\\s*(```|~~~)\\s*([A-Za-z0-9_+-]*)\\s*$")
)

// Parse parses pasted JSON, JSONC, a JSON fragment or TOML. The notes say
// what it repaired (a code fence, a "..." elision, non-breaking spaces).
// A text that does not parse gives a *SyntaxError.
func Parse(text string) (*Document, []Note, error) {
	if len(text) > MaxText {
		return nil, nil, fmt.Errorf("the pasted text is %d bytes; a config is at most %d: paste one server block", len(text), MaxText)
	}
	if !utf8.ValidString(text) {
		return nil, nil, errors.New("the pasted text is not valid UTF-8 text: copy it again from the source as text")
	}
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var notes []Note
	text, label := stripFence(text)
	if strings.ContainsRune(text, '\u00a0') {
		// Two bytes each; two blanks keep every offset where it was.
		text = strings.ReplaceAll(text, "\u00a0", "  ")
		notes = append(notes, Note{Level: LevelInfo, Text: "replaced non-breaking spaces (as web pages paste them) with plain spaces"})
	}
	if t, ok := proseAboveJSON(text); ok {
		text = t
		notes = append(notes, Note{Level: LevelInfo, Text: "read the # line(s) above the JSON as prose, not as TOML comments"})
	}
	format, start := sniff(text, label)
	if off := tooDeep(text, format == FormatTOML); off >= 0 {
		// The parsers recurse per level; a pasted config is a few levels
		// deep, and a hostile one must not exhaust the stack.
		line := lineOf(text, off)
		src := lineAt(text, line)
		return nil, notes, &SyntaxError{Format: strings.ToUpper(format), Line: line, Column: runeColumn(src, off-lineStart(text, off)+1), Source: src,
			Msg:  fmt.Sprintf("brackets nested deeper than %d levels", MaxNesting),
			Hint: "fix: an MCP config is a few levels deep; paste the server block itself."}
	}
	switch format {
	case FormatTOML:
		v, err := parseTOML(text)
		if err != nil {
			return nil, notes, err
		}
		return &Document{Value: v, Format: FormatTOML}, notes, nil
	case FormatJSON:
		v, more, err := parseJSON(text, start)
		notes = append(notes, more...)
		if err != nil {
			return nil, notes, err
		}
		return &Document{Value: v, Format: FormatJSON}, notes, nil
	}
	line := lineAt(text, lineOf(text, start))
	return nil, notes, &SyntaxError{
		Format: "config", Line: lineOf(text, start), Column: runeColumn(line, start-lineStart(text, start)+1),
		Source: line, Msg: "this is neither JSON nor TOML",
		Hint: "fix: paste the JSON or TOML block a README shows (it starts with {, with \"mcpServers\": or with [mcp_servers.NAME]), an http(s) URL, or the name of a stored server.",
	}
}

// proseAboveJSON blanks the # lines a README puts above a JSON block
// ("# Add this to your config"), which would otherwise make the text read
// as TOML: when the first significant line starts with # and the first
// line that does not opens JSON ({, [{, or a "key": fragment) rather than
// TOML ([table] or key = value), the # lines become blanks (offsets kept).
func proseAboveJSON(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	hashes := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "#"):
			hashes = true
			continue
		}
		if !hashes || tomlHeader.MatchString(t) || tomlKey.MatchString(t) {
			return text, false
		}
		c, _ := utf8.DecodeRuneInString(t)
		if c != '{' && c != '"' && c != '[' && !strings.ContainsRune(smartQuotes, c) {
			return text, false
		}
		for j := 0; j < i; j++ {
			lines[j] = strings.Repeat(" ", len(lines[j]))
		}
		return strings.Join(lines, "\n"), true
	}
	return text, false
}

// stripFence blanks a Markdown code fence around the text (``` on the
// first and last non-blank lines) and returns its language label.
func stripFence(text string) (string, string) {
	lines := strings.Split(text, "\n")
	first, last := -1, -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || first == last {
		return text, ""
	}
	m := fenceLine.FindStringSubmatch(lines[first])
	if m == nil || !fenceLine.MatchString(lines[last]) || strings.TrimSpace(lines[last]) != m[1] {
		return text, ""
	}
	lines[first] = strings.Repeat(" ", len(lines[first]))
	lines[last] = strings.Repeat(" ", len(lines[last]))
	return strings.Join(lines, "\n"), strings.ToLower(m[2])
}

// sniff says whether text is JSON or TOML (or "" for neither) and the
// offset of its first significant character.
func sniff(text, label string) (string, int) {
	i := 0
	for i < len(text) {
		switch {
		case text[i] == ' ' || text[i] == '\t' || text[i] == '\n':
			i++
		case strings.HasPrefix(text[i:], "//"):
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(text)
			}
		case strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				return FormatJSON, i
			}
		case text[i] == '#':
			return FormatTOML, i
		default:
			goto found
		}
	}
	return "", i
found:
	if label == "toml" {
		return FormatTOML, i
	}
	line := text[i:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	line = strings.TrimSpace(line)
	switch c, _ := utf8.DecodeRuneInString(line); {
	case c == '[':
		if tomlHeader.MatchString(line) && !strings.HasPrefix(line, "[\"") {
			return FormatTOML, i
		}
		return FormatJSON, i
	case c == '{' || c == '"' || strings.ContainsRune(smartQuotes, c):
		return FormatJSON, i
	case tomlKey.MatchString(line):
		return FormatTOML, i
	}
	return "", i
}

func lineOf(text string, off int) int { return 1 + strings.Count(text[:min(off, len(text))], "\n") }

func lineStart(text string, off int) int {
	off = min(off, len(text))
	return strings.LastIndexByte(text[:off], '\n') + 1
}

// parseJSON parses JSONC; a text whose first significant character (at
// start) is not { or [ is a fragment and gets the outer braces it lacks.
func parseJSON(text string, start int) (any, []Note, error) {
	text, notes := dropElisions(text)
	src := text
	prefix := 0
	if start < len(text) && text[start] != '{' && text[start] != '[' {
		src = "{" + text + "\n}"
		prefix = 1
		notes = append(notes, Note{Level: LevelInfo, Text: "read as a fragment: added the outer { } the README left out"})
	}
	v, err := hujson.Parse([]byte(src))
	for tries := 0; err != nil && tries < 8; tries++ {
		// A README's list of "name": {…} pairs (Zed's context_servers shown
		// as [ … ]) is an object with the wrong brackets.
		fixed, line, ok := listAsObject(src, err)
		if !ok {
			break
		}
		notes = append(notes, Note{Level: LevelWarn, Text: fmt.Sprintf("line %d: the list [ ] holds \"name\": value pairs, so it was read as an object { }", line)})
		src = fixed
		v, err = hujson.Parse([]byte(src))
	}
	if err != nil {
		return nil, notes, jsonError(text, err, prefix)
	}
	out, err := fromHuJSON(v, src, prefix)
	return out, notes, err
}

// listAsObject answers a hujson error at a ':' after a list item by
// turning the innermost open [ … ] around it into { … }: the fixed text,
// the line of the [ and whether there was such a list.
func listAsObject(src string, err error) (string, int, bool) {
	m := hujsonPos.FindStringSubmatch(err.Error())
	if m == nil || !strings.Contains(m[3], "after array value") {
		return "", 0, false
	}
	var line, col int
	fmt.Sscan(m[1], &line)
	fmt.Sscan(m[2], &col)
	off := 0
	for i := 1; i < line; i++ {
		j := strings.IndexByte(src[off:], '\n')
		if j < 0 {
			return "", 0, false
		}
		off += j + 1
	}
	off += col - 1
	if off >= len(src) || src[off] != ':' {
		return "", 0, false
	}
	var stack []int
	scanJSON(src, func(i int, c byte) bool {
		if i >= off {
			return false
		}
		switch c {
		case '[', '{':
			stack = append(stack, i)
		case ']', '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		return true
	})
	if len(stack) == 0 || src[stack[len(stack)-1]] != '[' {
		return "", 0, false
	}
	open := stack[len(stack)-1]
	depth, end := 0, -1
	scanJSON(src[open:], func(i int, c byte) bool {
		switch c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				end = open + i
				return false
			}
		}
		return true
	})
	if end < 0 || src[end] != ']' {
		return "", 0, false
	}
	b := []byte(src)
	b[open], b[end] = '{', '}'
	return string(b), lineOf(src, open), true
}

// scanJSON calls fn with each bracket of src outside strings and
// comments, with its offset, until fn returns false.
func scanJSON(src string, fn func(i int, c byte) bool) {
	scanCode(src, false, func(i int) (int, bool) {
		switch c := src[i]; c {
		case '[', ']', '{', '}':
			return i + 1, fn(i, c)
		}
		return i + 1, true
	})
}

// scanCode calls fn with the offset of each byte of src outside strings
// (ended by their closing quote or, when eolEndsString, the end of the
// line too) and // or /* */ comments. fn returns the offset to go on from
// (i+1 for the next byte) and false to stop.
func scanCode(src string, eolEndsString bool, fn func(i int) (next int, more bool)) {
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"' || c == '\n' && eolEndsString:
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return
			}
			i += j + 3
		default:
			next, more := fn(i)
			if !more {
				return
			}
			i = next - 1
		}
	}
}

var hujsonPos = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// jsonError turns a hujson error into a *SyntaxError on the pasted text
// (prefix is the number of bytes added before its first line).
func jsonError(text string, err error, prefix int) error {
	m := hujsonPos.FindStringSubmatch(err.Error())
	if m == nil {
		return &SyntaxError{Format: "JSON", Msg: err.Error(), Hint: jsonHint(err.Error(), 0, "")}
	}
	var line, col int
	fmt.Sscan(m[1], &line)
	fmt.Sscan(m[2], &col)
	if line == 1 {
		col -= prefix
	}
	lines := strings.Count(text, "\n") + 1
	if line > lines { // the closing brace a fragment was given
		line = lines
		col = len(lineAt(text, line)) + 1
	}
	src := lineAt(text, line)
	var ch rune
	if col-1 < len(src) && col >= 1 {
		ch, _ = utf8.DecodeRuneInString(src[col-1:])
	}
	msg := strings.TrimPrefix(m[3], "parsing value: ")
	return &SyntaxError{Format: "JSON", Line: line, Column: runeColumn(src, col), Source: src, Msg: msg, Hint: jsonHint(msg, ch, src)}
}

// dropElisions blanks the "..." or "…" a README puts where the rest of a
// settings file would be, outside strings and comments: the ellipsis and,
// unless a quote follows on its line, the prose after it.
func dropElisions(text string) (string, []Note) {
	if !strings.Contains(text, "...") && !strings.Contains(text, "…") {
		return text, nil
	}
	b := []byte(text)
	var notes []Note
	scanCode(text, true, func(i int) (int, bool) {
		if !(b[i] == '.' && i+2 < len(b) && b[i+1] == '.' && b[i+2] == '.' ||
			b[i] == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2] == 0xa6) {
			return i + 1, true
		}
		end := i + 3
		for end < len(b) && b[end] == '.' {
			end++
		}
		eol := end
		for eol < len(b) && b[eol] != '\n' {
			eol++
		}
		rest := string(b[end:eol])
		if !strings.ContainsAny(rest, "\"{}[]") {
			end = eol
		}
		line := lineOf(text, i)
		what := strings.TrimSpace(string(b[i:end]))
		for k := i; k < end; k++ {
			b[k] = ' '
		}
		notes = append(notes, Note{Level: LevelWarn, Text: fmt.Sprintf("line %d: left out %q, which stands for the rest of a settings file", line, what)})
		return end, true
	})
	return string(b), notes
}

// fromHuJSON converts a hujson tree to Objects and plain values. A key
// given twice in one object is an error naming both lines.
func fromHuJSON(v hujson.Value, src string, prefix int) (any, error) {
	switch x := v.Value.(type) {
	case *hujson.Object:
		o := &Object{Values: make(map[string]any, len(x.Members))}
		first := map[string]int{}
		for _, m := range x.Members {
			k := m.Name.Value.(hujson.Literal).String()
			if at, dup := first[k]; dup {
				line := lineOf(src, m.Name.StartOffset)
				col := m.Name.StartOffset - lineStart(src, m.Name.StartOffset) + 1
				if line == 1 {
					col -= prefix
				}
				text := lineAt(src[prefix:], line)
				return nil, &SyntaxError{Format: "JSON", Line: line, Column: runeColumn(text, col), Source: text,
					Msg:  fmt.Sprintf("key %q appears twice in one object (first on line %d)", k, lineOf(src, at)),
					Hint: "fix: keep one of the two; names and keys must be unique within their object."}
			}
			first[k] = m.Name.StartOffset
			val, err := fromHuJSON(m.Value, src, prefix)
			if err != nil {
				return nil, err
			}
			o.Keys = append(o.Keys, k)
			o.Values[k] = val
		}
		return o, nil
	case *hujson.Array:
		out := make([]any, 0, len(x.Elements))
		for _, e := range x.Elements {
			val, err := fromHuJSON(e, src, prefix)
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	case hujson.Literal:
		switch x.Kind() {
		case 'n':
			return nil, nil
		case 't', 'f':
			return x.Bool(), nil
		case '"':
			return x.String(), nil
		case '0':
			if n := x.Int(); string(x) == fmt.Sprint(n) {
				return n, nil
			}
			return x.Float(), nil
		}
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v.Value)
}

// parseTOML decodes a TOML document, keeping the order of its tables and
// keys.
func parseTOML(text string) (*Object, error) {
	var m map[string]any
	if err := toml.Unmarshal([]byte(text), &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			src := lineAt(text, line)
			msg := strings.TrimPrefix(de.Error(), "toml: ")
			return nil, &SyntaxError{Format: "TOML", Line: line, Column: runeColumn(src, col), Source: src, Msg: msg, Hint: tomlHint(msg, src)}
		}
		return nil, &SyntaxError{Format: "TOML", Msg: err.Error(), Hint: tomlHint(err.Error(), "")}
	}
	return fromMap(m, "", tomlOrder(text)), nil
}

// tomlOrder maps each table path ("" for the root, parts joined by NUL) to
// its keys in source order.
func tomlOrder(text string) map[string][]string {
	order := map[string][]string{}
	add := func(path, key string) {
		for _, k := range order[path] {
			if k == key {
				return
			}
		}
		order[path] = append(order[path], key)
	}
	addKey := func(base string, it unstable.Iterator) string {
		path := base
		for it.Next() {
			k := string(it.Node().Data)
			add(path, k)
			path += "\x00" + k
		}
		return path
	}
	var inline func(path string, n *unstable.Node)
	inline = func(path string, n *unstable.Node) {
		if n.Kind != unstable.InlineTable {
			return
		}
		for it := n.Children(); it.Next(); {
			kv := it.Node()
			if kv.Kind == unstable.KeyValue {
				inline(addKey(path, kv.Key()), kv.Value())
			}
		}
	}
	var p unstable.Parser
	p.Reset([]byte(text))
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = addKey("", e.Key())
		case unstable.ArrayTable:
			table = addKey("", e.Key()) + "\x00[]"
		case unstable.KeyValue:
			inline(addKey(table, e.Key()), e.Value())
		}
	}
	return order
}
