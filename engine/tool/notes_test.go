package tool

import (
	"fmt"
	"sync"
	"testing"
)

// TestNotesCollapseAndBound: notes said from many goroutines keep the
// order first said; a repeat is counted on its line, and past MaxNotes
// different notes the rest are one count.
func TestNotesCollapseAndBound(t *testing.T) {
	var n Notes
	n.Add("first")
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				n.Add("refused")
			}
		}()
	}
	wg.Wait()
	n.Add("first")
	for i := range MaxNotes + 5 {
		n.Add(fmt.Sprintf("note %d", i))
	}
	got := n.Lines()
	if len(got) != MaxNotes+1 || got[0] != "first (once more)" || got[1] != "refused (9999 more times)" || got[2] != "note 0" || got[MaxNotes] != "(7 more notes not shown)" {
		t.Fatalf("lines = %q", got)
	}
	var empty Notes
	if empty.Lines() != nil {
		t.Fatal("no notes gave lines")
	}
}
