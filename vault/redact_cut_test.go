package vault

import (
	"strings"
	"testing"
)

func TestRedactorCutKeepsOnlyItsOwnMarks(t *testing.T) {
	s := newStore(t, nil)
	s.AddRedaction("gh", "ghp-secret-value")
	red, err := s.Redactor()
	if err != nil {
		t.Fatal(err)
	}
	real := red.Redact("0123456789ghp-secret-value tail") // "0123456789[REDACTED:gh] tail"
	for _, tc := range []struct {
		name, text string
		n, want    int
	}{
		{"no mark", "plain text here", 5, 5},
		{"past the end", "short", 50, 5},
		{"real mark, cut inside", real, 15, len("0123456789[REDACTED:gh]")},
		{"real mark, cut inside its prefix", real, 12, len("0123456789[REDACTED:gh]")},
		{"real mark, cut before", real, 10, 10},
		{"real mark, cut after", real, 25, 25},
		{"unknown name", "0123456789[REDACTED:nobody] tail", 15, 15},
		{"fake mark of megabytes", "boom [REDACTED:" + strings.Repeat("A", 3<<20) + "] end", 100, 100},
		{"known name, far too long", "[REDACTED:gh" + strings.Repeat("B", MarkNameMax) + "]", 20, 20},
		{"unclosed", "0123456789[REDACTED:gh", 15, 15},
	} {
		if got := red.Cut(tc.text, tc.n); got != tc.want {
			t.Errorf("%s: Cut(…, %d) = %d, want %d", tc.name, tc.n, got, tc.want)
		}
	}
	var none *Redactor
	if got := none.Cut(real, 15); got != 15 {
		t.Errorf("a nil Redactor keeps a mark it never wrote: Cut = %d", got)
	}
}
