package vaulttest

import (
	"path/filepath"
	"testing"

	"tai/vault"
)

// Open opens a fresh vault in the test's temporary directory, closed when
// the test ends, and fails the test when it cannot.
func Open(t testing.TB) *vault.Store {
	t.Helper()
	s, err := vault.Open(filepath.Join(t.TempDir(), "vault.db"), nil)
	if err != nil {
		t.Fatalf("open vault: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
