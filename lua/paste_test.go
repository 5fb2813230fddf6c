package lua

import (
	"io"
	"strings"
	"testing"
)

// chunks is a reader handing out one chunk per Read, as a terminal does.
type chunks struct{ parts []string }

func (c *chunks) Read(b []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(b, c.parts[0])
	c.parts = c.parts[1:]
	return n, nil
}

func (c *chunks) Close() error { return nil }

func TestPasteFilter(t *testing.T) {
	const nl, tab, more = string(markNewline), string(markTab), string(markMore)
	tests := []struct {
		name  string
		reads []string
		want  string
	}{
		{"typed line", []string{"h", "i", "\r"}, "hi\r"},
		{"bracketed paste", []string{"\x1b[200~a\r\nb\tc\rd\x1b[201~", "\r"}, "a" + nl + "b" + tab + "c" + nl + "d\r"},
		{"paste markers split across reads", []string{"\x1b[2", "00~x\ry\x1b[20", "1~\r"}, "x" + nl + "y\r"},
		{"controls in a paste are dropped", []string{"\x1b[200~a\x03\x7fb\x1b[Ac\x1b[201~"}, "ab[Ac"},
		{"Alt-Enter", []string{"a", "\x1b\r"}, "a" + more + "\r"},
		{"lone Ctrl-J", []string{"a", "\n"}, "a" + more + "\r"},
		{"a line typed ahead", []string{"abc\n"}, "abc\n"},
		{"arrow keys pass", []string{"\x1b[A", "\x1b[B"}, "\x1b[A\x1b[B"},
		{"unbracketed paste", []string{"one\rtwo\rthree\r"}, "one" + nl + "two" + nl + "three\r"},
		{"a tab in an unbracketed paste", []string{"a\r\tb"}, "a" + nl + tab + "b"},
		{"a typed tab completes", []string{"a\t"}, "a\t"},
		{"lone escape at the end", []string{"\x1b"}, "\x1b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newPasteFilter(&chunks{parts: append([]string(nil), tt.reads...)})
			got, _ := io.ReadAll(f)
			if string(got) != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestEscapeCancels: while a question asks for it, an Esc pressed alone
// is a Ctrl-C; Alt-Enter, arrows and an Esc within a read stay what they
// are.
func TestEscapeCancels(t *testing.T) {
	const more = string(markMore)
	for _, tt := range []struct {
		reads []string
		want  string
	}{
		{[]string{"a", "\x1b"}, "a\x03"},
		{[]string{"a", "\x1b\r"}, "a" + more + "\r"},
		{[]string{"\x1b[A"}, "\x1b[A"},
		{[]string{"ab\x1b"}, "ab\x1b"},
	} {
		f := newPasteFilter(&chunks{parts: append([]string(nil), tt.reads...)})
		f.cancelOnEscape(true)
		if got, _ := io.ReadAll(f); string(got) != tt.want {
			t.Errorf("%q: got %q, want %q", tt.reads, got, tt.want)
		}
	}
}

func TestFromAndToEditor(t *testing.T) {
	text, more := fromEditor("a" + string(markNewline) + "b" + string(markTab) + "c" + string(markMore))
	if text != "a\nb\tc" || !more {
		t.Fatalf("fromEditor: %q, %v", text, more)
	}
	if back, _ := fromEditor(toEditor("x\r\ny\tz")); back != "x\ny\tz" {
		t.Fatalf("round trip: %q", back)
	}
	if strings.ContainsAny(string(painter{}.Paint([]rune(toEditor("a\nb")), 0)), string(markNewline)) {
		t.Fatal("the painter shows a mark")
	}
}

// TestLongPasteIsCollapsed: a long paste reaches the editor as a
// placeholder, and the line sent holds the paste again.
func TestLongPasteIsCollapsed(t *testing.T) {
	f := newPasteFilter(&chunks{parts: []string{"see \x1b[200~1\r2\r3\r4\r5\r\x1b[201~", " ok\r"}})
	got, _ := io.ReadAll(f)
	if string(got) != "see [Pasted text #1 +5 lines] ok\r" {
		t.Fatalf("the editor got %q", got)
	}
	text, _ := fromEditor(f.expand(strings.TrimSuffix(string(got), "\r")))
	if text != "see 1\n2\n3\n4\n5\n ok" {
		t.Fatalf("sent %q", text)
	}
}
