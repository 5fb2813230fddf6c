package secret

import "testing"

// Hide blanks every value of MinLen bytes and more, a whole value before
// a part of it, whatever order they come in, with the one mark.
func TestHide(t *testing.T) {
	text := "rejected token sk-abcdef-123 (Bearer sk-abcdef-123); code abcde; word abc"
	got := Hide(text, "sk-abcdef", "abc", "abcde", "Bearer sk-abcdef-123", "sk-abcdef-123")
	want := "rejected token [REDACTED] ([REDACTED]); code [REDACTED]; word abc"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := Hide("key abc", "abc"); got != "key abc" {
		t.Errorf("a value shorter than MinLen was hidden: %q", got)
	}
}

func TestMark(t *testing.T) {
	if got := Mark("github-token"); got != "[REDACTED:github-token]" {
		t.Errorf("Mark(github-token) = %q", got)
	}
	if got := Mark(""); got != "[REDACTED]" {
		t.Errorf("Mark() = %q", got)
	}
}
