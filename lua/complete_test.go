package lua

import (
	"fmt"
	"testing"
)

// TestSpreadKeepsWhatAllShare: the candidates shown of a capped list
// share no more than all of them do (the line editor would complete the
// longer prefix a first 200 share), keep their order, and stop at the
// cap even when names repeat.
func TestSpreadKeepsWhatAllShare(t *testing.T) {
	var cands []string
	for i := range 10000 {
		cands = append(cands, fmt.Sprintf("@s:x://r/%05d", i))
	}
	word := "@s:x://r/0"
	if p := commonPrefix(cands); p != word {
		t.Fatalf("all share %q", p)
	}
	got := spread(cands, len(word), completionsShown)
	if len(got) != completionsShown {
		t.Fatalf("%d shown, want %d", len(got), completionsShown)
	}
	if p := commonPrefix(got); p != word {
		t.Fatalf("the shown candidates share %q, all share only %q", p, word)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("out of order: %q before %q", got[i-1], got[i])
		}
	}
	same := []string{"ab", "ab", "ab", "ac"}
	if got := spread(same, 1, 10); len(got) != 4 {
		t.Fatalf("repeated names: %q", got)
	}
}
