package stdlib_test

import (
	"strings"
	"testing"
)

// TestStylerColoursCodeAndHeadings streams Markdown in awkward pieces:
// fences and headings are found however the deltas split them, nothing
// else changes, and every coloured line is reset before its newline.
func TestStylerColoursCodeAndHeadings(t *testing.T) {
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"plain text is untouched", []string{"plain ## not\n", "last"}, "plain ## not\nlast"},
		{"inline code", []string{"use `go ", "test` or `x\n", "`y` end"}, "use <36>`go test`<0> or <36>`x<0>\n<36>`y`<0> end"},
		{"a fence split over deltas", []string{"x\n``", "`go\nfunc f", "() {}\n``", "`\n"},
			"x\n<2>```go<0>\n<36>func f() {}<0>\n<2>```<0>\n"},
		{"headings", []string{"#", "#", " H\n", "#tag\n"}, "<1>## H<0>\n#tag\n"},
		{"an open block ends with the answer", []string{"```\ncode"}, "<2>```<0>\n<36>code<0>"},
		{"bold split over deltas", []string{"a *", "*bold*", "* b\n", "2 * 3 *\n"}, "a <1>bold<22> b\n2 * 3 *\n"},
		{"bold left open ends with the line", []string{"x **y\nz"}, "x <1>y<0>\nz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parts []string
			for _, p := range tt.parts {
				parts = append(parts, luaQuote(p))
			}
			got := run(t, `
				local st = require("chat").styler()
				local out = {}
				for _, p in ipairs({`+strings.Join(parts, ", ")+`}) do out[#out + 1] = st.push(p) end
				out[#out + 1] = st.flush()
				return (table.concat(out):gsub("\27%[([%d;]+)m", "<%1>"))`)
			if got[0] != tt.want {
				t.Fatalf("got %q, want %q", got[0], tt.want)
			}
		})
	}
}
