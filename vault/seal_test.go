package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestSealRoundTrip(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("gh", "ghp_plaintext_token_1", map[string]any{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ServerPut(Server{Name: "srv", Transport: "http", URL: "https://x", Headers: map[string]string{"Authorization": "Bearer hdr_secret_1"}}); err != nil {
		t.Fatal(err)
	}
	if sealed, err := s.Sealed(); sealed || err != nil {
		t.Fatalf("Sealed before = %v, %v", sealed, err)
	}
	if err := s.Seal("correct horse"); err != nil {
		t.Fatal(err)
	}
	if sealed, err := s.Sealed(); !sealed || err != nil {
		t.Fatalf("Sealed after = %v, %v", sealed, err)
	}
	// The sealing Store keeps working without asking.
	if v, _, err := s.SecretGet("gh"); err != nil || v != "ghp_plaintext_token_1" {
		t.Fatalf("SecretGet after Seal = %q, %v", v, err)
	}

	calls := 0
	s2, err := Open(s.Path(), testOptions("correct horse", &calls))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.ProfileList(); err != nil || calls != 0 {
		t.Fatalf("unsealed read asked for the passphrase (%d calls, %v)", calls, err)
	}
	for range 3 {
		v, meta, err := s2.SecretGet("gh")
		if err != nil || v != "ghp_plaintext_token_1" || meta["k"] != "v" {
			t.Fatalf("SecretGet = %q, %v, %v", v, meta, err)
		}
	}
	srv, err := s2.ServerGet("srv")
	if err != nil || srv.Headers["Authorization"] != "Bearer hdr_secret_1" {
		t.Fatalf("ServerGet = %+v, %v", srv, err)
	}
	if err := s2.SecretSet("new", "new_secret_value", nil); err != nil {
		t.Fatal(err)
	}
	if err := s2.ServerPut(Server{Name: "srv2", Transport: "http", Headers: map[string]string{"X-Key": "hdr_secret_2"}}); err != nil {
		t.Fatal(err)
	}
	if list, err := s2.ServerList(); err != nil || len(list) != 2 || list[1].Headers["X-Key"] != "hdr_secret_2" {
		t.Fatalf("ServerList = %+v, %v", list, err)
	}
	if calls != 1 {
		t.Fatalf("passphrase asked %d times, want once", calls)
	}
	if v, _, err := s.SecretGet("new"); err != nil || v != "new_secret_value" {
		t.Fatalf("first Store reads the other's sealed write: %q, %v", v, err)
	}
}

func sealedFixture(t *testing.T) (path string) {
	t.Helper()
	s := newStore(t, nil)
	for i := range 20 {
		if err := s.SecretSet(fmt.Sprintf("s%d", i), fmt.Sprintf("fixture-secret-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ServerPut(Server{Name: "srv", Transport: "http", Headers: map[string]string{"Authorization": "fixture-header"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("right"); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

func TestWrongPassphraseChangesNothing(t *testing.T) {
	path := sealedFixture(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	wrong, err := Open(path, testOptions("wrong", &calls))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]func() error{
		"SecretGet": func() error { _, _, err := wrong.SecretGet("s1"); return err },
		"SecretSet": func() error { return wrong.SecretSet("s1", "overwritten", nil) },
		"ServerGet": func() error { _, err := wrong.ServerGet("srv"); return err },
		"ServerPut": func() error {
			return wrong.ServerPut(Server{Name: "srv", Headers: map[string]string{"A": "overwritten"}})
		},
		"Seal": func() error { return wrong.Seal("new") },
	}
	for name, op := range ops {
		err := op()
		if !errors.Is(err, ErrWrongPassphrase) {
			t.Fatalf("%s with a wrong passphrase = %v, want ErrWrongPassphrase", name, err)
		}
		if strings.Contains(err.Error(), "wrong\"") || !strings.Contains(err.Error(), "nothing was read or changed") {
			t.Fatalf("%s error = %q", name, err)
		}
	}
	if calls != 1 {
		t.Fatalf("passphrase asked %d times, want once", calls)
	}
	// Redact fails closed: without the key the sealed values are unknown,
	// so the text is withheld, with the cause.
	wrong.AddRedaction("EXTRA", "fixture-extra")
	if got := wrong.Redact("x fixture-secret-1 fixture-extra y"); strings.Contains(got, "fixture-secret-1") ||
		!strings.HasPrefix(got, "[withheld: ") || !strings.Contains(got, "does not open the seal") {
		t.Fatalf("Redact without the key = %q, want the text withheld with the cause", got)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the vault file changed after operations with a wrong passphrase")
	}

	right, err := Open(path, testOptions("right", nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if v, _, err := right.SecretGet(fmt.Sprintf("s%d", i)); err != nil || v != fmt.Sprintf("fixture-secret-%d", i) {
			t.Fatalf("s%d = %q, %v", i, v, err)
		}
	}
	if srv, err := right.ServerGet("srv"); err != nil || srv.Headers["Authorization"] != "fixture-header" {
		t.Fatalf("ServerGet = %+v, %v", srv, err)
	}
	if got := right.Redact("x fixture-secret-1 y"); got != "x [REDACTED:s1] y" {
		t.Fatalf("Redact with the key = %q", got)
	}
}

func TestSealedWithoutPassphrase(t *testing.T) {
	path := sealedFixture(t)
	s, err := Open(path, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SecretGet("s1"); !errors.Is(err, ErrNoPassphrase) || !strings.Contains(err.Error(), "TAI_VAULT_PASSPHRASE") {
		t.Fatalf("SecretGet = %v, want ErrNoPassphrase naming TAI_VAULT_PASSPHRASE", err)
	}
	if list, err := s.SecretList(); err != nil || len(list) != 20 {
		t.Fatalf("SecretList on a sealed vault = %d, %v", len(list), err)
	}
	if err := s.ProfilePut("p", []byte(`{}`)); err != nil {
		t.Fatalf("ProfilePut on a sealed vault: %v", err)
	}

	failing, err := Open(path, &Options{Passphrase: func() (string, error) { return "", errors.New("no terminal") }})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := failing.SecretGet("s1"); !errors.Is(err, ErrNoPassphrase) || !strings.Contains(err.Error(), "no terminal") {
		t.Fatalf("SecretGet with a failing prompt = %v", err)
	}
}

// A Store opened before another one sealed the vault must not write
// plaintext afterwards.
func TestSealByAnotherStoreIsNoticed(t *testing.T) {
	a := newStore(t, &Options{})
	b, err := Open(a.Path(), testOptions("", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	if err := a.SecretSet("x", "plain-after-seal", nil); !errors.Is(err, ErrNoPassphrase) {
		t.Fatalf("SecretSet on a vault sealed meanwhile = %v, want ErrNoPassphrase", err)
	}
	if _, _, err := b.SecretGet("x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused write landed: %v", err)
	}
}

func TestChangePassphrase(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("k", "value-k", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("one"); err != nil {
		t.Fatal(err)
	}
	// A fresh Store needs the current passphrase to change it.
	s2, err := Open(s.Path(), testOptions("one", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Seal("two"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mustOpen(t, s.Path(), "one").SecretGet("k"); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("old passphrase after change = %v", err)
	}
	if v, _, err := mustOpen(t, s.Path(), "two").SecretGet("k"); err != nil || v != "value-k" {
		t.Fatalf("new passphrase = %q, %v", v, err)
	}
	if err := s.Seal(""); err == nil || !strings.Contains(err.Error(), "empty passphrase") {
		t.Fatalf("Seal(\"\") = %v", err)
	}
}

func mustOpen(t *testing.T, path, pass string) *Store {
	t.Helper()
	s, err := Open(path, testOptions(pass, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSealedValuesAreBoundToTheirRow(t *testing.T) {
	s := newStore(t, nil)
	s.SecretSet("a", "value-a", nil)
	s.SecretSet("b", "value-b", nil)
	if err := s.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	// Copy a's sealed value over b's, as someone with the file could.
	if err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSecrets)
		return b.Put([]byte("b"), append([]byte(nil), b.Get([]byte("a"))...))
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SecretGet("b"); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Fatalf("swapped sealed value = %v, want a decrypt error", err)
	}
}

func TestSealedFileHoldsNoPlaintext(t *testing.T) {
	s := newStore(t, nil)
	var plain []string
	secret := func(i int) string { return fmt.Sprintf("PLAINTEXT-%04d-%s", i, strings.Repeat("s", 40)) }
	for i := range 300 {
		v := secret(i)
		if err := s.SecretSet(fmt.Sprintf("n%d", i), v, map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		plain = append(plain, v)
	}
	// Overwritten and deleted values must not linger in freed pages either.
	for i := range 50 {
		if err := s.SecretSet(fmt.Sprintf("n%d", i), secret(1000+i), nil); err != nil {
			t.Fatal(err)
		}
		plain = append(plain, secret(1000+i))
	}
	for i := 50; i < 80; i++ {
		if err := s.SecretDelete(fmt.Sprintf("n%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		h := fmt.Sprintf("HEADERVALUE-%04d", i)
		if err := s.ServerPut(Server{Name: fmt.Sprintf("srv%d", i), Transport: "http", Headers: map[string]string{"Authorization": h}}); err != nil {
			t.Fatal(err)
		}
		plain = append(plain, h)
	}
	for range 20 {
		if _, err := s.RecordPut(strings.Repeat("filler ", 2000), nil); err != nil {
			t.Fatal(err)
		}
	}
	// A record spilled before its secret was known.
	early, err := s.RecordPut("log line: PLAINTEXT-early-value end", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SecretSet("early", "PLAINTEXT-early-value", nil); err != nil {
		t.Fatal(err)
	}
	plain = append(plain, "PLAINTEXT-early-value")
	raw, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(secret(100))) || !bytes.Contains(raw, []byte("HEADERVALUE-0003")) {
		t.Fatal("control: the unsealed file should hold the plaintext")
	}
	if err := s.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	if err := s.SecretSet("later", "PLAINTEXT-later-value", nil); err != nil {
		t.Fatal(err)
	}
	plain = append(plain, "PLAINTEXT-later-value")
	s.Close()

	raw, err = os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plain {
		if bytes.Contains(raw, []byte(p)) {
			t.Fatalf("the sealed vault file contains %q in plaintext", p)
		}
	}
	if bytes.Contains(raw, []byte("PLAINTEXT-")) || bytes.Contains(raw, []byte("HEADERVALUE-")) {
		t.Fatal("the sealed vault file contains a fragment of a plaintext value")
	}
	// And it is still a sound vault holding everything.
	s2 := mustOpen(t, s.Path(), "pw")
	if v, _, err := s2.SecretGet("n10"); err != nil || v != secret(1010) {
		t.Fatalf("n10 = %q, %v", v, err)
	}
	if v, _, err := s2.SecretGet("n200"); err != nil || v != secret(200) {
		t.Fatalf("n200 = %q, %v", v, err)
	}
	text, rec, err := s2.RecordGet(early, 0, 0)
	if want := "log line: [REDACTED:early] end"; err != nil || text != want || rec.Size != len(want) {
		t.Fatalf("early record = %q (size %d), %v; want %q", text, rec.Size, err, want)
	}
	if srv, err := s2.ServerGet("srv7"); err != nil || srv.Headers["Authorization"] != "HEADERVALUE-0007" {
		t.Fatalf("srv7 = %+v, %v", srv, err)
	}
	var row map[string]any
	s2.view(func(tx *bolt.Tx) error { return json.Unmarshal(tx.Bucket(bucketServers).Get([]byte("srv7")), &row) })
	if row["headers"] != nil || row["headers_sealed"] == nil {
		t.Fatalf("stored server row = %v, want sealed headers only", row)
	}
}

func TestPassphraseFromEnv(t *testing.T) {
	f := PassphraseFromEnv()
	t.Setenv("TAI_VAULT_PASSPHRASE", "from-env")
	if p, err := f(); p != "from-env" || err != nil {
		t.Fatalf("= %q, %v", p, err)
	}
	t.Setenv("TAI_VAULT_PASSPHRASE", "")
	if _, err := f(); err == nil || !strings.Contains(err.Error(), "TAI_VAULT_PASSPHRASE") {
		t.Fatalf("unset: %v", err)
	}
}

// BenchmarkDeriveDefaultKDF is what a user pays once per process to open
// a sealed vault.
func BenchmarkDeriveDefaultKDF(b *testing.B) {
	m := &sealMeta{KDF: "scrypt", N: defaultKDF.N, R: defaultKDF.R, P: defaultKDF.P, Salt: make([]byte, 16), Cipher: "xchacha20poly1305"}
	for b.Loop() {
		if _, err := deriveKey("passphrase", m); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDeriveKeyRejectsUnknownSeals(t *testing.T) {
	tests := []struct {
		name string
		m    sealMeta
		want string
	}{
		{"unknown kdf", sealMeta{KDF: "pbkdf2", N: 1024, R: 8, P: 1, Cipher: "xchacha20poly1305"}, "does not know"},
		{"unknown cipher", sealMeta{KDF: "scrypt", N: 1024, R: 8, P: 1, Cipher: "rot13"}, "does not know"},
		{"huge N", sealMeta{KDF: "scrypt", N: 1 << 30, R: 8, P: 1, Cipher: "xchacha20poly1305"}, "out of range"},
		{"N not a power of two", sealMeta{KDF: "scrypt", N: 1000, R: 8, P: 1, Cipher: "xchacha20poly1305"}, "derive the seal key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := deriveKey("pw", &tt.m); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("deriveKey = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
