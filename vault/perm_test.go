package vault

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLooseVaultIsRefused: a vault file or folder someone else could read
// or write, or that another user owns, is refused with a message saying
// why and how to fix it, as ssh refuses a loose private key; symbolic
// links are resolved and checked, and a dangling one is never followed
// into creating a file.
func TestLooseVaultIsRefused(t *testing.T) {
	root := os.Geteuid() == 0
	type setup func(t *testing.T, dir string) string // returns the path to open
	existing := func(t *testing.T, dir string) string {
		t.Helper()
		p := filepath.Join(dir, "vault.db")
		s, err := Open(p, testOptions("", nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SecretSet("k", "secret-in-loose-vault", nil); err != nil {
			t.Fatal(err)
		}
		s.Close()
		return p
	}
	tests := []struct {
		name  string
		setup setup
		want  string // "" means it opens
	}{
		{"0600 file in a 0700 folder", existing, ""},
		{"world-writable file", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			os.Chmod(p, 0o666)
			return p
		}, "writable by its group or by others (mode 0666)"},
		{"group-writable file", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			os.Chmod(p, 0o620)
			return p
		}, "chmod 600"},
		{"world-readable file", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			os.Chmod(p, 0o644)
			return p
		}, "readable by its group or by others (mode 0644)"},
		{"empty 0666 file planted by someone", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "vault.db")
			os.WriteFile(p, nil, 0o666)
			os.Chmod(p, 0o666)
			return p
		}, "mode 0666"},
		{"world-writable folder", func(t *testing.T, dir string) string {
			os.Chmod(dir, 0o777)
			return filepath.Join(dir, "vault.db")
		}, "folder"},
		{"sticky world-writable folder (like /tmp)", func(t *testing.T, dir string) string {
			os.Chmod(dir, 0o777|fs.ModeSticky)
			return filepath.Join(dir, "vault.db")
		}, ""},
		{"link to a good vault", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			l := filepath.Join(dir, "link.db")
			os.Symlink(p, l)
			return l
		}, ""},
		{"link to a loose vault", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			os.Chmod(p, 0o666)
			l := filepath.Join(dir, "link.db")
			os.Symlink(p, l)
			return l
		}, "mode 0666"},
		{"dangling link", func(t *testing.T, dir string) string {
			l := filepath.Join(dir, "link.db")
			os.Symlink(filepath.Join(dir, "elsewhere.db"), l)
			return l
		}, "does not exist; tai does not create a vault through a dangling link"},
		{"linked folder that is loose", func(t *testing.T, dir string) string {
			real := filepath.Join(dir, "real")
			os.Mkdir(real, 0o777)
			os.Chmod(real, 0o777)
			l := filepath.Join(dir, "linked")
			os.Symlink(real, l)
			return filepath.Join(l, "vault.db")
		}, "writable by its group or by others"},
		{"journal beside the vault is a link", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			os.Remove(p + JournalSuffix)
			os.Symlink(filepath.Join(dir, "stolen"), p+JournalSuffix)
			return p
		}, "not a plain file"},
		{"generation file beside the vault is world-writable", func(t *testing.T, dir string) string {
			p := existing(t, dir)
			os.WriteFile(p+GenerationSuffix, nil, 0o600)
			os.Chmod(p+GenerationSuffix, 0o666)
			return p
		}, "mode 0666"},
	}
	if root {
		// Another user's files can be made only as root.
		tests = append(tests, []struct {
			name  string
			setup setup
			want  string
		}{
			{"file owned by another user", func(t *testing.T, dir string) string {
				p := existing(t, dir)
				os.Chown(p, 65534, 65534)
				return p
			}, "belongs to another user (uid 65534"},
			{"folder owned by another user", func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "theirs")
				os.Mkdir(sub, 0o700)
				os.Chown(sub, 65534, 65534)
				return filepath.Join(sub, "vault.db")
			}, "belongs to another user"},
			{"link planted by another user", func(t *testing.T, dir string) string {
				p := existing(t, dir)
				l := filepath.Join(dir, "link.db")
				os.Symlink(p, l)
				os.Lchown(l, 65534, 65534)
				return l
			}, "belongs to another user"},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "v")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := tt.setup(t, dir)
			s, err := Open(path, testOptions("", nil))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Open refused a safe vault: %v", err)
				}
				defer s.Close()
				if err := s.SecretSet("k2", "v2-value", nil); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("Open accepted it")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line saying %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "elsewhere.db")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a file was created through the dangling link")
			}
		})
	}
}
