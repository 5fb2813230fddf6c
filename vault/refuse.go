package vault

import (
	"fmt"
	"strings"
)

// RefusePrompts stops this Store from asking Options.PassphrasePrompt:
// until restore is called, an access that needs the seal key and does not
// hold it fails at once with an error wrapping ErrNoPassphrase (and
// ErrSealedElsewhere when another process sealed the vault) that ends with
// why, which says what to do instead. A server calls it once it serves,
// since nobody watches its terminal and a prompt there would hang the
// client waiting for the call. Options.Passphrase is still used.
func (s *Store) RefusePrompts(why string) (restore func()) {
	s.refuse.Store(&why)
	return func() { s.refuse.Store(nil) }
}

// promptRefused is the error of an access that needed the seal key while
// prompts were refused.
type promptRefused struct {
	reason string // the message without "vault: "
	errs   []error
}

func (e *promptRefused) Error() string   { return "vault: " + e.reason }
func (e *promptRefused) Unwrap() []error { return e.errs }

// refusedError says that the seal key is needed and cannot be asked for:
// elsewhere (nil or wrapping ErrSealedElsewhere) says why it is needed now,
// why what to do.
func refusedError(elsewhere error, why string) error {
	cause := "the vault is sealed"
	errs := []error{ErrNoPassphrase}
	if elsewhere != nil {
		cause = strings.TrimPrefix(elsewhere.Error(), "vault: ")
		errs = append(errs, elsewhere)
	}
	return &promptRefused{reason: fmt.Sprintf("%s: %s", cause, why), errs: errs}
}
