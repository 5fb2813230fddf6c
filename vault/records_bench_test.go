package vault

import (
	"strings"
	"testing"
)

// BenchmarkRecordPut measures a 10 KB put into a vault already holding
// 5000 records, so the retention policy's scan of the stored sizes is
// part of every put.
func BenchmarkRecordPut(b *testing.B) {
	s := newStore(b, nil)
	text := strings.Repeat("x", 10_000)
	for range 5000 {
		if _, err := s.RecordPut(text, nil); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := s.RecordPut(text, nil); err != nil {
			b.Fatal(err)
		}
	}
}
