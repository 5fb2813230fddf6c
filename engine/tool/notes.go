package tool

import (
	"fmt"
	"sync"
)

// MaxNotes bounds the different notes one call's line keeps; the rest
// are counted.
const MaxNotes = 20

// Notes keeps the notes of one call for its line (see Note), safe for
// the call's goroutines: a note said again is counted on its first
// line, not repeated, and past MaxNotes different ones the rest are
// counted.
type Notes struct {
	mu      sync.Mutex
	texts   []string
	repeats []int
	at      map[string]int
	dropped int
}

// Add keeps one note.
func (n *Notes) Add(text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if i, ok := n.at[text]; ok {
		n.repeats[i]++
		return
	}
	if len(n.texts) == MaxNotes {
		n.dropped++
		return
	}
	if n.at == nil {
		n.at = map[string]int{}
	}
	n.at[text] = len(n.texts)
	n.texts = append(n.texts, text)
	n.repeats = append(n.repeats, 0)
}

// Lines are the notes kept, in the order first said, each repeat
// counted ("… (20 more times)"), then how many more were left out.
func (n *Notes) Lines() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for i, t := range n.texts {
		switch r := n.repeats[i]; r {
		case 0:
			out = append(out, t)
		case 1:
			out = append(out, t+" (once more)")
		default:
			out = append(out, fmt.Sprintf("%s (%d more times)", t, r))
		}
	}
	if n.dropped > 0 {
		out = append(out, fmt.Sprintf("(%d more notes not shown)", n.dropped))
	}
	return out
}
