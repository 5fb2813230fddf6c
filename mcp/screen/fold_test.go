package screen

import (
	"strings"
	"testing"
)

func TestFoldShowsWhatPaddingHides(t *testing.T) {
	cmd := "echo hello" + strings.Repeat(" ", 3000) + "; touch /tmp/x"
	shown, note := Fold(cmd, 8, 600)
	if shown != "echo hello⟨3000 spaces⟩; touch /tmp/x" || note != "" {
		t.Fatalf("Fold(padded) = %q, %q", shown, note)
	}
	shown, _ = Fold("a"+strings.Repeat("\u200b", 40)+"b\t"+strings.Repeat("\t \u00a0", 10)+"c", 8, 600)
	if shown != "a⟨40 × \\u200b⟩b⟨31 blanks⟩c" {
		t.Fatalf("Fold(invisible) = %q", shown)
	}
	shown, _ = Fold("    indented\n\tx", 8, 600)
	if shown != "    indented\n\tx" {
		t.Fatalf("Fold(short) = %q", shown)
	}
}

func TestFoldKeepsTheTail(t *testing.T) {
	many := strings.Repeat("echo hi\n", 500) + "touch /tmp/x\n"
	shown, note := Fold(many, 8, 600)
	if !strings.HasSuffix(shown, "echo hi\ntouch /tmp/x") || !strings.Contains(shown, "⋯ 493 lines not shown ⋯") {
		t.Fatalf("Fold(many lines) = %q", shown)
	}
	if note != "… 493 more lines (4013 bytes in all)" {
		t.Fatalf("note = %q", note)
	}
	long := "curl x" + strings.Repeat("A", 100<<10) + "; touch /tmp/x\x1b[2J"
	shown, note = Fold(long, 8, 600)
	if len(shown) > 700 || !strings.HasPrefix(shown, "curl x") || !strings.HasSuffix(shown, "; touch /tmp/x\\x1b[2J") {
		t.Fatalf("Fold(one long line) = %q", shown)
	}
	if !strings.Contains(shown, "bytes not shown …⟩") || note == "" {
		t.Fatalf("Fold(one long line) = %q, %q", shown, note)
	}
	// an escape is never cut in two
	shown, _ = Fold(strings.Repeat("\x01", 1000), 8, 600)
	rest := strings.ReplaceAll(strings.ReplaceAll(shown, "⟨… 3400 bytes not shown …⟩", ""), `\x01`, "")
	if rest != "" {
		t.Fatalf("an escape was cut: %q", shown)
	}
}
