package vault

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// auditHeadKey names the meta row holding the last entry's Seq and Hash, so
// AuditVerify notices entries cut off the end of the trail.
var auditHeadKey = []byte("audit_head")

type auditHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// auditHash is the SHA-256, hex-encoded, of a canonical encoding of every
// field of e but Hash: a domain tag, then each field as a uvarint length
// and its bytes (integers and the time as decimal, the time in Unix
// nanoseconds), so no two different entries encode alike.
func auditHash(e AuditEntry) string {
	h := sha256.New()
	var buf []byte
	field := func(s string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		buf = append(buf, s...)
		h.Write(buf)
	}
	field("tai-audit-v1")
	field(strconv.FormatUint(e.Seq, 10))
	field(strconv.FormatInt(e.Time.UnixNano(), 10))
	field(e.Kind)
	field(e.Subject)
	field(e.Digest)
	field(e.Outcome)
	field(strconv.FormatInt(int64(e.Duration), 10))
	field(strconv.Itoa(e.Size))
	field(e.Prev)
	return hex.EncodeToString(h.Sum(nil))
}

// AuditAppend adds e to the trail and returns it as stored: Seq is the next
// number, Time is now when zero, Prev is the last entry's Hash and Hash
// seals it all. Subject and Outcome pass through Redact first.
func (s *Store) AuditAppend(e AuditEntry) (AuditEntry, error) {
	e.Subject = s.Redact(e.Subject)
	e.Outcome = s.Redact(e.Outcome)
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Round(0)
	err := s.update(func(tx *bolt.Tx) error {
		var err error
		e, err = auditAppendTx(tx, e)
		return err
	})
	return e, err
}

func auditAppendTx(tx *bolt.Tx, e AuditEntry) (AuditEntry, error) {
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
	e.Hash = auditHash(e)
	data, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	if err := b.Put(seqKey(e.Seq), data); err != nil {
		return e, err
	}
	head, _ := json.Marshal(auditHead{Seq: e.Seq, Hash: e.Hash})
	meta, err := bucket(tx, bucketMeta)
	if err != nil {
		return e, err
	}
	return e, meta.Put(auditHeadKey, head)
}

// AuditTail returns the last n entries (n <= 0: all) of kind ("" for every
// kind), in chronological order: oldest first, newest last.
func (s *Store) AuditTail(n int, kind string) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.view(func(tx *bolt.Tx) error {
		out = out[:0]
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
func (s *Store) AuditVerify() (int, error) {
	var n int
	var brk error
	err := s.view(func(tx *bolt.Tx) error {
		n, brk = verifyTx(tx)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, brk
}

func verifyTx(tx *bolt.Tx) (int, error) {
	var head *auditHead
	if meta := tx.Bucket(bucketMeta); meta != nil {
		if v := meta.Get(auditHeadKey); v != nil {
			head = new(auditHead)
			if err := json.Unmarshal(v, head); err != nil {
				return 0, &AuditBreak{Reason: "the recorded head of the trail is invalid JSON"}
			}
		}
	}
	b := tx.Bucket(bucketAudit)
	n, want, prev := 0, uint64(1), ""
	if b != nil {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return n, &AuditBreak{Seq: want, Reason: "a key that is not a sequence number was inserted"}
			}
			key := binary.BigEndian.Uint64(k)
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return n, &AuditBreak{Seq: key, Reason: "the entry is not valid JSON"}
			}
			switch {
			case key != want:
				return n, &AuditBreak{Seq: want, Reason: fmt.Sprintf("the entry is missing (the next one stored is %d)", key)}
			case e.Seq != key:
				return n, &AuditBreak{Seq: key, Reason: fmt.Sprintf("the entry stored here says it is %d (entries moved)", e.Seq)}
			case e.Prev != prev:
				return n, &AuditBreak{Seq: key, Reason: "its prev does not match the hash of the entry before (entries reordered or replaced)"}
			case auditHash(e) != e.Hash:
				return n, &AuditBreak{Seq: key, Reason: "its contents do not match its hash (the entry was altered)"}
			}
			n, want, prev = n+1, want+1, e.Hash
		}
	}
	switch {
	case head == nil && n > 0:
		return n, &AuditBreak{Seq: want - 1, Reason: "the recorded head of the trail is missing"}
	case head != nil && head.Seq > want-1:
		return n, &AuditBreak{Seq: want, Reason: fmt.Sprintf("the trail ends at %d but its recorded head is %d (entries cut off the end)", want-1, head.Seq)}
	case head != nil && (head.Seq != want-1 || head.Hash != prev):
		return n, &AuditBreak{Seq: want - 1, Reason: fmt.Sprintf("the last entry does not match the recorded head (%d): entries were replaced or appended by hand", head.Seq)}
	}
	return n, nil
}
