package vault

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// ErrDamaged reports a vault file that is not whole: cut short, overwritten
// or otherwise inconsistent with its own header. Nothing is written to it.
var ErrDamaged = errors.New("the vault is damaged")

// damagedError is the one line a damaged vault gets: where it is, what is
// wrong, and what to do. It wraps ErrDamaged.
func damagedError(path, what string) error {
	return &damaged{fmt.Sprintf("vault: the vault at %s is damaged (%s): restore a copy of it, or point --vault or TAI_VAULT elsewhere", path, what)}
}

// damaged is a damaged-vault error.
type damaged struct{ msg string }

// Error returns the message.
func (d *damaged) Error() string { return d.msg }

// Is makes errors.Is(err, ErrDamaged) hold.
func (d *damaged) Is(target error) bool { return target == ErrDamaged }

// bbolt's meta page, as laid out on disk after the 16-byte page header:
// magic, version, page size, flags (4 bytes each), the root bucket (root
// page and sequence), the freelist page, the high-water page id, the
// transaction id (8 bytes each), then an FNV-64a checksum of all of that.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	metaOff        = 16
	metaSumOff     = metaOff + 56 // the checksum follows 56 bytes of fields
	metaEnd        = metaSumOff + 8
	minBoltPage    = 512
	maxBoltPage    = 1 << 16
	headerReadSize = 4096
)

// boltMeta is what checkHeader reads of one meta page.
type boltMeta struct {
	pageSize   uint32
	pgid, txid uint64
}

// readMeta decodes and validates the meta page in b (a page's first
// bytes), reporting why it is not one.
func readMeta(b []byte) (boltMeta, string) {
	if len(b) < metaEnd {
		return boltMeta{}, "too short for a header"
	}
	le := binary.LittleEndian
	if le.Uint32(b[metaOff:]) != boltMagic {
		return boltMeta{}, "no vault header: it is not a tai vault, or its start was overwritten"
	}
	if le.Uint32(b[metaOff+4:]) != boltVersion {
		return boltMeta{}, fmt.Sprintf("unknown format version %d", le.Uint32(b[metaOff+4:]))
	}
	h := fnv.New64a()
	h.Write(b[metaOff:metaSumOff])
	if h.Sum64() != le.Uint64(b[metaSumOff:]) {
		return boltMeta{}, "the header's checksum does not match"
	}
	m := boltMeta{pageSize: le.Uint32(b[metaOff+8:]), pgid: le.Uint64(b[metaOff+40:]), txid: le.Uint64(b[metaOff+48:])}
	if m.pageSize < minBoltPage || m.pageSize > maxBoltPage || m.pageSize&(m.pageSize-1) != 0 {
		return boltMeta{}, fmt.Sprintf("impossible page size %d", m.pageSize)
	}
	return m, ""
}

// checkHeader checks the open vault file f against its own header before
// bbolt maps it: one of its two meta pages must be valid, and the file must
// hold every page the newer valid one says is in use (a vault cut short
// would otherwise fault, or fail an assertion, deep inside the map). An
// empty file passes only when empty is allowed (a vault being created).
func checkHeader(f *os.File, path string, empty bool) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("vault: %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return notRegularError(path, st.Mode())
	}
	size := st.Size()
	if size == 0 {
		if empty {
			return nil
		}
		return damagedError(path, "the file is empty")
	}
	first := make([]byte, headerReadSize)
	n, err := f.ReadAt(first, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("vault: read %s: %w", path, err)
	}
	m0, why0 := readMeta(first[:n])
	pageSize := int64(headerReadSize)
	if why0 == "" {
		pageSize = int64(m0.pageSize)
	}
	second := make([]byte, metaEnd)
	var m1 boltMeta
	why1 := "missing: the file is shorter than two pages"
	if k, err := f.ReadAt(second, pageSize); k == len(second) || (err == nil && k > 0) {
		m1, why1 = readMeta(second[:k])
	}
	m := m0
	switch {
	case why0 != "" && why1 != "":
		return damagedError(path, "first header: "+why0+"; second header: "+why1)
	case why0 != "":
		m = m1
	case why1 == "" && m1.txid > m0.txid:
		m = m1
	}
	if need := int64(m.pgid) * int64(m.pageSize); size < need {
		return damagedError(path, fmt.Sprintf("it is %d bytes long, but its header says it holds %d", size, need))
	}
	return nil
}

// guard runs fn, which reads the memory-mapped vault, turning a fault in
// the map (a file cut short under it, SIGBUS) and bbolt's consistency
// panics ("assertion failed: …", "invalid page type") into a damaged-vault
// error. Any other panic is not the file's fault and goes on.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if re, ok := r.(runtime.Error); ok {
			if _, fault := re.(interface{ Addr() uintptr }); fault {
				err = damagedError(path, "reading it faulted: it was cut short or changed underneath")
				return
			}
			panic(r)
		}
		if s, ok := r.(string); ok {
			err = damagedError(path, s)
			return
		}
		panic(r)
	}()
	return fn()
}
