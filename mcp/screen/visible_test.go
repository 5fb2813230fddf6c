package screen

import "testing"

// hostile is what a server writes to take over a terminal: a window
// title, a screen clear, a clipboard write (OSC 52), a bidi override.
const hostile = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;aGVsbG8=\x07\u202eevil\r"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented":       "plain text\n\tindented",
		hostile:                        `\x1b]0;pwned\x07\x1b[2J\x1b]52;c;aGVsbG8=\x07\u202eevil\x0d`,
		"\u009b31m C1 and \xff bad":    `\u009b31m C1 and \xff bad`,
		"del\x7f é ok":                 `del\x7f é ok`,
		"hidden\u200b\U000E0041\ufeff": `hidden\u200b\U000e0041\ufeff`,
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVisibleLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "plain", "plain"},
		{"accents and CJK stay", "é 日本 ü", "é 日本 ü"},
		{"line breaks and tab", "a\n\tb\r", `a\n\tb\r`},
		{"vertical tab, form feed, NEL", "a\vb\fc\u0085d", `a\x0bb\x0cc\u0085d`},
		{"ANSI clear screen and title", "\x1b[2J\x1b]0;title\a", `\x1b[2J\x1b]0;title\x07`},
		{"DEL and invalid UTF-8", "a\x7f\xff\xc3", `a\x7f\xff\xc3`},
		{"C1 CSI", "\u009b31m", `\u009b31m`},
		{"zero-width space, joiners, word joiner", "a\u200bb\u200cc\u200dd\u2060e", `a\u200bb\u200cc\u200dd\u2060e`},
		{"byte order mark, soft hyphen", "\ufeffa\u00adb", `\ufeffa\u00adb`},
		{"bidi embeddings and overrides", "\u202a\u202b\u202c\u202d\u202e", `\u202a\u202b\u202c\u202d\u202e`},
		{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"tag characters", "x\U000E0001\U000E0041\U000E007F", `x\U000e0001\U000e0041\U000e007f`},
		{"odd spaces", "a\u00a0b\u2003c\u3000d\u200ae\u202ff", `a\u00a0b\u2003c\u3000d\u200ae\u202ff`},
		{"invisible letters", "\u3164\u115f\u2800\u034f", `\u3164\u115f\u2800\u034f`},
		{"variation selector, private use", "a\ufe0fb\ue000", `a\ufe0fb\ue000`},
		{"unassigned and noncharacter", "\U0010fffe\ufdd0", `\U0010fffe\ufdd0`},
		{"backslash text stays", `a\nb`, `a\nb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VisibleLine(tc.in); got != tc.want {
				t.Errorf("VisibleLine(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestVisibleKeepsEmoji: the multi-line form keeps what model text uses
// (joined emoji) while the strict one shows the joiner.
func TestVisibleKeepsEmoji(t *testing.T) {
	family := "👨\u200d👩\u200d👧"
	if got := Visible(family); got != family {
		t.Errorf("Visible(%q) = %q", family, got)
	}
	if got := VisibleLine(family); got != `👨\u200d👩\u200d👧` {
		t.Errorf("VisibleLine(%q) = %q", family, got)
	}
}
