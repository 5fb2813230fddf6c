package vault

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// damagedVault writes a vault holding some secrets and records and
// returns its path and bytes.
func damagedVault(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := Open(path, testOptions("", nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := s.SecretSet(fmt.Sprintf("s%d", i), strings.Repeat("v", 500)+fmt.Sprint(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordPut(strings.Repeat("record text ", 4000), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// inUse is how many bytes the newer meta page of b says are in use.
func inUse(b []byte) int {
	m0, _ := readMeta(b)
	m1, _ := readMeta(b[4096:])
	m := max(m0.pgid, m1.pgid)
	if m0.txid > m1.txid {
		m = m0.pgid
	} else if m1.txid > m0.txid {
		m = m1.pgid
	}
	return int(m) * 4096
}

// setMetaPgid rewrites the high-water mark of both meta pages (page size
// 4096) with a valid checksum, so the header passes and the map does not.
func setMetaPgid(b []byte, pgid uint64) {
	for _, off := range []int{0, 4096} {
		m := b[off+metaOff:]
		binary.LittleEndian.PutUint64(m[40:], pgid)
		h := fnv.New64a()
		h.Write(m[:metaSumOff-metaOff])
		binary.LittleEndian.PutUint64(m[metaSumOff-metaOff:], h.Sum64())
	}
}

// TestDamagedVaultIsOneClearError: a vault cut short, overwritten or
// inconsistent with its header gives one line naming the file and what to
// do, wrapping ErrDamaged; nothing crashes and the file is not changed.
func TestDamagedVaultIsOneClearError(t *testing.T) {
	tests := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"cut to 8192 bytes", func(b []byte) []byte { return b[:8192] }},
		{"cut to half the pages in use", func(b []byte) []byte { return b[:inUse(b)/2] }},
		{"cut short of its last page", func(b []byte) []byte { return b[:inUse(b)-4096] }},
		{"cut inside the first page", func(b []byte) []byte { return b[:100] }},
		{"both headers zeroed", func(b []byte) []byte {
			clear(b[:8192])
			return b
		}},
		{"pages after the headers overwritten", func(b []byte) []byte {
			for i := 8192; i < len(b); i++ {
				b[i] = 0xA5
			}
			return b
		}},
		{"root page at the high-water mark", func(b []byte) []byte {
			// The header is made to agree with a file that ends just
			// before the root page.
			root := binary.LittleEndian.Uint64(b[4096+metaOff+16:])
			if r0 := binary.LittleEndian.Uint64(b[metaOff+16:]); r0 > root {
				root = r0
			}
			b = b[:root*4096]
			setMetaPgid(b, root)
			return b
		}},
		{"header claims fewer pages than are used", func(b []byte) []byte {
			b = b[:4*4096]
			setMetaPgid(b, 4)
			return b
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, orig := damagedVault(t)
			bad := tt.damage(bytes.Clone(orig))
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			var err error
			s, err := Open(path, testOptions("", nil))
			if err == nil {
				defer s.Close()
				_, _, err = s.SecretGet("s1")
				if err == nil {
					_, err = s.SecretList()
				}
				if err == nil {
					err = s.SecretSet("new", "value-after-damage", nil)
				}
			}
			if err == nil {
				t.Fatal("a damaged vault gave no error")
			}
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("error does not wrap ErrDamaged: %v", err)
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, path) || !strings.Contains(msg, "damaged") || !strings.Contains(msg, "restore a copy") || strings.Contains(msg, "\n") {
				t.Errorf("not one clear line naming the file and the remedy: %q", msg)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, bad) {
				t.Error("the damaged file was changed")
			}
		})
	}
}

// TestVaultPathsThatAreNoFiles: a device, a folder, a /proc file (regular,
// size zero, yet with content) and a named pipe get clear errors; an empty
// regular file is a new vault.
func TestVaultPathsThatAreNoFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/null", "a character device, not a vault file"},
		{dir, "a folder, not a vault file"},
		{"/proc/self/status", "not a vault file"},
		{fifo, "a named pipe, not a vault file"},
	} {
		_, err := Open(tc.path, testOptions("", nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s) = %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(empty, testOptions("", nil))
	if err != nil {
		t.Fatalf("an empty regular file is not a new vault: %v", err)
	}
	defer s.Close()
	if err := s.SecretSet("k", "v-in-empty", nil); err != nil {
		t.Fatal(err)
	}
}

// TestGuardTurnsAFaultIntoAnError: memory mapped from a file that is then
// cut short faults (SIGBUS) when read; under guard that is a damaged-vault
// error, not a crash. (checkHeader stops a file already short; this is
// the file cut while in use.)
func TestGuardTurnsAFaultIntoAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(path, bytes.Repeat([]byte{1}, 2*4096), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 2*4096, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var got byte
	err = guard(path, func() error {
		got = mem[4096]
		return nil
	})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "faulted") {
		t.Fatalf("guard = %v (read %d), want a damaged-vault error", err, got)
	}
	// Other panics are not the file's doing and go on.
	defer func() {
		if r := recover(); r == nil {
			t.Error("a panic inside guard that is no memory fault was swallowed")
		}
	}()
	guard(path, func() error {
		panic(errors.New("not a fault of the file"))
	})
}
