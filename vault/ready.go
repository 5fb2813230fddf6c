package vault

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// RedactionReady reports whether Redact knows every secret value in the
// vault. It returns nil when the vault is not sealed, holds no sealed
// secret, or the seal key is at hand or can be derived now (asking
// Options.Passphrase, at most once per Store, or Options.PassphrasePrompt,
// as any sealed read does).
// Otherwise Redact would let the sealed values through, so it returns an
// error wrapping ErrNoPassphrase or ErrWrongPassphrase that says how many
// secrets cannot be read and what to do; anything that shows text to a
// model must then refuse to go on.
func (s *Store) RedactionReady() error {
	sealed := 0
	keyed := false
	err := s.viewOnce(func(tx *bolt.Tx) error {
		seal, err := readSealMeta(tx)
		if err != nil || seal == nil {
			return err
		}
		if keyed = s.keyFor(seal); keyed {
			return nil
		}
		b := tx.Bucket(bucketSecrets)
		if b == nil {
			return nil
		}
		return b.ForEach(func(name, v []byte) error {
			if row, err := decodeSecret(string(name), v); err == nil && row.Sealed != nil {
				sealed++
			}
			return nil
		})
	})
	if err != nil || keyed || sealed == 0 {
		return err
	}
	err = s.unlock()
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("%d sealed secrets", sealed)
	if sealed == 1 {
		what = "1 sealed secret"
	}
	if errors.Is(err, ErrWrongPassphrase) {
		fix := "give the right passphrase in TAI_VAULT_PASSPHRASE"
		if s.prompt != nil {
			fix = "type the right passphrase when asked again"
		}
		return &notReadyError{err: err, msg: fmt.Sprintf("vault: the passphrase given does not open the seal, so the vault's %s "+
			"cannot be decrypted and could not be kept out of what the model sees: %s", what, fix)}
	}
	// A passphrase source's own reason (TAI_VAULT_PASSPHRASE unset, the
	// terminal could not be read) is kept; without a source there is none.
	why := ""
	if s.passphrase != nil || s.prompt != nil {
		why = " (" + err.Error() + ")"
	}
	return &notReadyError{err: err, msg: fmt.Sprintf("vault: the vault holds %s that cannot be decrypted without the passphrase%s, "+
		"so they could not be kept out of what the model sees: set TAI_VAULT_PASSPHRASE (or run tai on a terminal to be asked)", what, why)}
}

// notReadyError says why redaction is not ready and unwraps to the seal
// error (ErrNoPassphrase or ErrWrongPassphrase).
type notReadyError struct {
	msg string
	err error
}

func (e *notReadyError) Error() string { return e.msg }
func (e *notReadyError) Unwrap() error { return e.err }
