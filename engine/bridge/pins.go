package bridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
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

// lineDiff returns a unified-style diff of a and b by lines: common lines
// with two spaces, removed ones with "- ", added ones with "+ ".
func lineDiff(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	// Longest common subsequence over lines; definitions are small.
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i++
			j++
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + x[i] + "\n")
			i++
		default:
			out.WriteString("+ " + y[j] + "\n")
			j++
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
	var b strings.Builder
	b.WriteString("description:\n")
	if oldDesc == newDesc {
		b.WriteString("  (unchanged)\n")
	} else {
		b.WriteString(lineDiff(oldDesc, newDesc))
	}
	b.WriteString("input schema:\n")
	if o, n := prettyJSON(oldSchema), prettyJSON(newSchema); o == n {
		b.WriteString("  (unchanged)\n")
	} else {
		b.WriteString(lineDiff(o, n))
	}
	return b.String()
}
