package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSealedDeletesNeedThePassphrase: on a sealed vault a wrong or
// missing passphrase deletes nothing (secret, record, profile, server) and
// leaves the file as it was; with the right one each deletion happens and
// is audited. Deletions on an unsealed vault are audited too.
func TestSealedDeletesNeedThePassphrase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := Open(path, testOptions("right-pass", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SecretSet("prod-db", "prod-db-password-1", nil); err != nil {
		t.Fatal(err)
	}
	rec, err := s.RecordPut("a record", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ProfilePut("work", []byte(`{"name":"work"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.ServerPut(Server{Name: "srv", Transport: "http", URL: "https://x", Headers: map[string]string{"Authorization": "Bearer hdr_1"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("right-pass"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	deletes := []struct {
		kind, name string
		del        func(*Store) error
	}{
		{"secret", "prod-db", func(s *Store) error { return s.SecretDelete("prod-db") }},
		{"record", rec, func(s *Store) error { return s.RecordDelete(rec) }},
		{"profile", "work", func(s *Store) error { return s.ProfileDelete("work") }},
		{"server", "srv", func(s *Store) error { return s.ServerDelete("srv") }},
	}
	for _, src := range []struct {
		name string
		opts *Options
		want error
	}{
		{"wrong passphrase", testOptions("WRONG", nil), ErrWrongPassphrase},
		{"no passphrase", &Options{kdf: testKDF}, ErrNoPassphrase},
	} {
		before, _ := os.ReadFile(path)
		bad, err := Open(path, src.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deletes {
			if err := d.del(bad); !errors.Is(err, src.want) {
				t.Errorf("%s: deleting %s %s: %v, want %v", src.name, d.kind, d.name, err, src.want)
			}
		}
		bad.Close()
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("%s: the vault file changed", src.name)
		}
	}
	good, err := Open(path, testOptions("right-pass", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if v, _, err := good.SecretGet("prod-db"); err != nil || v != "prod-db-password-1" {
		t.Fatalf("the secret did not survive the wrong passphrases: %q %v", v, err)
	}
	for _, d := range deletes {
		if err := d.del(good); err != nil {
			t.Fatalf("deleting %s %s with the passphrase: %v", d.kind, d.name, err)
		}
	}
	checkDeletesAudited(t, good, deletes[0].kind, deletes[0].name, deletes[1].kind, deletes[1].name,
		deletes[2].kind, deletes[2].name, deletes[3].kind, deletes[3].name)
	if _, err := good.AuditVerify(); err != nil {
		t.Fatalf("the trail does not verify: %v", err)
	}

	plain := newStore(t, nil)
	if err := plain.SecretSet("k", "plain-secret-value", nil); err != nil {
		t.Fatal(err)
	}
	if err := plain.SecretDelete("k"); err != nil {
		t.Fatal(err)
	}
	checkDeletesAudited(t, plain, "secret", "k")
}

// checkDeletesAudited wants, for each kind and name pair, one "deleted"
// entry in the trail.
func checkDeletesAudited(t *testing.T, s *Store, pairs ...string) {
	t.Helper()
	entries, err := s.AuditTail(0, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(pairs); i += 2 {
		found := false
		for _, e := range entries {
			found = found || (e.Kind == pairs[i] && e.Subject == pairs[i+1] && e.Outcome == AuditDeleted)
		}
		if !found {
			t.Errorf("no audit entry for deleting %s %s in %+v", pairs[i], pairs[i+1], entries)
		}
	}
}
