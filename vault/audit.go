package vault

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The audit trail's marks in the meta bucket. auditHeadKey holds the last
// entry's Seq and Hash, so AuditVerify notices entries cut off the end of
// the trail. auditAnchorKey holds the head as it was when the vault was
// sealed: entries up to it keep their plain hashes, every later one
// carries a MAC.
var (
	auditHeadKey   = []byte("audit_head")
	auditAnchorKey = []byte("audit_anchor")
)

// auditHead is a mark on the trail (the head or the seal's anchor). MAC,
// set on a sealed vault, is auditMAC over Seq and Hash under the domain of
// the row it is stored in, so one mark cannot stand in for the other.
type auditHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
	MAC  string `json:"mac,omitempty"`
}

// MAC domains: an entry, the head, the seal's anchor.
const (
	macEntry  = "entry"
	macHead   = "head"
	macAnchor = "anchor"
)

// auditMAC is the HMAC-SHA256, hex-encoded, under the audit key of a
// domain tag, the domain, seq and hash, each as a uvarint length and its
// bytes. An entry's Hash covers all its other fields, so a MAC over it
// covers the whole entry.
func auditMAC(key []byte, domain string, seq uint64, hash string) string {
	m := hmac.New(sha256.New, key)
	var buf []byte
	for _, f := range [...]string{"tai-audit-mac-v1", domain, strconv.FormatUint(seq, 10), hash} {
		buf = binary.AppendUvarint(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	m.Write(buf)
	return hex.EncodeToString(m.Sum(nil))
}

// macOK reports whether mac is auditMAC(key, domain, seq, hash), in
// constant time.
func macOK(key []byte, domain string, seq uint64, hash, mac string) bool {
	return mac != "" && hmac.Equal([]byte(mac), []byte(auditMAC(key, domain, seq, hash)))
}

// auditHash is the SHA-256, hex-encoded, of a canonical encoding of every
// field of e but Hash: a domain tag, then each field as a uvarint length
// and its bytes (integers and the time as decimal, the time in Unix
// nanoseconds), so no two different entries encode alike.
func auditHash(e AuditEntry) string {
	var room [256]byte
	buf := room[:0]
	field := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	number := func(n int64) {
		var digits [20]byte
		d := strconv.AppendInt(digits[:0], n, 10)
		buf = binary.AppendUvarint(buf, uint64(len(d)))
		buf = append(buf, d...)
	}
	field("tai-audit-v1")
	field(strconv.FormatUint(e.Seq, 10)) // a uint64 past int64's range stays whole
	number(e.Time.UnixNano())
	field(e.Kind)
	field(e.Subject)
	field(e.Digest)
	field(e.Outcome)
	number(int64(e.Duration))
	number(int64(e.Size))
	field(e.Prev)
	if e.Session != "" {
		// Entries without a session hash as they did before the field.
		field("session")
		field(e.Session)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// AuditAppend adds e to the trail and returns it as stored: Seq is the next
// number, Time is now when zero, Prev is the last entry's Hash and Hash
// seals it all. Subject and Outcome are redacted first, then every text
// field is capped at AuditFieldMax bytes; when the secrets cannot be read
// the entry is not recorded and the error says why.
//
// The entry is written to the audit journal beside the vault with one
// write(2) before AuditAppend returns, and reaches the disk within
// FlushDelay (see JournalSuffix); concurrent appends, of this process and
// others, share that flush.
//
// On a sealed vault the entry and the recorded head also carry a MAC under
// the seal's audit key, so AuditAppend needs the passphrase there (asked
// for like any sealed read). Without it the entry
// is not recorded and the error wraps ErrNoPassphrase (or
// ErrWrongPassphrase): an entry anyone could have written would not be
// evidence. On an unsealed vault AuditAppend never asks.
func (s *Store) AuditAppend(e AuditEntry) (AuditEntry, error) {
	return s.auditAppend(nil, e)
}

// AuditAppendWith is AuditAppend with red, a Redactor the caller had from
// this Store's Redactor a moment ago: while no secret and no seal changed
// since it was made, it redacts the entry, which saves AuditAppend a look
// at the secrets. Otherwise AuditAppendWith looks again, as AuditAppend
// does.
func (s *Store) AuditAppendWith(red *Redactor, e AuditEntry) (AuditEntry, error) {
	if red == nil || !red.stamp.known() {
		red = nil
	}
	return s.auditAppend(red, e)
}

// auditAppend appends in, redacted by red when red is current (nil: look
// at the secrets first). On an error the entry returned is the redacted
// one, or none when nothing could redact it.
func (s *Store) auditAppend(red *Redactor, in AuditEntry) (AuditEntry, error) {
	if in.Time.IsZero() {
		in.Time = time.Now()
	}
	in.Time = in.Time.UTC().Round(0)
	var stamp genStamp
	if red != nil {
		stamp = red.stamp
	}
	j := &s.journal
	var last error
	var e AuditEntry
	redactBy := func(red *Redactor) {
		e = in
		e.Subject = red.Redact(e.Subject)
		e.Outcome = red.Redact(e.Outcome)
		capAuditFields(red, &e)
	}
	given := red != nil // the caller's Redactor, not yet checked
	for try := 0; try < 8; try++ {
		if s.closed.Load() {
			return e, errClosed
		}
		looked := false
		switch {
		case red == nil || try > 0 && given:
			// The first look, or a look again when the caller's Redactor
			// was not current. journalAppend checks the stamp again under
			// the journal's lock.
			var err error
			if red, stamp, err = s.redactorAt(); err != nil {
				return e, fmt.Errorf("vault: the audit entry was not recorded: %w", err)
			}
			given, looked = false, true
			redactBy(red)
		case try == 0:
			redactBy(red)
		}
		j.mu.Lock()
		if try > 0 && !looked {
			// The trail changed under this append's own look: the next
			// try holds to the stamp as it is now.
			stamp = s.gen.stamp()
		}
		salt, err := s.auditSealState(stamp)
		if err != nil {
			j.mu.Unlock()
			return e, fmt.Errorf("vault: the audit entry was not recorded: %w", err)
		}
		var key []byte
		if salt != nil {
			k := s.key.Load()
			if k == nil || !bytes.Equal(k.salt, salt) {
				j.mu.Unlock()
				if err := s.unlock(); err != nil {
					if errors.Is(err, ErrNoPassphrase) || errors.Is(err, ErrWrongPassphrase) {
						err = fmt.Errorf("vault: the audit entry was not recorded: a sealed vault signs its audit trail with the seal key: %w", err)
					}
					return e, err
				}
				continue
			}
			key = k.auditKey()
		}
		out, err := s.journalAppend(e, key, stamp)
		switch {
		case err == nil:
			s.scheduleFlush(FlushDelay)
			j.mu.Unlock()
			return out, nil
		case errors.Is(err, errSealChanged):
			last = err
		case errors.Is(err, errJournalFold):
			// No header yet, or a tail this Store cannot continue: fold
			// (which recovers a torn tail) and try again.
			last = s.fold()
			if last != nil && !errors.Is(last, errNeedKey) {
				j.mu.Unlock()
				return e, fmt.Errorf("vault: the audit entry was not recorded: %w", last)
			}
		default:
			j.mu.Unlock()
			return e, err
		}
		j.mu.Unlock()
	}
	return e, fmt.Errorf("vault: the audit entry was not recorded: the trail kept changing under it (%v); try again", last)
}

// auditAppendTx appends e, with MACs under key when key is not nil.
func auditAppendTx(tx *bolt.Tx, e AuditEntry, key []byte) (AuditEntry, error) {
	b, err := bucket(tx, bucketAudit)
	if err != nil {
		return e, err
	}
	e.Seq, e.Prev = 1, ""
	if k, v := b.Cursor().Last(); k != nil {
		var last AuditEntry
		if err := json.Unmarshal(v, &last); err != nil {
			return e, fmt.Errorf("vault: the last audit entry is invalid JSON (%v): run audit_verify", err)
		}
		e.Seq, e.Prev = binary.BigEndian.Uint64(k)+1, last.Hash
	}
	e.Hash, e.MAC = auditHash(e), ""
	if key != nil {
		e.MAC = auditMAC(key, macEntry, e.Seq, e.Hash)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	if err := b.Put(seqKey(e.Seq), data); err != nil {
		return e, err
	}
	return e, putMark(tx, auditHeadKey, macHead, e.Seq, e.Hash, key)
}

// putMark stores a mark (the head or the anchor), with its MAC under key
// when key is not nil.
func putMark(tx *bolt.Tx, row []byte, domain string, seq uint64, hash string, key []byte) error {
	h := auditHead{Seq: seq, Hash: hash}
	if key != nil {
		h.MAC = auditMAC(key, domain, seq, hash)
	}
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	meta, err := bucket(tx, bucketMeta)
	if err != nil {
		return err
	}
	return meta.Put(row, data)
}

// readMark returns the mark stored in row, nil when there is none.
func readMark(tx *bolt.Tx, row []byte) (*auditHead, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return nil, nil
	}
	v := meta.Get(row)
	if v == nil {
		return nil, nil
	}
	h := new(auditHead)
	if err := json.Unmarshal(v, h); err != nil {
		return nil, err
	}
	return h, nil
}

// anchorTx anchors the trail to key when the vault is sealed: the head as
// recorded (else the last entry, for a trail from before heads were
// recorded or whose head row is unreadable) becomes the anchor, and both
// marks get their MACs. Entries up to the anchor keep their plain hashes;
// a break already in them is still reported, since the anchor keeps what
// the head said.
func anchorTx(tx *bolt.Tx, key []byte) error {
	head, _ := readMark(tx, auditHeadKey)
	var seq uint64
	var hash string
	switch {
	case head != nil:
		seq, hash = head.Seq, head.Hash
	default:
		if b := tx.Bucket(bucketAudit); b != nil {
			if k, v := b.Cursor().Last(); len(k) == 8 {
				var last AuditEntry
				_ = json.Unmarshal(v, &last) // a broken entry is reported by AuditVerify
				seq, hash = binary.BigEndian.Uint64(k), last.Hash
			}
		}
	}
	if err := putMark(tx, auditAnchorKey, macAnchor, seq, hash, key); err != nil {
		return err
	}
	return putMark(tx, auditHeadKey, macHead, seq, hash, key)
}

// AuditTail returns the last n entries (n <= 0: all) of kind ("" for every
// kind), in chronological order: oldest first, newest last. Entries still
// in the journal are included.
func (s *Store) AuditTail(n int, kind string) ([]AuditEntry, error) {
	var out []AuditEntry
	j := &s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	err := s.view(func(tx *bolt.Tx) error {
		out = out[:0]
		seq, hash, _ := trailEnd(tx)
		pending, err := s.journalEntries(seq, hash)
		if err != nil {
			return err
		}
		for i := len(pending) - 1; i >= 0 && (n <= 0 || len(out) < n); i-- {
			if kind == "" || pending[i].Kind == kind {
				out = append(out, pending[i])
			}
		}
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && (n <= 0 || len(out) < n); k, v = c.Prev() {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("vault: audit entry %d is invalid JSON (%v): run audit_verify", binary.BigEndian.Uint64(k), err)
			}
			if kind == "" || e.Kind == kind {
				out = append(out, e)
			}
		}
		return nil
	})
	slices.Reverse(out)
	return out, err
}

// AuditVerify walks the whole trail and checks the chain: sequence numbers
// 1, 2, 3… with keys to match, each Prev equal to the entry before's Hash,
// each Hash recomputed, and the last entry equal to the recorded head. It
// returns how many entries hold and, at the first that does not, an
// *AuditBreak saying which and why.
//
// On a sealed vault it also checks the MACs: the seal's anchor, every
// entry appended after sealing and the recorded head must carry a MAC under
// the audit key, so rewriting entries, cutting them off the end or moving
// the head is found unless it was done with the passphrase. It needs the
// passphrase there; without it the error wraps ErrNoPassphrase. Entries
// from before the seal are protected by their hashes alone, as on an
// unsealed vault, where anyone able to write the file can rewrite the
// trail from any entry on and recompute every hash and the head.
//
// It first folds the journal into the trail. A tail of the journal torn by
// a power loss was cut off by a fold, which recorded an "unclean shutdown"
// entry in its place; when the chain holds and such entries exist,
// AuditVerify returns the count with an error wrapping
// ErrUncleanShutdown, which is not a break: entries were lost, none were
// altered.
// A "journal cut" entry, recorded by a tai that found entries it wrote
// gone while it ran, is a break.
func (s *Store) AuditVerify() (int, error) {
	var n int
	var brk error
	var unclean []AuditEntry
	j := &s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	finish := func(bool) error { return nil }
	err := s.update(func(tx *bolt.Tx) error {
		m, err := readSealMeta(tx)
		if err != nil {
			return err
		}
		k, err := s.sealer(tx)
		if err != nil {
			return err
		}
		finish, err = s.foldTx(tx, k.auditKey(), nil)
		if err != nil && !errors.Is(err, errTrailBroken) {
			return err
		}
		n, unclean, brk = verifyTx(tx, m != nil, k.auditKey())
		return nil
	})
	if ferr := finish(err == nil); err == nil {
		err = ferr
	}
	if errors.Is(err, ErrNoPassphrase) || errors.Is(err, ErrWrongPassphrase) {
		return 0, fmt.Errorf("vault: a sealed vault's audit trail is checked with the seal key: %w", err)
	}
	if err != nil {
		return 0, err
	}
	if brk == nil && len(unclean) > 0 {
		last := unclean[len(unclean)-1]
		return n, fmt.Errorf("%w: the trail holds, but tai stopped %d time(s) before audit entries reached the disk (a power loss or a crash of the machine), last at entry %d: %s",
			ErrUncleanShutdown, len(unclean), last.Seq, last.Outcome)
	}
	return n, brk
}

// verifyTx checks the trail. sealed says whether the vault has a seal
// record; key is its audit key (nil when unsealed, or sealed by a tai that
// kept none).
// It also returns the "unclean shutdown" entries it met.
func verifyTx(tx *bolt.Tx, sealed bool, key []byte) (n int, unclean []AuditEntry, brk error) {
	n, brk = verifyChain(tx, sealed, key, &unclean)
	return n, unclean, brk
}

func verifyChain(tx *bolt.Tx, sealed bool, key []byte, unclean *[]AuditEntry) (int, error) {
	head, err := readMark(tx, auditHeadKey)
	if err != nil {
		return 0, &AuditBreak{Reason: "the recorded head of the trail is invalid JSON"}
	}
	anchor, err := readMark(tx, auditAnchorKey)
	if err != nil {
		anchor = &auditHead{}
	}
	switch {
	case key != nil && (anchor == nil || !macOK(key, macAnchor, anchor.Seq, anchor.Hash, anchor.MAC)):
		return 0, &AuditBreak{Seq: 1, Reason: "the seal's anchor on the trail is missing or does not carry its MAC (it was removed or moved without the passphrase)"}
	case key == nil && anchor != nil:
		return 0, &AuditBreak{Seq: 1, Reason: noKeyReason(sealed)}
	}
	b := tx.Bucket(bucketAudit)
	n, want, prev := 0, uint64(1), ""
	if b != nil {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return n, &AuditBreak{Seq: want, Reason: "a key that is not a sequence number was inserted"}
			}
			seq := binary.BigEndian.Uint64(k)
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return n, &AuditBreak{Seq: seq, Reason: "the entry is not valid JSON"}
			}
			switch {
			case seq != want:
				return n, &AuditBreak{Seq: want, Reason: fmt.Sprintf("the entry is missing (the next one stored is %d)", seq)}
			case e.Seq != seq:
				return n, &AuditBreak{Seq: seq, Reason: fmt.Sprintf("the entry stored here says it is %d (entries moved)", e.Seq)}
			case e.Prev != prev:
				return n, &AuditBreak{Seq: seq, Reason: "its prev does not match the hash of the entry before (entries reordered or replaced)"}
			case auditHash(e) != e.Hash:
				return n, &AuditBreak{Seq: seq, Reason: "its contents do not match its hash (the entry was altered)"}
			case key == nil && e.MAC != "":
				return n, &AuditBreak{Seq: seq, Reason: noKeyReason(sealed)}
			case key != nil && seq == anchor.Seq && e.Hash != anchor.Hash:
				return n, &AuditBreak{Seq: seq, Reason: "it is not the entry the seal anchored the trail to (entries from before the seal were replaced)"}
			case key != nil && seq > anchor.Seq && e.MAC == "":
				return n, &AuditBreak{Seq: seq, Reason: "it carries no MAC although the vault was sealed before it (it was added or rewritten without the passphrase)"}
			case key != nil && seq > anchor.Seq && !macOK(key, macEntry, e.Seq, e.Hash, e.MAC):
				return n, &AuditBreak{Seq: seq, Reason: "its MAC does not match (the entry was altered or replaced without the passphrase)"}
			}
			if e.Kind == auditKindAudit && e.Subject == subjectUnclean {
				*unclean = append(*unclean, e)
			}
			if e.Kind == auditKindAudit && e.Subject == subjectCut {
				// Recorded by the tai that found its own entries gone.
				return n, &AuditBreak{Seq: seq, Reason: e.Outcome}
			}
			n, want, prev = n+1, want+1, e.Hash
		}
	}
	last := want - 1
	switch {
	case key != nil && last < anchor.Seq:
		return n, &AuditBreak{Seq: want, Reason: fmt.Sprintf("the trail ends at %d, before the entry the seal anchored it to (%d): entries cut off the end", last, anchor.Seq)}
	case head == nil && (n > 0 || key != nil):
		return n, &AuditBreak{Seq: last, Reason: "the recorded head of the trail is missing"}
	case head != nil && head.Seq > last:
		return n, &AuditBreak{Seq: want, Reason: fmt.Sprintf("the trail ends at %d but its recorded head is %d (entries cut off the end)", last, head.Seq)}
	case head != nil && (head.Seq != last || head.Hash != prev):
		return n, &AuditBreak{Seq: last, Reason: fmt.Sprintf("the last entry does not match the recorded head (%d): entries were replaced or appended by hand", head.Seq)}
	case key != nil && !macOK(key, macHead, head.Seq, head.Hash, head.MAC):
		return n, &AuditBreak{Seq: last, Reason: "the recorded head does not carry its MAC: it was moved without the passphrase (entries cut off the end, or the last ones replaced)"}
	case key == nil && head != nil && head.MAC != "":
		return n, &AuditBreak{Seq: last, Reason: noKeyReason(sealed)}
	}
	return n, nil
}

// noKeyReason explains a MAC found on a trail that has no audit key to
// check it with.
func noKeyReason(sealed bool) string {
	if sealed {
		return "the trail carries seal MACs but the seal record holds no audit key (the seal record was replaced)"
	}
	return "the trail carries seal MACs but the vault has no seal record (the seal record was removed)"
}
