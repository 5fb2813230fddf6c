package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrNotSealed is what Unseal returns on a vault that has no seal.
var ErrNotSealed = errors.New("vault: the vault is not sealed")

// AuditUnsealed is the subject of the audit entry Unseal records.
const AuditUnsealed = "unsealed"

// Unseal turns the seal off: with passphrase, the current one, it checks
// the audit trail under the seal's audit key, then in one transaction
// stores every secret value and every server's headers in the clear, takes
// the seal's MACs off the trail, removes the seal record and records an
// "unsealed" audit entry. It then zeroes every free page of the file, so no
// ciphertext, salt or check value of the seal lingers on disk. It returns
// how many entries of the trail it verified.
//
// A wrong passphrase (ErrWrongPassphrase), a vault that is not sealed
// (ErrNotSealed) or a trail that does not verify (an *AuditBreak in the
// error) changes nothing. A crash part-way changes nothing either: all of
// it is one bbolt transaction.
//
// Why the MACs go rather than stay: they can only ever be checked with the
// audit key, which lives inside the seal's check value and leaves with it.
// Kept without a key, they would claim a protection no one could check;
// kept with the key in the clear, anyone able to write the file could
// forge them. So the trail is checked with the key one last time, and from
// then on it is what an unsealed trail is: a hash chain with a recorded
// head. The "unsealed" entry says where the signed part ended and that it
// verified, and it is itself chained, so a later rewrite of the trail
// before it breaks the chain as on any unsealed vault. Sealing again makes
// a new audit key and anchors the trail afresh.
func (s *Store) Unseal(passphrase string) (int, error) {
	if passphrase == "" {
		return 0, errors.New("vault: empty passphrase: type the vault's passphrase to unseal it")
	}
	var meta *sealMeta
	if err := s.viewOnce(func(tx *bolt.Tx) error {
		var err error
		meta, err = readSealMeta(tx)
		return err
	}); err != nil {
		return 0, err
	}
	if meta == nil {
		s.sawOpen.Store(true)
		return 0, fmt.Errorf("%w: nothing to unseal", ErrNotSealed)
	}
	// The key is derived outside the file lock: it costs about 100 ms.
	key, err := openSeal(passphrase, meta)
	if err != nil {
		return 0, err
	}
	if key == nil {
		return 0, fmt.Errorf("%w: it does not open the seal of %s; nothing was changed", ErrWrongPassphrase, s.path)
	}
	var n int
	err = s.rewriteSeal(func(tx *bolt.Tx) ([]byte, func() error, error) {
		now, err := readSealMeta(tx)
		switch {
		case err != nil:
			return nil, nil, err
		case now == nil:
			return nil, nil, fmt.Errorf("%w: another tai unsealed it a moment ago", ErrNotSealed)
		case !bytes.Equal(now.Salt, meta.Salt):
			return nil, nil, fmt.Errorf("%w: another tai changed the passphrase a moment ago; nothing was changed: type the new one", ErrWrongPassphrase)
		}
		// The journal is folded first, so entries another tai signed and
		// has not folded yet are checked and unsigned with the rest; it
		// stays locked until the transaction ends, so no signed entry
		// follows the unseal.
		return key.auditKey(), func() error {
			var err error
			n, err = s.unsealTx(tx, key)
			return err
		}, nil
	})
	if errors.Is(err, errTrailBroken) {
		err = fmt.Errorf("vault: run tai.vault.audit_verify() to see where the audit trail breaks, and restore a copy of the vault from before it: the trail does not end where its recorded head says, so the vault stays sealed and nothing was changed")
	}
	if err != nil {
		return 0, err
	}
	s.keyMu.Lock()
	s.asked, s.pass, s.passErr = false, "", nil
	s.key.Store(nil)
	s.keyMu.Unlock()
	s.sawOpen.Store(true)
	return n, nil
}

// unsealTx verifies the trail under key, then stores the secrets and
// headers of tx in the clear, unsigns the trail, removes the seal record
// and appends the "unsealed" entry. It returns the entries verified.
func (s *Store) unsealTx(tx *bolt.Tx, key *sealKey) (int, error) {
	var unclean []AuditEntry
	n, brk := verifyChain(tx, true, key.auditKey(), &unclean)
	if brk != nil {
		return 0, fmt.Errorf("vault: restore a copy of the vault from before the break, or keep it sealed: its audit trail does not verify, so it stays sealed and nothing was changed (%w)", brk)
	}
	if _, err := resealSecrets(tx, key, nil); err != nil {
		return 0, err
	}
	if err := resealServers(tx, key, nil); err != nil {
		return 0, err
	}
	if err := unsignTrail(tx); err != nil {
		return 0, err
	}
	meta, err := bucket(tx, bucketMeta)
	if err != nil {
		return 0, err
	}
	if err := meta.Delete(sealMetaKey); err != nil {
		return 0, err
	}
	outcome := fmt.Sprintf("the trail was verified under the seal key through entry %d and its seal MACs were removed; from here the trail is a plain hash chain", n)
	switch {
	case n == 0:
		outcome = "the trail was empty; from here it is a plain hash chain"
	case key.auditKey() == nil:
		outcome = fmt.Sprintf("the seal kept no audit key, so the trail was verified by its hashes through entry %d; from here it is a plain hash chain", n)
	}
	if _, err := auditAppendTx(tx, AuditEntry{
		Time:    time.Now().UTC().Round(0),
		Kind:    auditKindAudit,
		Subject: AuditUnsealed,
		Outcome: outcome,
	}, nil); err != nil {
		return 0, err
	}
	return n, s.bumpGen(tx)
}

// unsignTrail removes the seal's MACs from the trail: the anchor mark, the
// MAC of every entry after it and the head's. An entry's hash does not
// cover its MAC, so the chain is unchanged.
func unsignTrail(tx *bolt.Tx) error {
	meta, err := bucket(tx, bucketMeta)
	if err != nil {
		return err
	}
	if err := meta.Delete(auditAnchorKey); err != nil {
		return err
	}
	if b := tx.Bucket(bucketAudit); b != nil {
		signed := map[string][]byte{}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !bytes.Contains(v, []byte(`"mac":`)) {
				continue
			}
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("vault: audit entry %x is invalid JSON (%v): run audit_verify", k, err)
			}
			e.MAC = ""
			line, err := appendEntryJSON(nil, e)
			if err != nil {
				return err
			}
			signed[string(k)] = line
		}
		for k, line := range signed {
			if err := b.Put([]byte(k), line); err != nil {
				return err
			}
		}
	}
	head, err := readMark(tx, auditHeadKey)
	if err != nil || head == nil {
		return err
	}
	return putMark(tx, auditHeadKey, macHead, head.Seq, head.Hash, nil)
}
