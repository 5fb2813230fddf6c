package vault

import (
	"errors"
	"fmt"
)

// RedactionReady reports whether Redact knows every secret value in the
// vault: it is Redactor's error, so it costs nothing while no secret
// changed. It returns nil when the vault is not sealed, holds no sealed
// secret, or the seal key is at hand or can be derived now (asking
// Options.Passphrase, at most once per Store, or Options.PassphrasePrompt,
// as any sealed read does).
// Otherwise Redact would not know the sealed values, so it returns an
// error wrapping ErrNoPassphrase or ErrWrongPassphrase that says how many
// secrets cannot be read and what to do; anything that shows text to a
// model must then refuse to go on. Other failures to read the secrets (the
// vault locked by another process, wrapping ErrLocked) are returned too.
func (s *Store) RedactionReady() error {
	_, err := s.Redactor()
	return err
}

// notReady explains that sealed secrets could not be decrypted because of
// err (from unlock). prompt and source say which passphrase sources the
// Store has.
func notReady(sealed int, err error, prompt, source bool) error {
	what := fmt.Sprintf("%d sealed secrets", sealed)
	if sealed == 1 {
		what = "1 sealed secret"
	}
	if errors.Is(err, ErrWrongPassphrase) {
		fix := "give the right passphrase in TAI_VAULT_PASSPHRASE"
		if prompt {
			fix = "type the right passphrase when asked again"
		}
		return &notReadyError{err: err, msg: fmt.Sprintf("vault: the passphrase given does not open the seal, so the vault's %s "+
			"cannot be decrypted and could not be kept out of what the model sees: %s", what, fix)}
	}
	if refused := (*promptRefused)(nil); errors.As(err, &refused) {
		// The refusal says what to do.
		return &notReadyError{err: err, msg: fmt.Sprintf("vault: the vault holds %s that cannot be decrypted, so no text can be checked for them and none is shown: %s", what, refused.reason)}
	}
	if !errors.Is(err, ErrNoPassphrase) {
		return fmt.Errorf("vault: the vault's %s could not be decrypted, so no text can be checked for them and none is shown: %w", what, err)
	}
	// A passphrase source's own reason (TAI_VAULT_PASSPHRASE unset, the
	// terminal could not be read) is kept; without a source there is none.
	why := ""
	if source || prompt {
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
