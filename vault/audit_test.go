package vault

import (
	"encoding/json"
	"errors"
	"runtime"
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

// TestAuditAppendWithLooksAgainAfterAChange: a Redactor handed to
// AuditAppendWith redacts the entry only while no secret changed since it
// was made; a secret another process set after it is redacted too.
func TestAuditAppendWithLooksAgainAfterAChange(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("old", "old-secret-123", nil); err != nil {
		t.Fatal(err)
	}
	red, err := s.Redactor()
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.AuditAppendWith(red, AuditEntry{Kind: "tool", Subject: "call old-secret-123", Outcome: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.Subject, "old-secret-123") {
		t.Fatalf("a current Redactor did not redact: %+v", e)
	}
	other, err := Open(s.Path(), testOptions("", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.SecretSet("new", "new-secret-456", nil); err != nil {
		t.Fatal(err)
	}
	other.Close()
	e, err = s.AuditAppendWith(red, AuditEntry{Kind: "tool", Subject: "call new-secret-456 old-secret-123", Outcome: "error: new-secret-456"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.Subject+e.Outcome, "secret-") {
		t.Fatalf("a Redactor from before the change redacted the entry: %+v", e)
	}
	tail, err := s.AuditTail(1, "")
	if err != nil || len(tail) != 1 || strings.Contains(tail[0].Subject+tail[0].Outcome, "secret-") {
		t.Fatalf("stored: %+v, %v", tail, err)
	}
	if _, err := s.AuditAppendWith(&Redactor{}, AuditEntry{Kind: "tool", Subject: "x new-secret-456"}); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.AuditTail(1, ""); len(tail) != 1 || strings.Contains(tail[0].Subject, "new-secret-456") {
		t.Fatalf("a Redactor not made by the Store was trusted: %+v", tail)
	}
}

// editAudit changes the audit bucket directly, as someone with the file
// could.
func editAudit(t *testing.T, s *Store, fn func(b, meta *bolt.Bucket) error) {
	t.Helper()
	// The entries are edited where they rest on disk: in the vault file,
	// once the journal is folded into it.
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
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
		{"session added", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 3, func(e *AuditEntry) { e.Session = "mcp:forged00" })
		}, 2, 3, "do not match its hash"},
		{"session edited", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 4, func(e *AuditEntry) { e.Session = "mcp:forged00" })
		}, 3, 4, "do not match its hash"},
		{"session removed", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 4, func(e *AuditEntry) { e.Session = "" })
		}, 3, 4, "do not match its hash"},
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
				e := AuditEntry{Kind: "tool", Subject: "t" + uitoa(uint64(i)), Outcome: "error"}
				if i == 3 {
					e.Session = "mcp:0123abcd" // entry 4 came from a served session
				}
				if _, err := s.AuditAppend(e); err != nil {
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
	cpu := cpuTime()
	for b.Loop() {
		if _, err := s.AuditAppend(AuditEntry{Kind: "mcp-call", Subject: "srv/tool", Digest: "abc", Outcome: "ok", Size: 100}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, cpu)
}

// BenchmarkAuditAppend16 is BenchmarkAuditAppend from 16 goroutines at
// once: they share the journal's group flushes.
func BenchmarkAuditAppend16(b *testing.B) {
	s := newStore(b, nil)
	b.SetParallelism(16 / max(1, runtime.GOMAXPROCS(0)))
	cpu := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.AuditAppend(AuditEntry{Kind: "mcp-call", Subject: "srv/tool", Digest: "abc", Outcome: "ok", Size: 100}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, cpu)
}

func BenchmarkAuditVerify10k(b *testing.B) {
	s := newStore(b, nil)
	if err := s.update(func(tx *bolt.Tx) error {
		for i := range 10_000 {
			if _, err := auditAppendTx(tx, AuditEntry{Time: time.Now().UTC(), Kind: "tool", Subject: "t" + uitoa(uint64(i)), Outcome: "ok"}, nil); err != nil {
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

// sealedTrail returns a Store sealed with passphrase "pass" after before
// plain entries, then given after more.
func sealedTrail(t testing.TB, before, after int) *Store {
	t.Helper()
	s := newStore(t, testOptions("pass", nil))
	add := func(prefix string, n int) {
		for i := range n {
			if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: prefix + uitoa(uint64(i)), Outcome: "error"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("pre", before)
	if err := s.Seal("pass"); err != nil {
		t.Fatal(err)
	}
	add("post", after)
	return s
}

func readEntry(b *bolt.Bucket, seq uint64) AuditEntry {
	var e AuditEntry
	json.Unmarshal(b.Get(seqKey(seq)), &e)
	return e
}

func markOf(meta *bolt.Bucket, key []byte) auditHead {
	var h auditHead
	json.Unmarshal(meta.Get(key), &h)
	return h
}

func setMark(meta *bolt.Bucket, key []byte, h auditHead) error {
	data, _ := json.Marshal(h)
	return meta.Put(key, data)
}

func TestSealedAuditFindsTruncationWithRepointedHead(t *testing.T) {
	for _, keepMAC := range []bool{false, true} {
		s := sealedTrail(t, 0, 5)
		editAudit(t, s, func(b, meta *bolt.Bucket) error {
			four := readEntry(b, 4)
			head := markOf(meta, auditHeadKey)
			head.Seq, head.Hash = 4, four.Hash
			if !keepMAC {
				head = auditHead{Seq: 4, Hash: four.Hash}
			}
			if err := b.Delete(seqKey(5)); err != nil {
				return err
			}
			return setMark(meta, auditHeadKey, head)
		})
		n, err := s.AuditVerify()
		var brk *AuditBreak
		if !errors.As(err, &brk) || brk.Seq != 4 || !strings.Contains(brk.Reason, "head") {
			t.Fatalf("keepMAC=%v: AuditVerify = %d, %v; want a break at the head", keepMAC, n, err)
		}
	}
}

// rechain recomputes Prev and Hash of entries from..last, keeping each
// entry's MAC, as someone without the audit key would.
func rechain(b *bolt.Bucket, meta *bolt.Bucket, from, last uint64) error {
	prev := readEntry(b, from-1).Hash
	for seq := from; seq <= last; seq++ {
		if err := rewriteEntry(b, seq, func(e *AuditEntry) { e.Prev = prev; e.Hash = auditHash(*e); prev = e.Hash }); err != nil {
			return err
		}
	}
	head := markOf(meta, auditHeadKey)
	head.Seq, head.Hash = last, prev
	return setMark(meta, auditHeadKey, head)
}

func TestSealedAuditFindsForgery(t *testing.T) {
	// Two entries before the seal (anchored at 2), four after: 1..6.
	tests := []struct {
		name       string
		tamper     func(b, meta *bolt.Bucket) error
		wantN      int
		wantSeq    uint64
		wantReason string
	}{
		{"intact", func(b, meta *bolt.Bucket) error { return nil }, 6, 0, ""},
		{"field edited", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 5, func(e *AuditEntry) { e.Outcome = "ok" })
		}, 4, 5, "do not match its hash"},
		{"middle entry deleted", func(b, meta *bolt.Bucket) error { return b.Delete(seqKey(4)) }, 3, 4, "missing"},
		{"last entry deleted", func(b, meta *bolt.Bucket) error { return b.Delete(seqKey(6)) }, 5, 6, "cut off the end"},
		{"last entry rewritten, head moved", func(b, meta *bolt.Bucket) error {
			if err := rewriteEntry(b, 6, func(e *AuditEntry) { e.Outcome = "ok" }); err != nil {
				return err
			}
			return rechain(b, meta, 6, 6)
		}, 5, 6, "MAC does not match"},
		{"tail rewritten and rechained", func(b, meta *bolt.Bucket) error {
			if err := rewriteEntry(b, 4, func(e *AuditEntry) { e.Subject = "other" }); err != nil {
				return err
			}
			return rechain(b, meta, 4, 6)
		}, 3, 4, "MAC does not match"},
		{"MAC copied from another entry", func(b, meta *bolt.Bucket) error {
			five := readEntry(b, 5)
			return rewriteEntry(b, 6, func(e *AuditEntry) { e.MAC = five.MAC })
		}, 5, 6, "MAC does not match"},
		{"MAC stripped", func(b, meta *bolt.Bucket) error {
			return rewriteEntry(b, 6, func(e *AuditEntry) { e.MAC = "" })
		}, 5, 6, "carries no MAC"},
		{"entry appended without the key", func(b, meta *bolt.Bucket) error {
			six := readEntry(b, 6)
			e := AuditEntry{Seq: 7, Time: six.Time, Kind: "tool", Subject: "forged", Prev: six.Hash}
			e.Hash = auditHash(e)
			data, _ := json.Marshal(e)
			if err := b.Put(seqKey(7), data); err != nil {
				return err
			}
			return setMark(meta, auditHeadKey, auditHead{Seq: 7, Hash: e.Hash})
		}, 6, 7, "carries no MAC"},
		{"cut back to the anchor, head copied from it", func(b, meta *bolt.Bucket) error {
			for seq := uint64(3); seq <= 6; seq++ {
				if err := b.Delete(seqKey(seq)); err != nil {
					return err
				}
			}
			return setMark(meta, auditHeadKey, markOf(meta, auditAnchorKey))
		}, 2, 2, "head does not carry its MAC"},
		{"everything cut", func(b, meta *bolt.Bucket) error {
			for seq := uint64(1); seq <= 6; seq++ {
				if err := b.Delete(seqKey(seq)); err != nil {
					return err
				}
			}
			return setMark(meta, auditHeadKey, auditHead{})
		}, 0, 1, "before the entry the seal anchored"},
		{"anchor moved to the end", func(b, meta *bolt.Bucket) error {
			anchor, six := markOf(meta, auditAnchorKey), readEntry(b, 6)
			anchor.Seq, anchor.Hash = 6, six.Hash
			return setMark(meta, auditAnchorKey, anchor)
		}, 0, 1, "anchor"},
		{"anchor removed", func(b, meta *bolt.Bucket) error { return meta.Delete(auditAnchorKey) }, 0, 1, "anchor"},
		{"entry before the seal replaced", func(b, meta *bolt.Bucket) error {
			if err := rewriteEntry(b, 2, func(e *AuditEntry) { e.Outcome = "ok" }); err != nil {
				return err
			}
			return rechain(b, meta, 2, 2)
		}, 1, 2, "not the entry the seal anchored"},
		{"seal record removed", func(b, meta *bolt.Bucket) error { return meta.Delete(sealMetaKey) }, 0, 1, "no seal record"},
		{"two entries swapped", func(b, meta *bolt.Bucket) error {
			four, five := append([]byte(nil), b.Get(seqKey(4))...), append([]byte(nil), b.Get(seqKey(5))...)
			if err := b.Put(seqKey(4), five); err != nil {
				return err
			}
			return b.Put(seqKey(5), four)
		}, 3, 4, "entries moved"},
		{"two entries swapped and renumbered", func(b, meta *bolt.Bucket) error {
			four, five := readEntry(b, 4), readEntry(b, 5)
			four.Seq, five.Seq = 5, 4
			d4, _ := json.Marshal(five)
			d5, _ := json.Marshal(four)
			if err := b.Put(seqKey(4), d4); err != nil {
				return err
			}
			if err := b.Put(seqKey(5), d5); err != nil {
				return err
			}
			return rechain(b, meta, 4, 6)
		}, 3, 4, "MAC does not match"},
		{"an entry replayed at the end, MAC and all", func(b, meta *bolt.Bucket) error {
			if err := b.Put(seqKey(7), append([]byte(nil), b.Get(seqKey(5))...)); err != nil {
				return err
			}
			five := readEntry(b, 5)
			return setMark(meta, auditHeadKey, auditHead{Seq: 7, Hash: five.Hash, MAC: markOf(meta, auditHeadKey).MAC})
		}, 6, 7, "entries moved"},
		{"an entry replayed at the end, renumbered", func(b, meta *bolt.Bucket) error {
			e := readEntry(b, 5)
			e.Seq = 7
			data, _ := json.Marshal(e)
			if err := b.Put(seqKey(7), data); err != nil {
				return err
			}
			return rechain(b, meta, 7, 7)
		}, 6, 7, "MAC does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sealedTrail(t, 2, 4)
			editAudit(t, s, tt.tamper)
			// A Store of its own, as a later tai run would open the file.
			n, err := mustOpen(t, s.Path(), "pass").AuditVerify()
			if n != tt.wantN {
				t.Errorf("AuditVerify count = %d, want %d (%v)", n, tt.wantN, err)
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
			if brk.Seq != tt.wantSeq || !strings.Contains(brk.Reason, tt.wantReason) {
				t.Fatalf("break = %d %q, want %d and a reason containing %q", brk.Seq, brk.Reason, tt.wantSeq, tt.wantReason)
			}
		})
	}
}

func TestSealedAuditMACsOnlyAfterTheSeal(t *testing.T) {
	s := sealedTrail(t, 2, 3)
	tail, err := s.AuditTail(0, "")
	if err != nil || len(tail) != 5 {
		t.Fatalf("AuditTail = %d entries, %v", len(tail), err)
	}
	for _, e := range tail {
		if keyed := e.MAC != ""; keyed != (e.Seq > 2) {
			t.Errorf("entry %d MAC = %q: entries before the seal keep plain hashes, later ones carry a MAC", e.Seq, e.MAC)
		}
	}
	if n, err := s.AuditVerify(); n != 5 || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
}

func TestSealedAuditNeedsTheKey(t *testing.T) {
	s := sealedTrail(t, 1, 2)
	for _, opts := range []*Options{testOptions("", nil), testOptions("wrong", nil)} {
		other, err := Open(s.Path(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.AuditAppend(AuditEntry{Kind: "tool", Subject: "unkeyed"}); !errors.Is(err, ErrNoPassphrase) && !errors.Is(err, ErrWrongPassphrase) ||
			!strings.Contains(err.Error(), "not recorded") {
			t.Fatalf("AuditAppend without the key = %v, want ErrNoPassphrase or ErrWrongPassphrase saying the entry was not recorded", err)
		}
		if _, err := other.AuditVerify(); !errors.Is(err, ErrNoPassphrase) && !errors.Is(err, ErrWrongPassphrase) {
			t.Fatalf("AuditVerify without the key = %v", err)
		}
		if tail, err := other.AuditTail(0, ""); err != nil || len(tail) != 3 {
			t.Fatalf("AuditTail without the key = %d entries, %v; want the 3 stored", len(tail), err)
		}
	}
	if n, err := s.AuditVerify(); n != 3 || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
}

func TestUnsealedAuditNeverAsks(t *testing.T) {
	calls := 0
	s := newStore(t, testOptions("pass", &calls))
	for range 3 {
		if e, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "x"}); err != nil || e.MAC != "" {
			t.Fatalf("AuditAppend = %+v, %v", e, err)
		}
	}
	if n, err := s.AuditVerify(); n != 3 || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
	if calls != 0 {
		t.Fatalf("the passphrase was asked %d times on an unsealed vault", calls)
	}
}

func TestSealedAuditSurvivesPassphraseChange(t *testing.T) {
	s := sealedTrail(t, 1, 2)
	if err := s.Seal("new pass"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "after change"}); err != nil {
		t.Fatal(err)
	}
	fresh := mustOpen(t, s.Path(), "new pass")
	if n, err := fresh.AuditVerify(); n != 4 || err != nil {
		t.Fatalf("AuditVerify after a passphrase change = %d, %v", n, err)
	}
	if _, err := mustOpen(t, s.Path(), "pass").AuditVerify(); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("AuditVerify with the old passphrase = %v, want ErrWrongPassphrase", err)
	}
	// The anchor stays where the first seal put it: entry 1 is still plain.
	editAudit(t, fresh, func(b, meta *bolt.Bucket) error { return b.Delete(seqKey(4)) })
	if _, err := fresh.AuditVerify(); err == nil {
		t.Fatal("AuditVerify missed a cut-off entry after a passphrase change")
	}
}

func TestAuditOfASealWithoutAuditKey(t *testing.T) {
	// A vault sealed before the seal kept an audit key: its check value is
	// the bare check text. The trail stays hash-chained only until the
	// passphrase is changed, which anchors it.
	s := newStore(t, testOptions("pass", nil))
	if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "plain"}); err != nil {
		t.Fatal(err)
	}
	m := &sealMeta{KDF: "scrypt", N: testKDF.N, R: testKDF.R, P: testKDF.P, Salt: []byte("0123456789abcdef"), Cipher: "xchacha20poly1305"}
	k, err := deriveKey("pass", m)
	if err != nil {
		t.Fatal(err)
	}
	m.Check = k.seal(checkPlain, checkAAD)
	data, _ := json.Marshal(m)
	editAudit(t, s, func(b, meta *bolt.Bucket) error { return meta.Put(sealMetaKey, data) })

	old := mustOpen(t, s.Path(), "pass")
	if e, err := old.AuditAppend(AuditEntry{Kind: "tool", Subject: "still plain"}); err != nil || e.MAC != "" {
		t.Fatalf("AuditAppend on a seal without audit key = %+v, %v", e, err)
	}
	if n, err := old.AuditVerify(); n != 2 || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
	if err := old.Seal("pass"); err != nil {
		t.Fatal(err)
	}
	if e, err := old.AuditAppend(AuditEntry{Kind: "tool", Subject: "keyed"}); err != nil || e.MAC == "" {
		t.Fatalf("AuditAppend after re-sealing = %+v, %v", e, err)
	}
	if n, err := mustOpen(t, s.Path(), "pass").AuditVerify(); n != 3 || err != nil {
		t.Fatalf("AuditVerify after re-sealing = %d, %v", n, err)
	}
}

func BenchmarkAuditAppendSealed(b *testing.B) {
	s := sealedTrail(b, 0, 0)
	for b.Loop() {
		if _, err := s.AuditAppend(AuditEntry{Kind: "mcp-call", Subject: "srv/tool", Digest: "abc", Outcome: "ok", Size: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuditVerify10kSealed(b *testing.B) {
	s := sealedTrail(b, 0, 0)
	key := s.key.Load().audit
	if err := s.update(func(tx *bolt.Tx) error {
		for i := range 10_000 {
			if _, err := auditAppendTx(tx, AuditEntry{Time: time.Now().UTC(), Kind: "tool", Subject: "t" + uitoa(uint64(i)), Outcome: "ok"}, key); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if n, err := s.AuditVerify(); n != 10_000 || err != nil {
			b.Fatalf("AuditVerify = %d, %v", n, err)
		}
	}
}

func TestSealAnchorsATrailWithAnUnreadableHead(t *testing.T) {
	s := newStore(t, testOptions("pass", nil))
	for range 2 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool"}); err != nil {
			t.Fatal(err)
		}
	}
	editAudit(t, s, func(b, meta *bolt.Bucket) error { return meta.Put(auditHeadKey, []byte("{broken")) })
	if _, err := s.AuditVerify(); err == nil {
		t.Fatal("AuditVerify missed an unreadable head")
	}
	if err := s.Seal("pass"); err != nil {
		t.Fatalf("Seal with an unreadable audit head: %v", err)
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "tool"}); err != nil {
		t.Fatal(err)
	}
	if n, err := mustOpen(t, s.Path(), "pass").AuditVerify(); n != 3 || err != nil {
		t.Fatalf("AuditVerify after sealing = %d, %v", n, err)
	}
}
