package vault

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// On a sealed vault, deleting a secret, a record, a profile or a server
// needs the passphrase, like any write of sealed data: a wrong or missing
// one changes nothing. Every such deletion is then recorded in the audit
// trail (which, sealed, is signed with the same key).

// AuditDeleted is the Outcome of the audit entry a deletion leaves; its
// Kind is "secret", "record", "profile" or "server" and its Subject the
// name or id deleted.
const AuditDeleted = OutcomeDeleted

// needKey fails with errNeedKey (which makes update ask for the
// passphrase and run again) when the vault is sealed and its key is not
// at hand.
func (s *Store) needKey(tx *bolt.Tx) error {
	_, err := s.sealer(tx)
	return err
}

// auditDelete records a deletion that has been made. When the entry
// cannot be recorded the error says so, and that the deletion stands.
func (s *Store) auditDelete(kind, name string) error {
	if _, err := s.AuditAppend(AuditEntry{Kind: kind, Subject: name, Outcome: AuditDeleted}); err != nil {
		return fmt.Errorf("vault: %s %q was deleted, but its audit entry was not recorded: %w", kind, name, err)
	}
	return nil
}
