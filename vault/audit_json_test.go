package vault

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestEntryJSONIsJSONMarshal: the hand encoder writes what json.Marshal
// writes, for plain entries and for every kind of byte json escapes.
func TestEntryJSONIsJSONMarshal(t *testing.T) {
	texts := []string{"", "ok", "mcp:1a2b3c4d", "a\"b", `c\d`, "<script>&", "tab\there", "nl\n", "\x00\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "bad \xff\xfe utf-8", "[REDACTED:tok]", "x\u00a0y"}
	times := []time.Time{
		time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 12, 2, 3, 4, 5, 120000000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 6, 1, 12, 0, 0, 5, time.FixedZone("x", 3600)),
		{},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return texts[r.IntN(len(texts))] }
	for i := 0; i < 5000; i++ {
		e := AuditEntry{
			Seq: r.Uint64() >> r.IntN(64), Time: times[r.IntN(len(times))],
			Kind: pick(), Subject: pick(), Digest: pick(), Outcome: pick(),
			Duration: time.Duration(r.Int64() - r.Int64()), Size: r.IntN(1 << 20),
			Session: pick(), Prev: pick(), Hash: pick(), MAC: pick(),
		}
		want, werr := json.Marshal(e)
		got, gerr := appendEntryJSON(nil, e)
		if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("entry %+v:\n got %s (%v)\nwant %s (%v)", e, got, gerr, want, werr)
		}
	}
}

func FuzzEntryJSON(f *testing.F) {
	f.Add(uint64(1), int64(0), "tool", "shell <x>", "ab12", "ok", int64(5), 3, "mcp:1", "", "ff")
	f.Fuzz(func(t *testing.T, seq uint64, nanos int64, kind, subject, digest, outcome string, dur int64, size int, session, prev, hash string) {
		e := AuditEntry{Seq: seq, Time: time.Unix(0, nanos).UTC(), Kind: kind, Subject: subject, Digest: digest,
			Outcome: outcome, Duration: time.Duration(dur), Size: size, Session: session, Prev: prev, Hash: hash}
		want, werr := json.Marshal(e)
		got, gerr := appendEntryJSON(nil, e)
		if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}
