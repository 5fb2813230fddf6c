package vault

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// JournalSuffix names the audit journal beside the vault (vault.db-journal).
//
// AuditAppend writes each entry to the journal with one write(2) before it
// returns, so a crash or SIGKILL of tai right after a call loses nothing.
// Entries reach the disk in groups: at most FlushDelay after an append,
// the entries written since (by any caller, and any process) are folded
// into the bbolt trail in one write transaction, which syncs the file, and
// the journal is emptied. When the fold cannot run then (another process
// holds the vault, or it is sealed and this Store has no key), the journal
// itself is synced instead. Store.Close folds (or syncs) before it
// returns. A power loss can lose the entries of the last FlushDelay; it
// cannot damage the vault, whose file only bbolt writes.
//
// The journal is a header line, {"journal":"tai-audit-v1","epoch":…,
// "seq":…,"hash":…} naming the trail's end in bbolt when it was last
// emptied, then one JSON line per entry. Its flock(2) serialises appends
// between processes; a fold takes the vault's lock first, then the
// journal's. A tail torn by a power loss (a partial line, zeros, an entry
// that does not chain) is cut off at the next fold and an entry of kind
// "audit", subject "unclean shutdown", saying how many bytes were lost, is
// appended in its place, so AuditVerify can tell it from tampering. A
// Store remembers the last entry it appended; a fold that finds that
// entry gone (no power loss took it: the Store is still running) appends
// an entry of subject "journal cut" instead, which AuditVerify reports as
// a break.
const JournalSuffix = "-journal"

// FlushDelay bounds how long an audit entry stays only in the operating
// system's cache.
const FlushDelay = 50 * time.Millisecond

// journalMagic marks a journal header.
const journalMagic = "tai-audit-v1"

// Unclean shutdown entries: the kind and subject of the entry a fold
// appends where it cut off a torn tail.
const (
	auditKindAudit  = "audit"
	subjectUnclean  = "unclean shutdown"
	subjectCut      = "journal cut"
	journalHeadSize = 512 // bytes read to find the header line
	journalTailSize = 192 // bytes of the journal's end a Store remembers
)

// journalHeader is the journal's first line.
type journalHeader struct {
	Journal string `json:"journal"`
	Epoch   string `json:"epoch"`
	Seq     uint64 `json:"seq"`
	Hash    string `json:"hash"`
}

// journal is a Store's handle on the audit journal of its vault.
type journal struct {
	path string
	mu   sync.Mutex // serialises this Store's use of the journal
	f    *os.File
	// The journal as this Store last saw it under the lock: the header's
	// epoch, how many bytes were read, and the trail's last entry.
	epoch  string
	header []byte // the header line as read, newline included
	off    int64
	seq    uint64
	hash   string
	known  bool
	// tail is the last journalTailSize bytes (fewer in a shorter journal)
	// before off, as this Store wrote or read them: they end in the hash
	// (or MAC) of the last entry, or in the header, so finding them again
	// just before the end of the file shows with one read that no other
	// process appended or folded since. buf is refresh's room to read them.
	tail []byte
	buf  [journalTailSize + 1]byte
	line []byte // journalAppend's room to encode an entry
	// mine is the last entry this Store appended itself (Seq 0: none
	// since the last fold checked). While tai runs, a fold that finds it
	// gone from the trail knows the journal was cut or altered: no power
	// loss took it, since this process is still here.
	mine struct {
		seq  uint64
		hash string
	}
	// A flush is due (an entry was written since the last one).
	timer *time.Timer
	due   bool
	syncs atomic.Int64 // group flushes done, for tests
	// seal state as of stamp: whether entries need a MAC and under which
	// seal's key.
	sealStamp genStamp
	sealKnown bool
	sealSalt  []byte // nil when unsealed
}

// file returns the open journal, opening (creating 0600) it. j.mu held.
func (j *journal) file() (*os.File, error) {
	if j.f != nil {
		return j.f, nil
	}
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vault: open the audit journal: %w", err)
	}
	j.f, j.known = f, false
	return f, nil
}

// flock takes the journal's exclusive lock; the returned function releases
// it. j.mu held.
func (j *journal) flock() (func(), error) {
	f, err := j.file()
	if err != nil {
		return nil, err
	}
	if err := flockRetry(int(f.Fd()), unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("vault: lock the audit journal: %w", err)
	}
	return func() { _ = flockRetry(int(f.Fd()), unix.LOCK_UN) }, nil
}

// errJournalFold says the journal must be folded before an append: it has
// no header yet, or ends in a torn or foreign tail.
var errJournalFold = errors.New("vault: the audit journal needs a fold")

// refresh brings the cached end of the trail up to date with the journal.
// Lock held. It returns errJournalFold when the journal needs a fold
// first.
func (j *journal) refresh() error {
	f := j.f
	if j.known && len(j.tail) > 0 {
		// The common case: the journal still ends where this Store left
		// it, in the bytes it wrote or read last. One read, no parsing.
		buf := j.buf[:len(j.tail)+1]
		n, err := f.ReadAt(buf, j.off-int64(len(j.tail)))
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("vault: read the audit journal: %w", err)
		}
		if n >= len(j.tail) && bytes.Equal(buf[:len(j.tail)], j.tail) {
			if n == len(j.tail) {
				return nil // nothing after them
			}
			return j.readFrom(f) // entries another process appended
		}
		// Not there: another process folded the journal (a new header),
		// or it was cut or altered. Under the header this Store knows,
		// that is a cut the next fold must record.
		head := make([]byte, len(j.header))
		if len(j.header) <= len(j.buf) {
			head = j.buf[:len(j.header)]
		}
		if m, _ := f.ReadAt(head, 0); m == len(j.header) && bytes.Equal(head, j.header) {
			j.known = false
			return errJournalFold
		}
		j.known = false
	}
	head := make([]byte, journalHeadSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("vault: read the audit journal: %w", err)
	}
	h, hlen, ok := parseHeader(head[:n])
	if !ok {
		return errJournalFold
	}
	j.epoch, j.seq, j.hash, j.known = h.Epoch, h.Seq, h.Hash, true
	j.header = append(j.header[:0], head[:hlen]...)
	j.off, j.tail = 0, j.tail[:0]
	j.advance(head[:hlen])
	return j.readFrom(f)
}

// advance moves off past b, which this Store just wrote or read there,
// and keeps the tail. j.mu held.
func (j *journal) advance(b []byte) {
	j.off += int64(len(b))
	if len(b) >= journalTailSize {
		j.tail = append(j.tail[:0], b[len(b)-journalTailSize:]...)
		return
	}
	j.tail = append(j.tail, b...)
	if over := len(j.tail) - journalTailSize; over > 0 {
		j.tail = append(j.tail[:0], j.tail[over:]...)
	}
}

// readFrom reads the entries past what this Store read, checking that
// they continue the trail. Lock held.
func (j *journal) readFrom(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("vault: read the audit journal: %w", err)
	}
	if st.Size() == j.off {
		return nil
	}
	if st.Size() < j.off {
		j.known = false
		return errJournalFold
	}
	buf := make([]byte, st.Size()-j.off)
	if _, err := f.ReadAt(buf, j.off); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("vault: read the audit journal: %w", err)
	}
	for len(buf) > 0 {
		line, rest, ok := bytes.Cut(buf, []byte{'\n'})
		if !ok {
			return errJournalFold
		}
		var e AuditEntry
		if json.Unmarshal(line, &e) != nil || e.Seq != j.seq+1 || e.Prev != j.hash || auditHash(e) != e.Hash {
			return errJournalFold
		}
		j.advance(buf[:len(line)+1])
		j.seq, j.hash = e.Seq, e.Hash
		buf = rest
	}
	return nil
}

// parseHeader reads the header line at the start of b: the header, the
// line's length with its newline, and whether it is one.
func parseHeader(b []byte) (journalHeader, int, bool) {
	line, _, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return journalHeader{}, 0, false
	}
	var h journalHeader
	if json.Unmarshal(line, &h) != nil || h.Journal != journalMagic || h.Epoch == "" {
		return journalHeader{}, 0, false
	}
	return h, len(line) + 1, true
}

// journalFrame is one entry line read back from the journal.
type journalFrame struct {
	e          AuditEntry
	line       []byte // the entry's JSON, as stored in the vault
	start, end int64  // its offset, and just past its newline
	// trusted marks an entry this Store wrote or checked already: only its
	// Seq (and, for the last such, Hash) is set.
	trusted bool
}

// readJournal reads the whole journal: its header (ok false when there is
// none), the entries that parse and hash, in order, and where the valid
// part ends. Lock held.
//
// When the header is the one this Store last saw and names (baseSeq,
// baseHash), the entries up to what this Store wrote or checked (j.off)
// are not decoded again: they are returned as trusted frames numbered on
// from baseSeq, the last carrying j.hash. A fold then only stores them.
func (j *journal) readJournal(baseSeq uint64, baseHash string) (h journalHeader, frames []journalFrame, validEnd, size int64, ok bool, err error) {
	st, err := j.f.Stat()
	if err != nil {
		return h, nil, 0, 0, false, fmt.Errorf("vault: read the audit journal: %w", err)
	}
	data := make([]byte, st.Size())
	n, err := j.f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return h, nil, 0, 0, false, fmt.Errorf("vault: read the audit journal: %w", err)
	}
	data = data[:n]
	size = int64(len(data))
	h, hlen, ok := parseHeader(data)
	if !ok {
		return h, nil, 0, size, false, nil
	}
	at := int64(hlen)
	if j.known && h.Epoch == j.epoch && h.Seq == baseSeq && h.Hash == baseHash && j.off > at && j.off <= size && data[j.off-1] == '\n' {
		seq := baseSeq
		for rest := data[hlen:j.off]; len(rest) > 0; {
			line, after, _ := bytes.Cut(rest, []byte{'\n'})
			seq++
			frames = append(frames, journalFrame{e: AuditEntry{Seq: seq}, line: line, start: at, end: at + int64(len(line)+1), trusted: true})
			at += int64(len(line) + 1)
			rest = after
		}
		if seq != j.seq {
			// The count does not match what this Store knows: decode all.
			frames, at = frames[:0], int64(hlen)
		} else {
			frames[len(frames)-1].e.Hash = j.hash
		}
	}
	rest := data[at:]
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte{'\n'})
		if !found {
			break
		}
		var e AuditEntry
		if json.Unmarshal(line, &e) != nil || auditHash(e) != e.Hash {
			break
		}
		frames = append(frames, journalFrame{e: e, line: line, start: at, end: at + int64(len(line)+1)})
		at += int64(len(line) + 1)
		rest = after
	}
	return h, frames, at, size, true, nil
}

// reset empties the journal and writes a fresh header naming (seq, hash),
// the end of the trail in bbolt. Lock held.
func (j *journal) reset(seq uint64, hash string) error {
	var epoch [8]byte
	if _, err := rand.Read(epoch[:]); err != nil {
		return fmt.Errorf("vault: journal epoch: %w", err)
	}
	h := journalHeader{Journal: journalMagic, Epoch: hex.EncodeToString(epoch[:]), Seq: seq, Hash: hash}
	line, err := json.Marshal(h)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("vault: empty the audit journal: %w", err)
	}
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("vault: write the audit journal's header: %w", err)
	}
	j.epoch, j.seq, j.hash, j.known = h.Epoch, seq, hash, true
	j.header = append(j.header[:0], line...)
	j.off, j.tail = 0, j.tail[:0]
	j.advance(line)
	return nil
}

// close releases the descriptor. j.mu held.
func (j *journal) close() {
	if j.timer != nil {
		j.timer.Stop()
		j.timer = nil
	}
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// foldTx moves the journal's entries into the bbolt trail of tx, under
// the journal's lock (taken here, after the vault's). The journal is
// emptied by finish, which the caller calls once tx has ended, with
// whether it committed: only a committed fold empties it, and the
// journal's lock is held until then, so an entry is always in the
// journal, the vault file, or both. Entries the trail already holds (a
// fold that committed but died before emptying the journal) are skipped.
// At the first entry that does not continue the trail (a torn tail, or
// entries that do not chain or lack their MAC) the rest of the journal is
// cut off and an "unclean shutdown" entry records how many bytes were
// lost. key is the seal's
// audit key, nil when the vault is unsealed; on a sealed vault foldTx
// returns errNeedKey without it when there is anything to fold. then, when
// not nil, runs under the journal's lock after the fold (Seal anchors the
// trail there, so no entry can slip in between). finish is never nil;
// after an error the lock is already released. j.mu held, until finish
// returns.
func (s *Store) foldTx(tx *bolt.Tx, key []byte, then func() error) (finish func(committed bool) error, err error) {
	j := &s.journal
	unlock, err := j.flock()
	if err != nil {
		return func(bool) error { return nil }, err
	}
	finish = func(bool) error { unlock(); return nil }
	defer func() {
		if err != nil {
			// Nothing was folded: the lock goes now, not when the
			// caller's transaction ends (a passphrase may be asked for
			// before it is tried again).
			unlock()
			finish = func(bool) error { return nil }
		}
	}()
	// emptied is the finish of a fold that empties the journal down to a
	// header naming the trail's end (seq, hash).
	emptied := func(seq uint64, hash string) func(bool) error {
		return func(committed bool) error {
			defer unlock()
			if !committed {
				return nil
			}
			j.mine.seq, j.mine.hash = 0, ""
			return j.reset(seq, hash)
		}
	}

	seal, err := readSealMeta(tx)
	if err != nil {
		return finish, err
	}
	anchor, _ := readMark(tx, auditAnchorKey)
	seq, hash, consistent := trailEnd(tx)
	h, frames, validEnd, size, hasHeader, err := j.readJournal(seq, hash)
	if err != nil {
		return finish, err
	}
	if !consistent {
		// The trail in the vault does not end where its head says: folding
		// onto it would hide that. AuditVerify reports the break; the
		// journal keeps its entries meanwhile.
		if len(frames) > 0 || size > validEnd || !hasHeader && size > 0 {
			return finish, errTrailBroken
		}
		if then != nil {
			if err := then(); err != nil {
				return finish, err
			}
		}
		seq, hash, _ = trailEnd(tx)
		return emptied(seq, hash), nil
	}
	var todo []journalFrame
	torn := int64(0)
	if hasHeader {
		for _, fr := range frames {
			e := fr.e
			if fr.trusted {
				todo = append(todo, fr)
				seq = e.Seq
				if e.Hash != "" {
					hash = e.Hash
				}
				continue
			}
			if e.Seq <= seq {
				continue // folded already, by a fold that died before emptying the journal
			}
			// Entries after the seal's anchor carry a MAC (a seal made
			// before tai kept an audit key has no anchor, and no MACs).
			sealedAfter := seal != nil && anchor != nil && e.Seq > anchor.Seq
			if sealedAfter && key == nil {
				return finish, errNeedKey
			}
			if e.Seq != seq+1 || e.Prev != hash || (sealedAfter && !macOK(key, macEntry, e.Seq, e.Hash, e.MAC)) {
				validEnd = fr.start
				break
			}
			todo = append(todo, fr)
			seq, hash = e.Seq, e.Hash
		}
		torn = size - validEnd
	} else if size > 0 {
		torn = size
	}
	if seal != nil && anchor != nil && key == nil && (len(todo) > 0 || torn > 0) {
		return finish, errNeedKey
	}
	b, err := bucket(tx, bucketAudit)
	if err != nil {
		return finish, err
	}
	// Entries only ever go on at the end: full pages, half as many to
	// write as bbolt's default split leaves.
	b.FillPercent = 1
	for _, fr := range todo {
		if err := b.Put(seqKey(fr.e.Seq), fr.line); err != nil {
			return finish, err
		}
	}
	if len(todo) > 0 {
		if err := putMark(tx, auditHeadKey, macHead, seq, hash, key); err != nil {
			return finish, err
		}
	}
	var note *AuditEntry
	switch mine := j.mine; {
	case mine.seq > 0 && !holds(b, mine.seq, mine.hash):
		note = &AuditEntry{Kind: auditKindAudit, Subject: subjectCut,
			Outcome: fmt.Sprintf("entry %d, which this tai wrote while it ran, is gone: the trail went on only to entry %d and %d bytes of the journal after it were discarded; the audit journal or the vault file was cut, altered or replaced while tai ran (a power loss would have stopped it)", mine.seq, seq, torn)}
	case torn > 0:
		note = &AuditEntry{Kind: auditKindAudit, Subject: subjectUnclean,
			Outcome: fmt.Sprintf("%d bytes of the audit journal after entry %d were torn (the machine stopped before they reached the disk) and were discarded", torn, seq)}
	}
	if note != nil {
		note.Time = time.Now().UTC().Round(0)
		e, err := auditAppendTx(tx, *note, key)
		if err != nil {
			return finish, err
		}
		seq, hash = e.Seq, e.Hash
	}
	if then != nil {
		if err := then(); err != nil {
			return finish, err
		}
		seq, hash, _ = trailEnd(tx)
	}
	if len(todo) == 0 && note == nil && hasHeader && len(frames) == 0 && then == nil && h.Seq == seq && h.Hash == hash {
		j.mine.seq, j.mine.hash = 0, ""
		return finish, nil // the journal is its header alone, naming the trail's end
	}
	return emptied(seq, hash), nil
}

// holds reports whether the trail in b holds entry seq with hash.
func holds(b *bolt.Bucket, seq uint64, hash string) bool {
	v := b.Get(seqKey(seq))
	if v == nil {
		return false
	}
	var e AuditEntry
	return json.Unmarshal(v, &e) == nil && e.Hash == hash
}

// errTrailBroken says the trail in the vault does not end at its recorded
// head, so nothing is folded onto it.
var errTrailBroken = errors.New("vault: the audit trail's recorded head does not match its last entry: run audit_verify")

// trailEnd returns the end of the trail in the vault (the last entry's Seq
// and Hash; 0 and "" when empty) and whether it is consistent: the last
// entry matches the recorded head (a trail from before heads were kept has
// none, and counts as consistent).
func trailEnd(tx *bolt.Tx) (uint64, string, bool) {
	var seq uint64
	var hash string
	if b := tx.Bucket(bucketAudit); b != nil {
		if k, v := b.Cursor().Last(); k != nil {
			var last AuditEntry
			if len(k) != 8 || json.Unmarshal(v, &last) != nil {
				return 0, "", false
			}
			seq, hash = binary.BigEndian.Uint64(k), last.Hash
		}
	}
	head, err := readMark(tx, auditHeadKey)
	switch {
	case err != nil:
		return seq, hash, false
	case head == nil:
		return seq, hash, true
	}
	return seq, hash, head.Seq == seq && head.Hash == hash
}

// Sync makes every audit entry durable now and folds the journal into the
// vault file (or, when the fold cannot run, syncs the journal). Close does
// the same.
func (s *Store) Sync() error {
	j := &s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.timer != nil {
		j.timer.Stop()
	}
	j.due = false
	if j.f == nil {
		return nil
	}
	return s.foldOrSync()
}

// foldOrSync folds the journal, or syncs it when the fold cannot run now
// (the vault is locked, deleted, or sealed and this Store lacks the key).
// j.mu held.
func (s *Store) foldOrSync() error {
	if _, err := os.Stat(s.path); err == nil {
		// A vault deleted under a running tai is not recreated here.
		if err := s.fold(); err == nil {
			return nil
		}
	}
	return syncFile(s.journal.f)
}

// syncFile is fdatasync(2) of f, safe against a concurrent Close of f.
func syncFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("vault: sync the audit journal: %w", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fdatasync(int(fd)) }); err != nil {
		return fmt.Errorf("vault: sync the audit journal: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("vault: sync the audit journal: %w", serr)
	}
	return nil
}

// foldSize is the journal size past which a flush also folds it into the
// vault file: the fold stalls appends for one bbolt commit, so it is done
// in batches.
const foldSize = 1 << 20

// fold folds the journal into bbolt now. It never asks for the passphrase:
// without the key of a sealed vault it returns errNeedKey. j.mu held.
func (s *Store) fold() error {
	key := s.key.Load()
	finish := func(bool) error { return nil }
	err := s.updateOnce(func(tx *bolt.Tx) error {
		var audit []byte
		if m, err := readSealMeta(tx); err != nil {
			return err
		} else if m != nil && key != nil && bytes.Equal(key.salt, m.Salt) {
			audit = key.auditKey()
		}
		var err error
		finish, err = s.foldTx(tx, audit, nil)
		return err
	})
	if ferr := finish(err == nil); err == nil {
		err = ferr
	}
	return err
}

// flush is the group flush, run FlushDelay after the first append that
// found none due: one fdatasync of the journal makes every entry written
// by then durable, whoever wrote it; appends go on meanwhile. A journal
// past foldSize is also folded into the vault file.
func (s *Store) flush() {
	j := &s.journal
	j.mu.Lock()
	if !j.due || j.f == nil {
		j.mu.Unlock()
		return
	}
	j.due = false
	f := j.f
	j.mu.Unlock()
	err := syncFile(f)
	if err == nil {
		j.syncs.Add(1)
	}
	if err != nil {
		// Not durable yet: try again shortly.
		j.mu.Lock()
		if !s.closed.Load() {
			s.scheduleFlush(FlushDelay)
		}
		j.mu.Unlock()
		return
	}
	if st, err := f.Stat(); err == nil && st.Size() > foldSize {
		j.mu.Lock()
		if j.f != nil {
			_ = s.fold()
		}
		j.mu.Unlock()
	}
}

// scheduleFlush arms the group flush, unless one is due already. j.mu
// held.
func (s *Store) scheduleFlush(d time.Duration) {
	j := &s.journal
	if j.due {
		return
	}
	j.due = true
	if j.timer == nil {
		j.timer = time.AfterFunc(d, s.flush)
		return
	}
	j.timer.Reset(d)
}

// journalAppend writes e (already redacted, with its Time set) to the
// journal as the trail's next entry, with a MAC under key when key is not
// nil, and returns it as stored. stamp is the generation stamp the seal
// state was read at: when it changed, errSealChanged says so and nothing
// is written. j.mu held.
func (s *Store) journalAppend(e AuditEntry, key []byte, stamp genStamp) (AuditEntry, error) {
	j := &s.journal
	unlock, err := j.flock()
	if err != nil {
		return e, err
	}
	defer unlock()
	if now := s.gen.stamp(); now != stamp || !now.known() {
		return e, errSealChanged
	}
	if err := j.refresh(); err != nil {
		return e, err
	}
	e.Seq, e.Prev = j.seq+1, j.hash
	e.Hash, e.MAC = auditHash(e), ""
	if key != nil {
		e.MAC = auditMAC(key, macEntry, e.Seq, e.Hash)
	}
	line, err := appendEntryJSON(j.line[:0], e)
	if err != nil {
		return e, err
	}
	line = append(line, '\n')
	j.line = line
	if _, err := j.f.Write(line); err != nil {
		j.known = false
		return e, fmt.Errorf("vault: write the audit journal: %w", err)
	}
	j.advance(line)
	j.seq, j.hash = e.Seq, e.Hash
	j.mine.seq, j.mine.hash = e.Seq, e.Hash
	return e, nil
}

// errSealChanged says the seal (or the secrets) changed since the append
// read the seal state: it reads it again.
var errSealChanged = errors.New("vault: the seal changed during the append")

// auditSealState returns whether appends need a MAC as of the generation
// stamp (the salt of the seal, nil when unsealed). It reads the vault only
// when the stamp is not the one it last read at. j.mu held.
func (s *Store) auditSealState(stamp genStamp) ([]byte, error) {
	j := &s.journal
	if j.sealKnown && stamp.known() && stamp == j.sealStamp {
		return j.sealSalt, nil
	}
	var salt []byte
	err := s.viewOnce(func(tx *bolt.Tx) error {
		m, err := readSealMeta(tx)
		if err != nil || m == nil {
			return err
		}
		salt = append([]byte(nil), m.Salt...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	j.sealSalt, j.sealStamp, j.sealKnown = salt, stamp, true
	return salt, nil
}

// journalEntries returns the journal's entries that follow the trail's end
// (seq, hash) in bbolt and chain from it. Lock order: the caller holds the
// vault's lock (a view); the journal's is taken here. j.mu held.
func (s *Store) journalEntries(seq uint64, hash string) ([]AuditEntry, error) {
	j := &s.journal
	unlock, err := j.flock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	_, frames, _, _, ok, err := j.readJournal(^uint64(0), "")
	if err != nil || !ok {
		return nil, err
	}
	var out []AuditEntry
	for _, fr := range frames {
		if fr.e.Seq <= seq {
			continue
		}
		if fr.e.Seq != seq+1 || fr.e.Prev != hash {
			break
		}
		out = append(out, fr.e)
		seq, hash = fr.e.Seq, fr.e.Hash
	}
	return out, nil
}
