package bridge

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A server that had a long many-line description granted and then
// changes every line must not make the drift screen's diff quadratic:
// 5,000 lines against 5,000 would fill a 25-million-cell table.
func TestDriftDiffOfLongDescriptionsIsBounded(t *testing.T) {
	var oldDesc, newDesc strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&oldDesc, "old line %d\n", i)
		fmt.Fprintf(&newDesc, "new line %d\n", i)
	}
	var diff string
	got := allocated(func() { diff = driftDiff(oldDesc.String(), nil, newDesc.String(), nil) })
	if limit := uint64(16 << 20); got > limit {
		t.Fatalf("driftDiff of two 5,000-line descriptions allocated %d bytes, want at most %d", got, limit)
	}
	// Every changed line is still shown.
	mustContain(t, "diff", diff, "- old line 0\n", "- old line 4999\n", "+ new line 0\n", "+ new line 4999\n")
}

// Unchanged lines far from any change are folded; the changes and the
// lines around them are shown.
func TestLineDiffFoldsUnchangedRuns(t *testing.T) {
	var a, b []string
	for i := range 20 {
		a = append(a, fmt.Sprint("l", i))
		b = append(b, fmt.Sprint("l", i))
	}
	b[10] = "changed"
	got := lineDiff(strings.Join(a, "\n"), strings.Join(b, "\n"))
	want := "  … 7 unchanged lines\n  l7\n  l8\n  l9\n- l10\n+ changed\n  l11\n  l12\n  l13\n  … 6 unchanged lines\n"
	if got != want {
		t.Fatalf("lineDiff = %q, want %q", got, want)
	}
}
