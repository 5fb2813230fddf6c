package bridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// toolHash is the pin of one tool definition: the SHA-256 of its name,
// description and input schema (in canonical JSON, so key order and
// spacing do not count).
func toolHash(name, description string, schema json.RawMessage) string {
	b, _ := json.Marshal([]string{name, description, canonicalJSON(schema)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonicalJSON returns raw with object keys sorted and no spacing; text
// that is not JSON is returned as it is; an absent schema is "".
func canonicalJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimRight(out.String(), "\n")
}

// prettyJSON is canonicalJSON indented, one member a line, for diffs.
func prettyJSON(raw json.RawMessage) string {
	c := canonicalJSON(raw)
	if c == "" {
		return ""
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(c), "", "  "); err != nil {
		return c
	}
	return out.String()
}

// Bounds of lineDiff: the longest-common-subsequence table it fills (the
// lines that differ, old times new) and the unchanged lines it shows
// around each change.
const (
	maxDiffCells = 1 << 20
	diffContext  = 3
)

// lineDiff returns a unified-style diff of a and b by lines: common lines
// with two spaces, removed ones with "- ", added ones with "+ ". Every
// changed line is shown; a run of unchanged lines longer than the context
// around the changes is folded into one "… n unchanged lines" line. Time
// and memory stay proportional to the text (plus a table of at most
// maxDiffCells): past that the lines that differ are shown as all removed,
// then all added.
func lineDiff(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range x[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, middleDiff(x[pre:len(x)-suf], y[pre:len(y)-suf])...)
	for _, l := range x[len(x)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return renderDiff(ops)
}

// diffOp is one line of a diff: kind ' ' (unchanged), '-' or '+'.
type diffOp struct {
	kind byte
	line string
}

// middleDiff diffs x and y, which differ at both ends, by their longest
// common subsequence when the table fits in maxDiffCells.
func middleDiff(x, y []string) []diffOp {
	ops := make([]diffOp, 0, len(x)+len(y))
	if len(x) == 0 || len(y) == 0 || (len(x)+1)*(len(y)+1) > maxDiffCells {
		for _, l := range x {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range y {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	w := len(y) + 1
	lcs := make([]int32, (len(x)+1)*w)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, diffOp{' ', x[i]})
			i++
			j++
		case i < len(x) && (j == len(y) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, diffOp{'-', x[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', y[j]})
			j++
		}
	}
	return ops
}

// renderDiff writes ops one a line, folding unchanged runs that are more
// than diffContext lines away from any change.
func renderDiff(ops []diffOp) string {
	var out strings.Builder
	for k := 0; k < len(ops); {
		if ops[k].kind != ' ' {
			out.WriteString(string(ops[k].kind) + " " + ops[k].line + "\n")
			k++
			continue
		}
		end := k
		for end < len(ops) && ops[end].kind == ' ' {
			end++
		}
		head, tail := diffContext, diffContext
		if k == 0 {
			head = 0
		}
		if end == len(ops) {
			tail = 0
		}
		if end-k > head+tail+1 {
			for _, op := range ops[k : k+head] {
				out.WriteString("  " + op.line + "\n")
			}
			fmt.Fprintf(&out, "  … %d unchanged lines\n", end-k-head-tail)
			k = end - tail
		}
		for ; k < end; k++ {
			out.WriteString("  " + ops[k].line + "\n")
		}
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// driftDiff describes how a tool's new definition differs from the pin:
// a diff of the description and one of the schema (or the whole new
// definition for a tool that was never granted).
func driftDiff(oldDesc string, oldSchema json.RawMessage, newDesc string, newSchema json.RawMessage) string {
	return definitionDiff(oldDesc, oldSchema, newDesc, newSchema, "input schema")
}

// definitionDiff is driftDiff with the schema's part called schemaLabel
// (a prompt's title and arguments).
func definitionDiff(oldDesc string, oldSchema json.RawMessage, newDesc string, newSchema json.RawMessage, schemaLabel string) string {
	var b strings.Builder
	b.WriteString("description:\n")
	if oldDesc == newDesc {
		b.WriteString("  (unchanged)\n")
	} else {
		b.WriteString(lineDiff(oldDesc, newDesc))
		if oldDesc != "" && newDesc != "" {
			b.WriteString(changeHint(oldDesc, newDesc))
		}
	}
	b.WriteString(schemaLabel + ":\n")
	if o, n := prettyJSON(oldSchema), prettyJSON(newSchema); o == n {
		b.WriteString("  (unchanged)\n")
	} else {
		b.WriteString(lineDiff(o, n))
		if o != "" && n != "" {
			b.WriteString(changeHint(o, n))
		}
	}
	return b.String()
}

// maxHint bounds each side of a changeHint, in bytes.
const maxHint = 80

// changeHint names the stretch from the first to the last byte where a
// and b differ, each side quoted in ASCII: a change no terminal shows (a
// letter composed another way, a look-alike letter, an invisible
// character) still shows here, though both lines of the diff look alike.
func changeHint(a, b string) string {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for pre > 0 && (pre < len(a) && !utf8.RuneStart(a[pre]) || pre < len(b) && !utf8.RuneStart(b[pre])) {
		pre--
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for suf > 0 && (!utf8.RuneStart(a[len(a)-suf]) || !utf8.RuneStart(b[len(b)-suf])) {
		suf--
	}
	return fmt.Sprintf("  changed at byte %d: %s became %s\n", pre, quoteClip(a[pre:len(a)-suf]), quoteClip(b[pre:len(b)-suf]))
}

// quoteClip quotes s in ASCII, cut to maxHint bytes on a character
// boundary, saying how much was cut.
func quoteClip(s string) string {
	if len(s) <= maxHint {
		return strconv.QuoteToASCII(s)
	}
	cut := s[:maxHint]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%s… (%d bytes more)", strconv.QuoteToASCII(cut), len(s)-len(cut))
}
