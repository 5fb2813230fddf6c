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

// RecordPut stores text (after Redact, so a spilled result never keeps a
// known secret) and returns its id: "r" and a decimal sequence number,
// short and never reused for another text.
func (s *Store) RecordPut(text string, meta map[string]any) (string, error) {
	text = s.Redact(text)
	var id string
	err := s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketRecords)
		if err != nil {
			return err
		}
		data, err := bucket(tx, bucketRecordData)
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		id = "r" + strconv.FormatUint(seq, 10)
		rec := Record{ID: id, Size: len(text), Created: time.Now().UTC(), Meta: meta}
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
			return fmt.Errorf("%w: record %s", ErrNotFound, id)
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
