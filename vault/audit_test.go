package vault

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestAuditAppendChains(t *testing.T) {
	s := newStore(t, nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	first, err := s.AuditAppend(AuditEntry{Time: at, Kind: "mcp-call", Subject: "srv/tool", Digest: "d1", Outcome: "ok", Duration: time.Second, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if first.Seq != 1 || first.Prev != "" || len(first.Hash) != 64 || !first.Time.Equal(at) {
		t.Fatalf("first = %+v", first)
	}
	second, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "read"})
	if err != nil {
		t.Fatal(err)
	}
	if second.Seq != 2 || second.Prev != first.Hash || second.Time.IsZero() || second.Hash == first.Hash {
		t.Fatalf("second = %+v", second)
	}
	tail, err := s.AuditTail(0, "")
	if err != nil || len(tail) != 2 || tail[0] != first || tail[1] != second {
		t.Fatalf("AuditTail = %+v, %v\nwant %+v %+v", tail, err, first, second)
	}
}

func TestAuditTail(t *testing.T) {
	s := newStore(t, nil)
	kinds := []string{"tool", "mcp-call", "tool", "secret", "tool", "mcp-call"}
	for i, k := range kinds {
		if _, err := s.AuditAppend(AuditEntry{Kind: k, Subject: uitoa(uint64(i + 1))}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		n    int
		kind string
		want string // subjects, oldest first
	}{
		{0, "", "1 2 3 4 5 6"},
		{2, "", "5 6"},
		{100, "", "1 2 3 4 5 6"},
		{2, "tool", "3 5"},
		{0, "mcp-call", "2 6"},
		{1, "secret", "4"},
		{3, "none", ""},
	}
	for _, tt := range tests {
		got, err := s.AuditTail(tt.n, tt.kind)
		if err != nil {
			t.Fatal(err)
		}
		var subjects []string
		for _, e := range got {
			subjects = append(subjects, e.Subject)
		}
		if s := strings.Join(subjects, " "); s != tt.want {
			t.Errorf("AuditTail(%d, %q) = %q, want %q", tt.n, tt.kind, s, tt.want)
		}
	}
}

func TestAuditRedacts(t *testing.T) {
	s := newStore(t, nil)
	s.AddRedaction("TOKEN", "tok-abcdef")
	e, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "call tok-abcdef", Outcome: "error: bad tok-abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.Subject+e.Outcome, "tok-abcdef") {
		t.Fatalf("entry keeps the secret: %+v", e)
	}
	if n, err := s.AuditVerify(); n != 1 || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
}

// editAudit changes the audit bucket directly, as someone with the file
// could.
func editAudit(t *testing.T, s *Store, fn func(b, meta *bolt.Bucket) error) {
	t.Helper()
	if err := s.update(func(tx *bolt.Tx) error {
		return fn(tx.Bucket(bucketAudit), tx.Bucket(bucketMeta))
	}); err != nil {
		t.Fatal(err)
	}
}

func rewriteEntry(b *bolt.Bucket, seq uint64, fn func(e *AuditEntry)) error {
	var e AuditEntry
	if err := json.Unmarshal(b.Get(seqKey(seq)), &e); err != nil {
		return err
	}
	fn(&e)
	data, _ := json.Marshal(e)
	return b.Put(seqKey(seq), data)
}

func TestAuditVerifyFindsTampering(t *testing.T) {
	tests := []struct {
		name       string
		tamper     func(b, meta *bolt.Bucket) error
		wantN      int
		wantSeq    uint64
		wantReason string
	}{
		{"intact", func(b, meta *bolt.Bucket) error { return nil }, 5, 0, ""},
		{"field edited", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 3, func(e *AuditEntry) { e.Outcome = "ok" })
		}, 2, 3, "do not match its hash"},
		{"size edited", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 2, func(e *AuditEntry) { e.Size++ })
		}, 1, 2, "do not match its hash"},
		{"edited and rehashed", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 2, func(e *AuditEntry) { e.Subject = "other"; e.Hash = auditHash(*e) })
		}, 2, 3, "prev does not match"},
		{"middle entry deleted", func(b, meta *bolt.Bucket) error { return b.Delete(seqKey(3)) }, 2, 3, "missing"},
		{"first entry deleted", func(b, meta *bolt.Bucket) error { return b.Delete(seqKey(1)) }, 0, 1, "missing"},
		{"last entry deleted", func(b, meta *bolt.Bucket) error { return b.Delete(seqKey(5)) }, 4, 5, "cut off the end"},
		{"entries swapped", func(b, meta *bolt.Bucket) error {
			two, four := append([]byte(nil), b.Get(seqKey(2))...), append([]byte(nil), b.Get(seqKey(4))...)
			if err := b.Put(seqKey(2), four); err != nil {
				return err
			}
			return b.Put(seqKey(4), two)
		}, 1, 2, "entries moved"},
		{"entries renumbered", func(b, meta *bolt.Bucket) error {
			// Swap 2 and 3 and fix their Seq and hashes: the chain still breaks.
			two, three := AuditEntry{}, AuditEntry{}
			json.Unmarshal(b.Get(seqKey(2)), &two)
			json.Unmarshal(b.Get(seqKey(3)), &three)
			two.Seq, three.Seq = 3, 2
			two.Hash, three.Hash = auditHash(two), auditHash(three)
			d2, _ := json.Marshal(two)
			d3, _ := json.Marshal(three)
			b.Put(seqKey(3), d2)
			return b.Put(seqKey(2), d3)
		}, 1, 2, "prev does not match"},
		{"head removed", func(b, meta *bolt.Bucket) error { return meta.Delete(auditHeadKey) }, 5, 5, "head of the trail is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, nil)
			for i := range 5 {
				if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "t" + uitoa(uint64(i)), Outcome: "error"}); err != nil {
					t.Fatal(err)
				}
			}
			editAudit(t, s, tt.tamper)
			n, err := s.AuditVerify()
			if n != tt.wantN {
				t.Errorf("AuditVerify count = %d, want %d", n, tt.wantN)
			}
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("AuditVerify = %v, want no break", err)
				}
				return
			}
			var brk *AuditBreak
			if !errors.As(err, &brk) {
				t.Fatalf("AuditVerify = %v, want *AuditBreak", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "vault: audit chain broken at entry "+uitoa(tt.wantSeq)+": ") {
				t.Errorf("error message %q does not name entry %d", msg, tt.wantSeq)
			}
			if brk.Seq != tt.wantSeq || !strings.Contains(brk.Reason, tt.wantReason) {
				t.Fatalf("break = %d %q, want %d and a reason containing %q", brk.Seq, brk.Reason, tt.wantSeq, tt.wantReason)
			}
		})
	}
}

func BenchmarkAuditAppend(b *testing.B) {
	s := newStore(b, nil)
	for b.Loop() {
		if _, err := s.AuditAppend(AuditEntry{Kind: "mcp-call", Subject: "srv/tool", Digest: "abc", Outcome: "ok", Size: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuditVerify10k(b *testing.B) {
	s := newStore(b, nil)
	if err := s.update(func(tx *bolt.Tx) error {
		for i := range 10_000 {
			if _, err := auditAppendTx(tx, AuditEntry{Time: time.Now().UTC(), Kind: "tool", Subject: "t" + uitoa(uint64(i)), Outcome: "ok"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if n, err := s.AuditVerify(); n != 10_000 || err != nil {
			b.Fatalf("AuditVerify = %d, %v", n, err)
		}
	}
}

func TestAuditVerifyFindsReplacedTail(t *testing.T) {
	s := newStore(t, nil)
	for range 3 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool"}); err != nil {
			t.Fatal(err)
		}
	}
	// Rewrite the last entry with a consistent hash: only the head tells.
	editAudit(t, s, func(b, meta *bolt.Bucket) error {
		return rewriteEntry(b, 3, func(e *AuditEntry) { e.Outcome = "denied"; e.Hash = auditHash(*e) })
	})
	n, err := s.AuditVerify()
	var brk *AuditBreak
	if n != 3 || !errors.As(err, &brk) || brk.Seq != 3 || !strings.Contains(brk.Reason, "recorded head") {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
}
