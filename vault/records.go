package vault

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultRecordLimit is the total size of record text a vault keeps when
// Options.RecordLimit is zero: 256 MiB.
const DefaultRecordLimit int64 = 256 << 20

// recordsDroppedKey is the meta row holding the highest record sequence
// number the retention policy has dropped, so RecordGet can tell a dropped
// record from a deleted one.
var recordsDroppedKey = []byte("records_dropped")

// RecordPut stores text (after Redact, so a spilled result never keeps a
// known secret) and returns its id: "r" and a decimal sequence number,
// short and never reused for another text.
//
// Before storing, it applies the retention policy in the same transaction:
// records older than Options.RecordMaxAge are dropped, then the oldest
// records go until the new text fits under Options.RecordLimit. A text
// larger than the limit on its own is refused and nothing is dropped.
//
// When the secrets cannot be read to redact it, nothing is stored and the
// error says why.
func (s *Store) RecordPut(text string, meta map[string]any) (string, error) {
	red, err := s.Redactor()
	if err != nil {
		return "", fmt.Errorf("vault: the record was not stored: %w", err)
	}
	text = red.Redact(text)
	if s.recordLimit > 0 && int64(len(text)) > s.recordLimit {
		return "", fmt.Errorf("vault: the record is %s, more than the %s the vault keeps for all records together: store a shorter text (or several parts)",
			byteSize(int64(len(text))), byteSize(s.recordLimit))
	}
	var id string
	err = s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketRecords)
		if err != nil {
			return err
		}
		data, err := bucket(tx, bucketRecordData)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		if _, err := s.pruneRecords(tx, int64(len(text)), now); err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		id = "r" + strconv.FormatUint(seq, 10)
		rec := Record{ID: id, Size: len(text), Created: now, Meta: meta}
		head, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("vault: record meta is not JSON-encodable: %w", err)
		}
		if err := b.Put(seqKey(seq), head); err != nil {
			return err
		}
		return data.Put(seqKey(seq), []byte(text))
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// RecordDelete removes record id and its text. A record that is not there
// (never stored, deleted, or dropped by the retention policy) is an error
// wrapping ErrNotFound that says which. On a sealed vault it needs the
// passphrase. The deletion is audited.
func (s *Store) RecordDelete(id string) error {
	seq, err := parseRecordID(id)
	if err != nil {
		return err
	}
	err = s.update(func(tx *bolt.Tx) error {
		heads, err := bucket(tx, bucketRecords)
		if err != nil {
			return err
		}
		if heads.Get(seqKey(seq)) == nil {
			return s.missingRecord(tx, id, seq)
		}
		if err := s.needKey(tx); err != nil {
			return err
		}
		if err := heads.Delete(seqKey(seq)); err != nil {
			return err
		}
		data, err := bucket(tx, bucketRecordData)
		if err != nil {
			return err
		}
		return data.Delete(seqKey(seq))
	})
	if err != nil {
		return err
	}
	return s.auditDelete("record", id)
}

// RecordPrune applies the retention policy now (RecordPut does so on every
// put) and returns how many records it dropped: useful after lowering
// Options.RecordLimit or Options.RecordMaxAge.
func (s *Store) RecordPrune() (int, error) {
	var n int
	err := s.update(func(tx *bolt.Tx) error {
		var err error
		n, err = s.pruneRecords(tx, 0, time.Now().UTC())
		return err
	})
	return n, err
}

// pruneRecords drops, oldest first, every record older than the maximum
// age and then as many as it takes for incoming more bytes to fit under
// the limit. It returns how many it dropped.
func (s *Store) pruneRecords(tx *bolt.Tx, incoming int64, now time.Time) (int, error) {
	heads, data := tx.Bucket(bucketRecords), tx.Bucket(bucketRecordData)
	if heads == nil || data == nil || s.recordLimit <= 0 && s.recordMaxAge <= 0 {
		return 0, nil
	}
	var total int64
	if s.recordLimit > 0 {
		c := data.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			total += int64(len(v))
		}
	}
	var drop [][]byte
	c := heads.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		over := s.recordLimit > 0 && total+incoming > s.recordLimit
		old := false
		if s.recordMaxAge > 0 {
			var rec Record
			old = json.Unmarshal(v, &rec) == nil && now.Sub(rec.Created) > s.recordMaxAge
		}
		if !over && !old {
			break
		}
		total -= int64(len(data.Get(k)))
		drop = append(drop, append([]byte(nil), k...))
	}
	if len(drop) == 0 {
		return 0, nil
	}
	for _, k := range drop {
		if err := heads.Delete(k); err != nil {
			return 0, err
		}
		if err := data.Delete(k); err != nil {
			return 0, err
		}
	}
	meta, err := bucket(tx, bucketMeta)
	if err != nil {
		return 0, err
	}
	if err := meta.Put(recordsDroppedKey, drop[len(drop)-1]); err != nil {
		return 0, err
	}
	return len(drop), nil
}

// missingRecord explains why record id (sequence seq) is not in tx: never
// stored, dropped by the retention policy, or deleted.
func (s *Store) missingRecord(tx *bolt.Tx, id string, seq uint64) error {
	var newest, dropped uint64
	if b := tx.Bucket(bucketRecords); b != nil {
		newest = b.Sequence()
	}
	if v := get(tx, bucketMeta, recordsDroppedKey); len(v) == 8 {
		dropped = binary.BigEndian.Uint64(v)
	}
	switch {
	case newest == 0:
		return fmt.Errorf("%w: record %s: the vault holds no records yet", ErrNotFound, id)
	case seq > newest:
		return fmt.Errorf("%w: record %s was never stored: the newest record is r%d", ErrNotFound, id, newest)
	case seq <= dropped:
		return fmt.Errorf("%w: record %s was dropped to make room: the vault keeps only the newest records (%s), dropping the oldest first; its text is gone, so produce it again",
			ErrNotFound, id, s.retentionText())
	}
	return fmt.Errorf("%w: record %s was deleted", ErrNotFound, id)
}

// retentionText describes this Store's retention policy.
func (s *Store) retentionText() string {
	var parts []string
	if s.recordLimit > 0 {
		parts = append(parts, "up to "+byteSize(s.recordLimit)+" in all")
	}
	if s.recordMaxAge > 0 {
		parts = append(parts, "none older than "+s.recordMaxAge.String())
	}
	if len(parts) == 0 {
		return "as set by the tai that dropped it"
	}
	return strings.Join(parts, ", ")
}

// byteSize formats n bytes for a person, to a tenth: "512 bytes",
// "300 KiB", "1.5 MiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	f, suffix := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if f < unit {
			break
		}
		f, suffix = f/unit, next
	}
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0") + " " + suffix
}

// parseRecordID returns the sequence number of a record id.
func parseRecordID(id string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "r"), 10, 64)
	if !strings.HasPrefix(id, "r") || err != nil || n == 0 {
		return 0, fmt.Errorf("%w: record %q: record ids look like r12", ErrNotFound, id)
	}
	return n, nil
}

// RecordGet returns length bytes of record id's text from byte offset
// (length <= 0 means to the end; a length past the end is clamped), with
// the record's description. An offset past the end is an error naming the
// record's size; an offset equal to the size gives "".
func (s *Store) RecordGet(id string, offset, length int) (string, Record, error) {
	seq, err := parseRecordID(id)
	if err != nil {
		return "", Record{}, err
	}
	if offset < 0 {
		return "", Record{}, fmt.Errorf("vault: record %s: offset %d is negative: use an offset from 0", id, offset)
	}
	var text string
	var rec Record
	err = s.view(func(tx *bolt.Tx) error {
		head := get(tx, bucketRecords, seqKey(seq))
		if head == nil {
			return s.missingRecord(tx, id, seq)
		}
		if err := json.Unmarshal(head, &rec); err != nil {
			return fmt.Errorf("vault: record %s is stored as invalid JSON (%v)", id, err)
		}
		b := tx.Bucket(bucketRecordData)
		var data []byte
		if b != nil {
			data = b.Get(seqKey(seq))
		}
		if offset > len(data) {
			return fmt.Errorf("vault: record %s: offset %d is past its end (%d bytes): use an offset below %d", id, offset, len(data), len(data))
		}
		end := len(data)
		if length > 0 && length < end-offset {
			end = offset + length
		}
		text = string(data[offset:end])
		return nil
	})
	return text, rec, err
}

// RecordList returns the n newest records, newest first (n <= 0: all).
func (s *Store) RecordList(n int) ([]Record, error) {
	var out []Record
	err := s.view(func(tx *bolt.Tx) error {
		out = out[:0]
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && (n <= 0 || len(out) < n); k, v = c.Prev() {
			var rec Record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("vault: record r%d is stored as invalid JSON (%v)", binary.BigEndian.Uint64(k), err)
			}
			out = append(out, rec)
		}
		return nil
	})
	return out, err
}
