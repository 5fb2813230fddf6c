package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingStore opens path with an OnOpen hook and returns the counter.
func countingStore(t *testing.T, path string, opts *Options) (*Store, *atomic.Int64) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	n := new(atomic.Int64)
	opts.OnOpen = func() { n.Add(1) }
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, n
}

// While no secret changes, Redact opens nothing; a change made by another
// Store (another process, below) is noticed by the next Redact.
func TestRedactOpensNothingUntilASecretChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	s, opens := countingStore(t, path, nil)
	if err := s.SecretSet("one", "value-one", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("x value-one"); got != "x [REDACTED:one]" {
		t.Fatalf("Redact = %q", got)
	}
	before := opens.Load()
	for range 100 {
		if got := s.Redact("x value-one"); got != "x [REDACTED:one]" {
			t.Fatalf("Redact = %q", got)
		}
		if err := s.RedactionReady(); err != nil {
			t.Fatal(err)
		}
	}
	if n := opens.Load() - before; n != 0 {
		t.Fatalf("100 Redact and RedactionReady calls opened the vault %d times, want 0", n)
	}
	other := mustOpen(t, path, "")
	if err := other.SecretSet("two", "value-two", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-one value-two"); got != "[REDACTED:one] [REDACTED:two]" {
		t.Fatalf("after another Store's change: %q", got)
	}
	if err := other.SecretDelete("two"); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-two"); got != "value-two" {
		t.Fatalf("after another Store's delete: %q", got)
	}
}

// A secret set by another process is redacted by this one's next Redact.
func TestRedactSeesSecretSetByAnotherProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, opens := countingStore(t, path, nil)
	if got := s.Redact("token child-secret-42"); got != "token child-secret-42" {
		t.Fatalf("before: %q", got)
	}
	before := opens.Load()
	s.Redact("token child-secret-42")
	if n := opens.Load() - before; n != 0 {
		t.Fatalf("a second Redact opened the vault %d times", n)
	}
	c := startChild(t, ctx, "set", path, "cs=child-secret-42")
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if got := s.Redact("token child-secret-42"); got != "token [REDACTED:cs]" {
		t.Fatalf("after the child set it: %q", got)
	}
}

// When another process changed the secrets and holds the lock past the
// timeout, Redact withholds the text and Redactor names the cause: the
// new secret is never passed through.
func TestRedactFailsClosedWhileAnotherProcessHoldsTheLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, _ := countingStore(t, path, &Options{LockTimeout: 200 * time.Millisecond})
	if err := s.SecretSet("old", "value-old", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-old"); got != "[REDACTED:old]" {
		t.Fatalf("before: %q", got)
	}
	h := startChild(t, ctx, "set-hold", path, "fresh=fresh-secret-99")
	h.expect(t, ctx, "locked")
	text := "file says fresh-secret-99 and value-old"
	got := s.Redact(text)
	if strings.Contains(got, "fresh-secret-99") || strings.Contains(got, "value-old") || !strings.Contains(got, "withheld") {
		t.Fatalf("Redact while locked = %q, want the text withheld", got)
	}
	if _, err := s.Redactor(); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "could not be read") {
		t.Fatalf("Redactor while locked = %v, want ErrLocked naming the cause", err)
	}
	cold, err := Open(path, &Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		if _, err := cold.Redactor(); !errors.Is(err, ErrLocked) {
			t.Fatalf("a fresh Store's Redactor while locked = %v, want ErrLocked", err)
		}
	}
	h.stdin.Close()
	_ = h.cmd.Wait()
	if got := s.Redact(text); got != "file says [REDACTED:fresh] and [REDACTED:old]" {
		t.Fatalf("after release: %q", got)
	}
}

// Held finds the longest tail that could still grow into a secret.
func TestRedactorHeld(t *testing.T) {
	m := &Redactor{m: newMatcher(map[string]string{"secret-abc": "a", "secret-xyz-long": "b", "pass": "c"})}
	for _, tt := range []struct {
		text string
		want int
	}{
		{"hello", 0},
		{"hello sec", 3},
		{"hello secret-", 7},
		{"hello secret-xy", 9},
		{"hello secret-abc", 0},
		{"pas", 3},
		{"pass", 1}, // the final "s" may start "secret-…"
		{"", 0},
	} {
		if got := m.Held(tt.text); got != tt.want {
			t.Errorf("Held(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// A passphrase typed at the prompt (or given to Seal) is redacted like one
// from TAI_VAULT_PASSPHRASE.
func TestTypedPassphraseIsRedacted(t *testing.T) {
	s := newStore(t, testOptions("", nil))
	if err := s.SecretSet("one", "value-one", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("typed-passphrase-1"); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("pw typed-passphrase-1"); got != "pw [REDACTED:TAI_VAULT_PASSPHRASE]" {
		t.Fatalf("after Seal: %q", got)
	}
	o := &Options{kdf: testKDF, PassphrasePrompt: func(int, error) (string, error) { return "typed-passphrase-1", nil }}
	typed, err := Open(s.Path(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer typed.Close()
	if got := typed.Redact("pw typed-passphrase-1 value-one"); got != "pw [REDACTED:TAI_VAULT_PASSPHRASE] [REDACTED:one]" {
		t.Fatalf("after the prompt: %q", got)
	}
}

// RecordPut refuses, naming the cause, when the secrets cannot be read to
// redact the text: it stores neither the text nor a placeholder.
func TestRecordPutFailsClosed(t *testing.T) {
	s := newStore(t, testOptions("pass", nil))
	if err := s.SecretSet("k", "sealed-value-1", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("pass"); err != nil {
		t.Fatal(err)
	}
	keyless := mustOpen(t, s.Path(), "")
	if id, err := keyless.RecordPut("text with sealed-value-1", nil); err == nil || !errors.Is(err, ErrNoPassphrase) {
		t.Fatalf("RecordPut without the key = %q, %v; want a refusal wrapping ErrNoPassphrase", id, err)
	}
	if list, err := s.RecordList(0); err != nil || len(list) != 0 {
		t.Fatalf("records after the refusal: %v, %v", list, err)
	}
}

// A vault file replaced behind tai's back (a backup copied over it, or
// moved into its place) changes no generation; its secrets are redacted
// from the first look after FileRecheck, and the secrets known before
// stay redacted even when the new file lacks them.
func TestRedactSeesAVaultPutInPlaceOfTheFile(t *testing.T) {
	for _, how := range []string{"copied over", "moved over"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "vault.db")
			s, opens := countingStore(t, path, nil)
			s.watch.every = 0 // look at every call, instead of waiting FileRecheck
			for name, value := range map[string]string{"one": "value-one", "gone": "value-gone"} {
				if err := s.SecretSet(name, value, nil); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.Redact("value-one restored-secret-7"); got != "[REDACTED:one] restored-secret-7" {
				t.Fatalf("before: %q", got)
			}
			before := opens.Load()
			s.Redact("value-one")
			if n := opens.Load() - before; n != 0 {
				t.Fatalf("an unchanged file was read again (%d opens)", n)
			}

			backup := filepath.Join(dir, "backup.db")
			b := mustOpen(t, backup, "")
			for name, value := range map[string]string{"one": "value-one", "restored": "restored-secret-7"} {
				if err := b.SecretSet(name, value, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(backup)
			if err != nil {
				t.Fatal(err)
			}
			if how == "copied over" {
				err = os.WriteFile(path, data, 0o600) // in place, as cp does
			} else {
				tmp := filepath.Join(dir, "vault.db.new")
				if err = os.WriteFile(tmp, data, 0o600); err == nil {
					err = os.Rename(tmp, path)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Redact("value-one restored-secret-7 value-gone"); got != "[REDACTED:one] [REDACTED:restored] [REDACTED:gone]" {
				t.Fatalf("after the vault was %s: %q", how, got)
			}
			if v, _, err := s.SecretGet("gone"); err == nil {
				t.Fatalf("the new file still holds gone (%q): the test needs one that lacks it", v)
			}
		})
	}
}

// A vault file that changed without a secret change, and cannot be read
// at the next look (another process holds its lock), keeps the secrets
// read before: the look must not fail calls that no secret change
// concerns.
func TestRedactKeepsItsSecretsWhenAChangedFileIsLocked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, _ := countingStore(t, path, &Options{LockTimeout: 200 * time.Millisecond})
	s.watch.every = 0
	if err := s.SecretSet("old", "value-old", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("value-old"); got != "[REDACTED:old]" {
		t.Fatalf("before: %q", got)
	}
	other := mustOpen(t, path, "")
	if _, err := other.RecordPut("a record, not a secret", nil); err != nil {
		t.Fatal(err)
	}
	h := startChild(t, ctx, "hold", path, "")
	h.expect(t, ctx, "locked")
	if got := s.Redact("value-old"); got != "[REDACTED:old]" {
		t.Fatalf("while the changed file is locked: %q", got)
	}
	if _, err := s.Redactor(); err != nil {
		t.Fatalf("Redactor while the changed file is locked: %v", err)
	}
	h.stdin.Close()
	_ = h.cmd.Wait()
	if got := s.Redact("value-old"); got != "[REDACTED:old]" {
		t.Fatalf("after release: %q", got)
	}
}

// TestOwnWritesDoNotRereadTheSecrets: this Store's own writes (a record, its
// audit entries flushed to the file) change the vault file but no secret,
// so the next redaction opens nothing; another writer's change still makes
// it look.
func TestOwnWritesDoNotRereadTheSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	s, opens := countingStore(t, path, nil)
	s.watch.every = 0 // look at every call, instead of waiting FileRecheck
	if err := s.SecretSet("tok", "s3cr3t-value", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Redact("s3cr3t-value"); got != "[REDACTED:tok]" {
		t.Fatalf("before: %q", got)
	}
	if _, err := s.RecordPut("some spilled text", nil); err != nil {
		t.Fatal(err)
	}
	before := opens.Load()
	if got := s.Redact("s3cr3t-value"); got != "[REDACTED:tok]" {
		t.Fatalf("after the record: %q", got)
	}
	if n := opens.Load() - before; n != 0 {
		t.Fatalf("the Store's own write made redaction read the vault again (%d opens)", n)
	}

	other := mustOpen(t, path, "")
	if _, err := other.RecordPut("another process's record", nil); err != nil {
		t.Fatal(err)
	}
	before = opens.Load()
	s.Redact("s3cr3t-value")
	if n := opens.Load() - before; n == 0 {
		t.Fatal("another Store's write went unseen: the secrets were not read again")
	}
}
