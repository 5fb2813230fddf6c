package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		name, vault, xdg, want string
	}{
		{"TAI_VAULT wins", "/x/v.db", "/data", "/x/v.db"},
		{"XDG_DATA_HOME", "", "/data", "/data/tai/vault.db"},
		{"relative XDG_DATA_HOME is ignored", "", "data", filepath.Join(home, ".local/share/tai/vault.db")},
		{"home", "", "", filepath.Join(home, ".local/share/tai/vault.db")},
		{"no home", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TAI_VAULT", tt.vault)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			if tt.want == "" {
				t.Setenv("HOME", "")
			}
			if got := DefaultPath(); got != tt.want {
				t.Fatalf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "vault.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if real, err := filepath.EvalSymlinks(path); err != nil || s.Path() != real {
		t.Fatalf("Path() = %q, want %q (%v)", s.Path(), real, err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700, filepath.Dir(dir): 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", p, got, want)
		}
	}
	// Reopening an existing vault keeps its contents.
	if err := s.ProfilePut("p", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.ProfileGet("p"); err != nil || string(got) != `{"a":1}` {
		t.Fatalf("reopened ProfileGet = %s, %v", got, err)
	}
}

func TestOpenRejectsBadPaths(t *testing.T) {
	dir := t.TempDir()
	notVault := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notVault, []byte(strings.Repeat("not a vault\n", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"empty", "", "no vault path"},
		{"folder", dir, "is a folder"},
		{"not a vault", notVault, "is not a tai vault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.path, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open(%q) = %v, want an error containing %q", tt.path, err, tt.want)
			}
		})
	}
}

func TestClosedStoreFails(t *testing.T) {
	s := newStore(t, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.SecretSet("a", "value", nil); !errors.Is(err, errClosed) {
		t.Fatalf("SecretSet after Close = %v, want errClosed", err)
	}
	if _, err := s.ProfileList(); !errors.Is(err, errClosed) {
		t.Fatalf("ProfileList after Close = %v, want errClosed", err)
	}
}

// Two Stores on one file in one process, used from many goroutines, must
// neither deadlock on the file lock nor lose writes.
func TestConcurrentStoresInOneProcess(t *testing.T) {
	a := newStore(t, nil)
	b, err := Open(a.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		s := a
		if g%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				name := "g" + uitoa(uint64(g)) + "-" + uitoa(uint64(i))
				if err := s.SecretSet(name, "value-"+name, nil); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.SecretGet(name); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list, err := a.SecretList()
	if err != nil || len(list) != 80 {
		t.Fatalf("SecretList = %d secrets, %v; want 80", len(list), err)
	}
}

func BenchmarkOpenSecretGetClose(b *testing.B) {
	s := newStore(b, nil)
	if err := s.SecretSet("token", "value-of-the-token", nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(s.Path(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.SecretGet("token"); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

func BenchmarkOpenProfileGetClose(b *testing.B) {
	s := newStore(b, nil)
	if err := s.ProfilePut("default", []byte(`{"provider":"openai","model":"gpt"}`)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(s.Path(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.ProfileGet("default"); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

func BenchmarkSecretSet(b *testing.B) {
	s := newStore(b, nil)
	for b.Loop() {
		if err := s.SecretSet("token", "value-of-the-token", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A vault file without some buckets (an empty file, or one made by an older
// tai) reads as empty and gains buckets on first write.
func TestOpenBareFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.db")
	db, err := bolt.Open(bare, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, path := range []string{empty, bare} {
		s, err := Open(path, nil)
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		if list, err := s.ServerList(); err != nil || len(list) != 0 {
			t.Fatalf("ServerList = %v, %v", list, err)
		}
		if n, err := s.AuditVerify(); n != 0 || err != nil {
			t.Fatalf("AuditVerify = %d, %v", n, err)
		}
		if got := s.Redact("nothing secret"); got != "nothing secret" {
			t.Fatalf("Redact = %q", got)
		}
		if err := s.ServerPut(Server{Name: "x", Transport: "stdio"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ServerGet("x"); err != nil {
			t.Fatal(err)
		}
	}
}
