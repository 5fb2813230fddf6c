package vault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// An entry whose AuditAppend returned survives a SIGKILL of the process
// right after: it was written to the journal, which the next process folds.
func TestAuditSurvivesSIGKILLAfterReturn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: "before"}); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, ctx, "audit", path, "child")
	last := uint64(0)
	for last < 300 {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited after entry %d", last)
			}
			n, err := strconv.ParseUint(line, 10, 64)
			if want := max(last+1, 2); err != nil || n != want {
				t.Fatalf("child said %q after %d", line, last)
			}
			last = n
		case <-ctx.Done():
			t.Fatalf("child appended only up to %d in time", last)
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for line := range c.lines {
		if n, err := strconv.ParseUint(line, 10, 64); err == nil && n == last+1 {
			last = n
		}
	}
	_ = c.cmd.Wait()
	n, err := s.AuditVerify()
	if err != nil || uint64(n) < last {
		t.Fatalf("AuditVerify after SIGKILL = %d, %v; want at least the %d acknowledged entries, no break", n, err, last)
	}
	tail, err := s.AuditTail(1, "")
	if err != nil || len(tail) != 1 || tail[0].Seq != uint64(n) {
		t.Fatalf("AuditTail = %+v, %v", tail, err)
	}
	got, err := s.AuditTail(0, "test")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range got[1:last] {
		if want := fmt.Sprintf("child/%d", i); e.Subject != want {
			t.Fatalf("entry %d is %q, want %q", e.Seq, e.Subject, want)
		}
	}
}

// Entries reach the vault file within the flush delay without Close, and
// appends from many goroutines share the flushes and form one chain.
func TestAuditGroupFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	s, opens := countingStore(t, path, nil)
	if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: "first"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := opens.Load()
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: fmt.Sprintf("g%d/%d", g, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := opens.Load() - start; n > 40 {
		t.Errorf("800 appends opened the vault %d times; flushes are not shared", n)
	}
	// The group flush makes them durable on its own, in a few shared
	// fdatasyncs rather than one per entry.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.journal.mu.Lock()
		due := s.journal.due
		s.journal.mu.Unlock()
		if !due && s.journal.syncs.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no group flush within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.journal.syncs.Load(); n > 100 {
		t.Errorf("801 appends took %d flushes; they are not shared", n)
	}
	if n, err := s.AuditVerify(); n != 801 || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
}

// copyVault copies the vault and the files beside it into a fresh folder.
func copyVault(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", GenerationSuffix, JournalSuffix} {
		data, err := os.ReadFile(path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "vault.db"+suffix), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "vault.db")
}

// The power-loss model: the journal of a vault whose last entries had not
// reached the disk is cut at random points (and its tail zeroed, as a
// file system may leave it). Every copy opens, keeps its secrets and
// records, and audit_verify reports at worst an unclean shutdown, never
// tampering; the trail then goes on.
func TestAuditPowerLossModel(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sealed=%v", sealed), func(t *testing.T) {
			s := newStore(t, testOptions("pass", nil))
			if err := s.SecretSet("tok", "power-loss-secret", nil); err != nil {
				t.Fatal(err)
			}
			id, err := s.RecordPut("a record that must survive", nil)
			if err != nil {
				t.Fatal(err)
			}
			if sealed {
				if err := s.Seal("pass"); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 5 {
				if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: fmt.Sprintf("folded/%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			folded, err := s.AuditVerify()
			if err != nil {
				t.Fatal(err)
			}
			// These stay in the journal: the copy is taken before any flush.
			s.journal.mu.Lock()
			s.journal.due = true // keep the timer from folding them
			s.journal.mu.Unlock()
			for i := range 6 {
				if _, err := s.journalAppendForTest(AuditEntry{Kind: "test", Subject: fmt.Sprintf("pending/%d", i), Time: time.Now().UTC()}); err != nil {
					t.Fatal(err)
				}
			}
			journal, err := os.ReadFile(s.Path() + JournalSuffix)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(journal))))
			for try := range 40 {
				cut := rng.IntN(len(journal) + 1)
				zeros := 0
				if try%3 == 1 {
					zeros = rng.IntN(300)
				}
				path := copyVault(t, s.Path())
				torn := append(append([]byte(nil), journal[:cut]...), make([]byte, zeros)...)
				if err := os.WriteFile(path+JournalSuffix, torn, 0o600); err != nil {
					t.Fatal(err)
				}
				c := mustOpen(t, path, "pass")
				n, err := c.AuditVerify()
				var brk *AuditBreak
				if errors.As(err, &brk) || err != nil && !errors.Is(err, ErrUncleanShutdown) {
					t.Fatalf("cut at %d (+%d zeros): AuditVerify = %d, %v; want no break", cut, zeros, n, err)
				}
				if err != nil && !strings.Contains(err.Error(), "unclean shutdown") {
					t.Fatalf("cut at %d: %v does not say unclean shutdown", cut, err)
				}
				if n < folded {
					t.Fatalf("cut at %d: %d entries, fewer than the %d already folded", cut, n, folded)
				}
				if v, _, err := c.SecretGet("tok"); err != nil || v != "power-loss-secret" {
					t.Fatalf("cut at %d: secret %q, %v", cut, v, err)
				}
				if text, _, err := c.RecordGet(id, 0, 0); err != nil || text != "a record that must survive" {
					t.Fatalf("cut at %d: record %q, %v", cut, text, err)
				}
				if _, err := c.AuditAppend(AuditEntry{Kind: "test", Subject: "after"}); err != nil {
					t.Fatalf("cut at %d: append after recovery: %v", cut, err)
				}
				if m, err := c.AuditVerify(); m != n+1 || err != nil && !errors.Is(err, ErrUncleanShutdown) {
					t.Fatalf("cut at %d: after one more append AuditVerify = %d, %v; want %d", cut, m, err, n+1)
				}
				c.Close()
			}
		})
	}
}

// journalAppendForTest appends e to the journal without scheduling a flush.
func (s *Store) journalAppendForTest(e AuditEntry) (AuditEntry, error) {
	j := &s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	stamp := s.gen.stamp()
	salt, err := s.auditSealState(stamp)
	if err != nil {
		return e, err
	}
	var key []byte
	if salt != nil {
		key = s.key.Load().auditKey()
	}
	return s.journalAppend(e, key, stamp)
}

// Editing an entry in the journal of a sealed vault (without the key) is
// not folded as an entry.
func TestSealedJournalRefusesForgedEntries(t *testing.T) {
	s := sealedTrail(t, 1, 1)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.journal.mu.Lock()
	s.journal.due = true
	s.journal.mu.Unlock()
	if _, err := s.journalAppendForTest(AuditEntry{Kind: "tool", Subject: "real", Time: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	path := s.Path() + JournalSuffix
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), `"subject":"real"`, `"subject":"fake"`, 1)
	if forged == string(data) {
		t.Fatal("the journal does not hold the entry")
	}
	if err := os.WriteFile(path, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := mustOpen(t, s.Path(), "pass").AuditVerify()
	if !errors.Is(err, ErrUncleanShutdown) || n != 3 {
		t.Fatalf("AuditVerify = %d, %v; want the forged entry dropped as a torn tail (2 entries and the note)", n, err)
	}
	tail, _ := s.AuditTail(0, "")
	for _, e := range tail {
		if e.Subject == "fake" {
			t.Fatal("the forged entry is in the trail")
		}
	}
}

// TestAFoldThatDoesNotCommitKeepsTheJournal: the journal is emptied only
// once the fold's transaction has committed. A fold whose commit fails
// (or whose process dies before the commit is done) leaves every entry in
// the journal, where the next fold finds it.
func TestAFoldThatDoesNotCommitKeepsTheJournal(t *testing.T) {
	s := newStore(t, nil)
	for i := range 3 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: fmt.Sprintf("e/%d", i), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	j := &s.journal
	j.mu.Lock()
	finish := func(bool) error { return nil }
	err := s.updateOnce(func(tx *bolt.Tx) error {
		var err error
		if finish, err = s.foldTx(tx, nil, nil); err != nil {
			return err
		}
		return errors.New("the commit failed") // as a full disk would
	})
	if ferr := finish(err == nil); ferr != nil {
		t.Fatal(ferr)
	}
	j.mu.Unlock()
	if err == nil {
		t.Fatal("the transaction committed")
	}
	tail, err := s.AuditTail(10, "")
	if err != nil || len(tail) != 3 {
		t.Fatalf("after a fold that did not commit: %d entries (%v), want the 3 appended", len(tail), err)
	}
	if n, err := s.AuditVerify(); n != 3 || err != nil {
		t.Fatalf("AuditVerify = %d, %v; want 3 and no break", n, err)
	}
	if size := journalSize(t, s); size > int64(journalHeadSize) {
		t.Fatalf("the journal holds %d bytes after a fold that committed; want its header alone", size)
	}
}

// journalSize is the size of s's audit journal.
func journalSize(t *testing.T, s *Store) int64 {
	t.Helper()
	st, err := os.Stat(s.Path() + JournalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
