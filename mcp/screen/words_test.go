package screen

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShowWords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		words []string
		width int
		want  []string
	}{
		{"plain words one a line", []string{"npx", "-y", "@scope/pkg@1.2"}, 0, []string{"npx", "-y", "@scope/pkg@1.2"}},
		{"blank and empty words quoted", []string{"a b", "", "it's"}, 0, []string{"'a b'", "''", `'it'\''s'`}},
		{"line breaks visible", []string{"-c", "id\n\nrun: npx"}, 0, []string{"-c", `'id\n\nrun: npx'`}},
		{"invisible characters visible", []string{"a\u200bb", "\u202eabc"}, 0, []string{`'a\u200bb'`, `'\u202eabc'`}},
		{"a word starting like a continuation is quoted", []string{"↪x"}, 0, []string{"'↪x'"}},
		{"folded at width", []string{strings.Repeat("a", 40)}, 16, []string{
			strings.Repeat("a", 16), "↪ " + strings.Repeat("a", 14), "↪ " + strings.Repeat("a", 10)}},
		{"an escape is never split", []string{"abcdefghijklmn\x1b"}, 16, []string{"'abcdefghijklmn", `↪ \x1b'`}},
		{"wide characters count two", []string{strings.Repeat("日", 9)}, 16, []string{"'日日日日日日日", "↪ 日日'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ShowWords(tc.words, tc.width)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("ShowWords(%q, %d) =\n%s\nwant\n%s", tc.words, tc.width, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestShowWordsLosesNothing: a 5000-character word with every kind of
// hostile character comes back whole, on lines no wider than asked, and
// unfolding the lines gives VisibleLine of the quoted word.
func TestShowWordsLosesNothing(t *testing.T) {
	word := strings.Repeat("x\x1b[2J\u200b\n\u202e日\xff", 500)
	lines := ShowWords([]string{word}, 40)
	var joined strings.Builder
	for i, l := range lines {
		if i > 0 {
			if !strings.HasPrefix(l, Continued) {
				t.Fatalf("line %d does not start with %q: %q", i, Continued, l)
			}
			l = strings.TrimPrefix(l, Continued)
		}
		if n := utf8.RuneCountInString(l); n > 40 {
			t.Errorf("line %d is %d characters wide: %q", i, n, l)
		}
		if strings.ContainsAny(l, "\x1b\n\u200b\u202e") {
			t.Errorf("line %d holds a raw invisible character: %q", i, l)
		}
		joined.WriteString(l)
	}
	if want := VisibleLine(Quote(word)); joined.String() != want {
		t.Errorf("folded lines do not add up to the word: %d bytes, want %d", joined.Len(), len(want))
	}
}

func TestLineBreak(t *testing.T) {
	for in, want := range map[string]bool{
		"plain": false, "a\tb": false, `a\nb`: false,
		"a\nb": true, "a\rb": true, "a\vb": true, "a\fb": true, "a\u0085b": true, "a\u2028b": true, "a\u2029b": true,
	} {
		if got := LineBreak(in); got != want {
			t.Errorf("LineBreak(%q) = %v, want %v", in, got, want)
		}
	}
}
