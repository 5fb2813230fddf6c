package vault

import (
	"path/filepath"
	"testing"
)

// testKDF keeps Seal and unlock fast in tests.
var testKDF = kdfParams{N: 1 << 10, R: 8, P: 1}

// testOptions returns options with a cheap KDF and, when pass is not "",
// a passphrase source that counts its calls.
func testOptions(pass string, calls *int) *Options {
	o := &Options{kdf: testKDF}
	if pass != "" {
		o.Passphrase = func() (string, error) {
			if calls != nil {
				*calls++
			}
			return pass, nil
		}
	}
	return o
}

// newStore opens a fresh vault in a temporary folder.
func newStore(t testing.TB, opts *Options) *Store {
	t.Helper()
	if opts == nil {
		opts = testOptions("", nil)
	}
	s, err := Open(filepath.Join(t.TempDir(), "vault.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
