package vault

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestSealedElsewhere: a Store that saw the vault open, then finds it
// sealed (or its passphrase changed) by another Store, says so at the
// first try of its prompt; RefusePrompts makes it fail at once instead.
func TestSealedElsewhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	p := &promptScript{answers: []string{"right", "newer"}}
	opts := &Options{kdf: testKDF, PassphrasePrompt: p.prompt}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SecretSet("k", "the value 1", nil); err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, &Options{kdf: testKDF, Passphrase: func() (string, error) { return "right", nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Seal("right"); err != nil {
		t.Fatal(err)
	}

	// Refused: no prompt, at once, saying why and what to do.
	restore := s.RefusePrompts("restart it with TAI_VAULT_PASSPHRASE set")
	_, _, err = s.SecretGet("k")
	if !errors.Is(err, ErrNoPassphrase) || !errors.Is(err, ErrSealedElsewhere) || !strings.Contains(err.Error(), "sealed by another process: restart it with TAI_VAULT_PASSPHRASE set") {
		t.Fatalf("a refused prompt gives %v", err)
	}
	if _, err := s.Redactor(); err == nil || !strings.Contains(err.Error(), "sealed by another process: restart it with TAI_VAULT_PASSPHRASE set") || strings.Contains(err.Error(), "terminal") {
		t.Fatalf("redaction with a refused prompt: %v", err)
	}
	if len(p.tries) != 0 {
		t.Fatalf("the prompt was asked %v while refused", p.tries)
	}

	// Asked again: the first try says the vault was sealed elsewhere.
	restore()
	if v, _, err := s.SecretGet("k"); err != nil || v != "the value 1" {
		t.Fatalf("after restore: %q %v", v, err)
	}
	if len(p.lasts) != 1 || !errors.Is(p.lasts[0], ErrSealedElsewhere) {
		t.Fatalf("the first try's last: %v", p.lasts)
	}

	// A passphrase changed elsewhere is said too.
	if err := other.Seal("newer"); err != nil {
		t.Fatal(err)
	}
	if v, _, err := s.SecretGet("k"); err != nil || v != "the value 1" {
		t.Fatalf("after the change: %q %v", v, err)
	}
	if len(p.lasts) != 2 || !errors.Is(p.lasts[1], ErrSealedElsewhere) || !strings.Contains(p.lasts[1].Error(), "new passphrase") {
		t.Fatalf("the first try's last after a change: %v", p.lasts)
	}

	// A Store that never saw the vault open asks without that reason.
	q := &promptScript{answers: []string{"newer"}}
	fresh, err := Open(path, &Options{kdf: testKDF, PassphrasePrompt: q.prompt})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, _, err := fresh.SecretGet("k"); err != nil || len(q.lasts) != 1 || q.lasts[0] != nil {
		t.Fatalf("a Store opened on a sealed vault: %v, lasts %v", err, q.lasts)
	}
}
