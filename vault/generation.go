package vault

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// GenerationSuffix names the secrets generation file beside the vault
// (vault.db-gen): a plain file that grows by one byte whenever any process
// changes a secret or the seal, so a process can tell whether its cached
// secrets are still current with one fstat(2) and without opening bbolt.
const GenerationSuffix = "-gen"

// genFile is a Store's handle on the generation file of its vault.
//
// Writers append one byte inside the bbolt write transaction that changes
// the secrets, before it commits, while they hold the vault's exclusive
// file lock. A reader takes a stamp (inode and size, from one fstat of the
// descriptor it keeps open) before it reads the secrets under the shared
// lock, which waits for that writer to finish; a later stamp that differs
// means a change may have happened since. A writer that dies between its
// append and its commit only costs readers one needless reload.
type genFile struct {
	path string
	mu   sync.Mutex
	f    *os.File // nil until opened; reopened when the file was unlinked
}

// genStamp identifies one state of the generation file. The zero stamp
// means "unknown": it never matches, so the secrets are read again.
type genStamp struct {
	ino  uint64
	size int64
}

func (s genStamp) known() bool { return s.ino != 0 }

// open returns the descriptor, opening (creating 0600) the file when there
// is none or the one held was unlinked. g.mu held.
func (g *genFile) open() (*os.File, error) {
	if g.f != nil {
		var st unix.Stat_t
		if err := unix.Fstat(int(g.f.Fd()), &st); err == nil && st.Nlink > 0 {
			return g.f, nil
		}
		g.f.Close()
		g.f = nil
	}
	f, err := os.OpenFile(g.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	g.f = f
	return f, nil
}

// stamp returns the file's current stamp; the zero stamp when it cannot be
// had (the folder is read-only, say), so callers then read the vault every
// time.
func (g *genFile) stamp() genStamp {
	g.mu.Lock()
	defer g.mu.Unlock()
	var st unix.Stat_t
	if g.f != nil && unix.Fstat(int(g.f.Fd()), &st) == nil && st.Nlink > 0 {
		return genStamp{ino: st.Ino, size: st.Size}
	}
	f, err := g.open()
	if err != nil {
		return genStamp{}
	}
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 {
		return genStamp{}
	}
	return genStamp{ino: st.Ino, size: st.Size}
}

// bump records a change. It runs inside the write transaction making the
// change, so a failure fails that transaction: a change other processes
// could miss must not be committed.
func (g *genFile) bump() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, err := g.open()
	if err != nil {
		return fmt.Errorf("vault: record the secrets change in %s: %w", g.path, err)
	}
	if _, err := f.Write([]byte{'+'}); err != nil {
		return fmt.Errorf("vault: record the secrets change in %s: %w", g.path, err)
	}
	return nil
}

// close releases the descriptor.
func (g *genFile) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.f != nil {
		g.f.Close()
		g.f = nil
	}
}

// FileRecheck is how often, at most, Redactor looks at the vault file
// itself: a file replaced or rewritten behind tai's back (a backup copied
// over it, say) changes no generation, and its secrets are redacted from
// the first look that sees it, within FileRecheck.
const FileRecheck = 50 * time.Millisecond

// fileWatch keeps the last stat of the vault file, taken at most every
// every.
type fileWatch struct {
	mu    sync.Mutex
	every time.Duration
	at    time.Time // of the last stat; zero before the first
	last  fileStamp
}

// fileStamp identifies one state of the vault file's contents: any write
// changes its size, mtime or at least its ctime, which no one can set
// back; another file put in its place changes its inode.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// current returns the vault file's stamp: the last one taken, or a new
// one when that is older than every or fresh is set. A stat that fails
// (the file deleted, say) keeps the last stamp: the secrets read from the
// file as it was are still the best knowledge there is.
func (w *fileWatch) current(path string, fresh bool) fileStamp {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if !fresh && !w.at.IsZero() && now.Sub(w.at) < w.every {
		return w.last
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err == nil {
		w.last = fileStamp{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	}
	w.at = now
	return w.last
}
