package vault

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// secretRow is a secrets value. Exactly one of Value and Sealed is set:
// Sealed (nonce and ciphertext) when the seal is on.
type secretRow struct {
	Value   string         `json:"value,omitempty"`
	Sealed  []byte         `json:"sealed,omitempty"`
	Meta    map[string]any `json:"meta,omitempty"`
	Updated time.Time      `json:"updated"`
}

// MaxSecretSize is the largest secret value SecretSet stores (64 KiB):
// every value is matched against every text tai shows, so a huge one
// would slow down every call.
const MaxSecretSize = 64 << 10

// genKey names the meta counter bumped by every change to the secrets, so
// Redact notices changes made by any process.
var genKey = []byte("secrets_gen")

// ValidSecretName reports whether name follows the SecretName rule:
// 1–128 of letters, digits, '-', '_', '.'.
func ValidSecretName(name string) error {
	if name == "" {
		return fmt.Errorf("vault: empty secret name: use 1-128 letters, digits, '-', '_' or '.'")
	}
	if len(name) > 128 {
		return fmt.Errorf("vault: secret name is %d characters long: use at most 128 letters, digits, '-', '_' or '.'", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			continue
		}
		return fmt.Errorf("vault: secret name %q has %q at byte %d: use only letters, digits, '-', '_' or '.'", name, c, i)
	}
	return nil
}

// SecretSet stores value under name, sealed when the seal is on. A nil meta
// keeps the secret's existing meta; a non-nil one replaces it.
//
// A value larger than MaxSecretSize is refused. A value shorter than
// MinRedactLen is stored, but Redact cannot replace it (it would shred
// ordinary text): callers should warn.
func (s *Store) SecretSet(name, value string, meta map[string]any) error {
	if err := ValidSecretName(name); err != nil {
		return err
	}
	if len(value) > MaxSecretSize {
		return fmt.Errorf("vault: secret %q is %d bytes; a secret may hold at most 64 KiB (%d bytes): store a large file as a record or keep it outside the vault", name, len(value), MaxSecretSize)
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketSecrets)
		if err != nil {
			return err
		}
		seal, err := s.sealer(tx)
		if err != nil {
			return err
		}
		row := secretRow{Meta: meta, Updated: time.Now().UTC()}
		if meta == nil {
			if old := b.Get([]byte(name)); old != nil {
				var prev secretRow
				if json.Unmarshal(old, &prev) == nil {
					row.Meta = prev.Meta
				}
			}
		}
		if seal != nil {
			row.Sealed = seal.seal([]byte(value), secretAAD(name))
		} else {
			row.Value = value
		}
		data, err := json.Marshal(row)
		if err != nil {
			return fmt.Errorf("vault: secret %q meta is not JSON-encodable: %w", name, err)
		}
		if err := b.Put([]byte(name), data); err != nil {
			return err
		}
		return s.bumpGen(tx)
	})
}

// SecretGet returns the value and meta stored under name. A sealed value
// needs the passphrase (see Options.Passphrase and
// Options.PassphrasePrompt).
func (s *Store) SecretGet(name string) (string, map[string]any, error) {
	if err := ValidSecretName(name); err != nil {
		return "", nil, err
	}
	var value string
	var meta map[string]any
	err := s.view(func(tx *bolt.Tx) error {
		data := get(tx, bucketSecrets, []byte(name))
		if data == nil {
			return fmt.Errorf("%w: secret %q: set it first (secret_set)", ErrNotFound, name)
		}
		row, err := decodeSecret(name, data)
		if err != nil {
			return err
		}
		meta = row.Meta
		if row.Sealed == nil {
			value = row.Value
			return nil
		}
		k, err := s.opener(tx)
		if err != nil {
			return err
		}
		plain, err := k.open(row.Sealed, secretAAD(name))
		if err != nil {
			return fmt.Errorf("vault: secret %q does not decrypt (%v): the vault file was altered", name, err)
		}
		value = string(plain)
		return nil
	})
	return value, meta, err
}

// SecretList returns every secret's name and meta, sorted by name, never
// a value.
func (s *Store) SecretList() ([]SecretInfo, error) {
	var out []SecretInfo
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSecrets)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			row, err := decodeSecret(string(k), v)
			if err != nil {
				return err
			}
			out = append(out, SecretInfo{Name: string(k), Meta: row.Meta, Updated: row.Updated})
			return nil
		})
	})
	return out, err
}

// SecretDelete removes the secret name; a missing one is ErrNotFound. On a
// sealed vault it needs the passphrase. The deletion is audited.
func (s *Store) SecretDelete(name string) error {
	if err := ValidSecretName(name); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSecrets)
		if b == nil || b.Get([]byte(name)) == nil {
			return fmt.Errorf("%w: secret %q: nothing to delete", ErrNotFound, name)
		}
		if err := s.needKey(tx); err != nil {
			return err
		}
		if err := b.Delete([]byte(name)); err != nil {
			return err
		}
		return s.bumpGen(tx)
	})
	if err != nil {
		return err
	}
	return s.auditDelete("secret", name)
}

func decodeSecret(name string, data []byte) (secretRow, error) {
	var row secretRow
	if err := json.Unmarshal(data, &row); err != nil {
		return row, fmt.Errorf("vault: secret %q is stored as invalid JSON (%v): set it again", name, err)
	}
	return row, nil
}

func secretAAD(name string) []byte { return []byte("secret\x00" + name) }

// bumpGen increments the secrets generation counter in tx and, before tx
// commits, grows the generation file, so every process's next Redactor
// sees the change without opening bbolt.
func (s *Store) bumpGen(tx *bolt.Tx) error {
	b, err := bucket(tx, bucketMeta)
	if err != nil {
		return err
	}
	if err := b.Put(genKey, seqKey(readGen(tx)+1)); err != nil {
		return err
	}
	return s.gen.bump()
}

// readGen returns the secrets generation counter (0 when never bumped).
func readGen(tx *bolt.Tx) uint64 {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return 0
	}
	v := b.Get(genKey)
	if len(v) != 8 {
		return 0
	}
	return uint64(v[0])<<56 | uint64(v[1])<<48 | uint64(v[2])<<40 | uint64(v[3])<<32 |
		uint64(v[4])<<24 | uint64(v[5])<<16 | uint64(v[6])<<8 | uint64(v[7])
}
