package vault

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ProfilePut stores data, which must be valid JSON, under name.
func (s *Store) ProfilePut(name string, data json.RawMessage) error {
	if err := validName("profile", name); err != nil {
		return err
	}
	if !json.Valid(data) {
		return fmt.Errorf("vault: profile %q: the data is not valid JSON: encode the profile first", name)
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketProfiles)
		if err != nil {
			return err
		}
		return b.Put([]byte(name), data)
	})
}

// ProfileGet returns the JSON stored under name; a missing one is
// ErrNotFound.
func (s *Store) ProfileGet(name string) (json.RawMessage, error) {
	var out json.RawMessage
	err := s.view(func(tx *bolt.Tx) error {
		out = get(tx, bucketProfiles, []byte(name))
		if out == nil {
			return fmt.Errorf("%w: profile %q", ErrNotFound, name)
		}
		return nil
	})
	return out, err
}

// ProfileList returns the stored profile names, sorted.
func (s *Store) ProfileList() ([]string, error) {
	var out []string
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketProfiles)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, err
}

// ProfileDelete removes the profile name; a missing one is ErrNotFound. On
// a sealed vault it needs the passphrase. The deletion is audited.
func (s *Store) ProfileDelete(name string) error {
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketProfiles)
		if b == nil || b.Get([]byte(name)) == nil {
			return fmt.Errorf("%w: profile %q: nothing to delete", ErrNotFound, name)
		}
		if err := s.needKey(tx); err != nil {
			return err
		}
		return b.Delete([]byte(name))
	})
	if err != nil {
		return err
	}
	return s.auditDelete("profile", name)
}
