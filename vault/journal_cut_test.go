package vault

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// editJournal rewrites the audit journal of s: its lines (the header
// first) go through fn, as someone who can write the file, but has no
// passphrase, could.
func editJournal(t *testing.T, s *Store, fn func(lines [][]byte) [][]byte) {
	t.Helper()
	path := s.Path() + JournalSuffix
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Join(fn(bytes.SplitAfter(data, []byte{'\n'})), nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSealedJournalCutWhileRunningIsFound: entries of a running tai still
// in the audit journal, cut off or made unreadable by someone without the
// passphrase, are not passed off as a power loss: the tai that wrote them
// finds them gone at its next append or at its exit, records so, and
// AuditVerify reports a break there, for that tai and any later one.
func TestSealedJournalCutWhileRunningIsFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(lines [][]byte) [][]byte
		// exit closes the Store instead of appending after the edit.
		exit   bool
		reason string
	}{
		{"newest entries cut at a line end", func(l [][]byte) [][]byte { return l[:3] }, false, "while tai ran"},
		{"newest entries cut, then tai exits", func(l [][]byte) [][]byte { return l[:3] }, true, "while tai ran"},
		{"journal emptied to its header", func(l [][]byte) [][]byte { return l[:1] }, false, "while tai ran"},
		{"garbage after an entry", func(l [][]byte) [][]byte {
			return append(l[:3], append([]byte("{}\n"), bytes.Join(l[3:], nil)...))
		}, false, "while tai ran"},
		{"an entry edited in place", func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"ok"`), []byte(`"OK"`), 1)
			return l
		}, false, "do not match its hash"},
		{"an entry replaced by another's copy", func(l [][]byte) [][]byte {
			l[4] = l[2]
			return l
		}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sealedTrail(t, 2, 2)
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			for range 4 { // entries 5-8, in the journal
				if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "later", Outcome: "ok"}); err != nil {
					t.Fatal(err)
				}
			}
			editJournal(t, s, tc.edit)
			if tc.exit {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			} else if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "after the cut", Outcome: "ok"}); err != nil {
				t.Fatal(err)
			}
			for _, who := range []string{"the same tai", "a later tai"} {
				if who == "the same tai" && tc.exit {
					continue
				}
				v := s
				if who == "a later tai" {
					v = mustOpen(t, s.Path(), "pass")
				}
				n, err := v.AuditVerify()
				var brk *AuditBreak
				if !errors.As(err, &brk) || errors.Is(err, ErrUncleanShutdown) || !strings.Contains(brk.Reason, tc.reason) {
					t.Fatalf("%s: AuditVerify = %d, %v; want a break saying %q", who, n, err, tc.reason)
				}
				if uint64(n) != brk.Seq-1 {
					t.Fatalf("%s: %d entries hold before the break at %d", who, n, brk.Seq)
				}
			}
			if tc.exit {
				return
			}
			tail, err := s.AuditTail(1, "")
			if err != nil || len(tail) != 1 || tail[0].Subject != "after the cut" {
				t.Fatalf("the append after the cut was not kept: %+v, %v", tail, err)
			}
		})
	}
}

// A torn journal found by a tai that did not write it (the one that did
// stopped with the machine) still reads as an unclean shutdown.
func TestTornJournalOfAStoppedTaiIsAnUncleanShutdown(t *testing.T) {
	s := sealedTrail(t, 0, 3)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "last", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	// The tai stops here without a fold; its last line is torn.
	later := mustOpen(t, s.Path(), "pass")
	editJournal(t, s, func(l [][]byte) [][]byte {
		l[1] = l[1][:len(l[1])/2]
		return l[:2]
	})
	n, err := later.AuditVerify()
	if !errors.Is(err, ErrUncleanShutdown) || n != 4 {
		t.Fatalf("AuditVerify = %d, %v; want 4 and an unclean shutdown", n, err)
	}
}
