package vault

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/scrypt"

	"tai/vault/secret"
)

// kdfParams are scrypt's cost parameters.
type kdfParams struct {
	N, R, P int
}

// defaultKDF costs about 100 ms and 32 MiB per derivation: the passphrase
// is derived once per process, so this is cheap for users and dear for
// guessers.
var defaultKDF = kdfParams{N: 1 << 15, R: 8, P: 1}

// sealMeta is the seal's record in the meta bucket: the KDF and its
// parameters, the salt, and an AEAD-encrypted known plaintext that tells a
// right passphrase from a wrong one before anything is decrypted or written.
type sealMeta struct {
	KDF    string `json:"kdf"`
	N      int    `json:"n"`
	R      int    `json:"r"`
	P      int    `json:"p"`
	Salt   []byte `json:"salt"`
	Cipher string `json:"cipher"`
	Check  []byte `json:"check"`
}

var (
	sealMetaKey = []byte("seal")
	checkPlain  = []byte("tai vault seal check v1")
	checkAAD    = []byte("check")
	// errNeedKey is returned from inside a transaction that needs the seal
	// key before it has been derived; view and update then derive it
	// outside the file lock and run the transaction again.
	errNeedKey = errors.New("vault: seal key needed")
)

// auditKeySize is the length of the audit trail's MAC key.
const auditKeySize = 32

// sealKey is a derived key, tied to the salt it was derived with. audit is
// the audit trail's MAC key, nil for a seal made before tai kept one.
type sealKey struct {
	aead  cipher.AEAD
	salt  []byte
	audit []byte
}

// auditKey returns k's audit MAC key; nil when k is nil (no seal) or holds
// none.
func (k *sealKey) auditKey() []byte {
	if k == nil {
		return nil
	}
	return k.audit
}

// checkValue is the plaintext of a seal's check value: checkPlain, then the
// audit key. The audit key is random, made when the vault is first sealed
// and kept across passphrase changes (only the check value is re-encrypted,
// so the trail needs no re-signing); sealed inside the check value, it can
// neither be read nor removed without the passphrase.
func checkValue(audit []byte) []byte {
	return append(append(make([]byte, 0, len(checkPlain)+len(audit)), checkPlain...), audit...)
}

// parseCheck splits an opened check value; ok is false when it is not one.
func parseCheck(got []byte) (audit []byte, ok bool) {
	if !bytes.HasPrefix(got, checkPlain) {
		return nil, false
	}
	switch rest := got[len(checkPlain):]; len(rest) {
	case 0:
		return nil, true
	case auditKeySize:
		return rest, true
	}
	return nil, false
}

func deriveKey(passphrase string, m *sealMeta) (*sealKey, error) {
	if m.KDF != "scrypt" || m.Cipher != "xchacha20poly1305" {
		return nil, fmt.Errorf("vault: the seal uses %s/%s, which this tai does not know: upgrade tai", m.KDF, m.Cipher)
	}
	if m.N > 1<<22 || m.R*m.P > 64 {
		return nil, fmt.Errorf("vault: the seal's KDF parameters (N=%d r=%d p=%d) are out of range: the vault file was altered", m.N, m.R, m.P)
	}
	key, err := scrypt.Key([]byte(passphrase), m.Salt, m.N, m.R, m.P, chacha20poly1305.KeySize)
	if err != nil {
		return nil, fmt.Errorf("vault: derive the seal key: %w", err)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("vault: seal cipher: %w", err)
	}
	return &sealKey{aead: aead, salt: append([]byte(nil), m.Salt...)}, nil
}

// seal encrypts plain under a fresh random nonce, bound to aad (the row it
// belongs to, so sealed values cannot be swapped between rows).
func (k *sealKey) seal(plain, aad []byte) []byte {
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("vault: crypto/rand failed: " + err.Error())
	}
	return k.aead.Seal(nonce, nonce, plain, aad)
}

func (k *sealKey) open(sealed, aad []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(sealed) < ns+k.aead.Overhead() {
		return nil, errors.New("sealed value too short")
	}
	return k.aead.Open(nil, sealed[:ns], sealed[ns:], aad)
}

func readSealMeta(tx *bolt.Tx) (*sealMeta, error) {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return nil, nil
	}
	v := b.Get(sealMetaKey)
	if v == nil {
		return nil, nil
	}
	var m sealMeta
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("vault: the seal record is invalid JSON (%v): the vault file was altered", err)
	}
	return &m, nil
}

// sealer returns the key that values written in tx must be sealed with, or
// nil when the seal is off. Without the key it returns errNeedKey.
func (s *Store) sealer(tx *bolt.Tx) (*sealKey, error) {
	m, err := readSealMeta(tx)
	if err != nil || m == nil {
		if err == nil {
			s.sawOpen.Store(true)
		}
		return nil, err
	}
	k := s.key.Load()
	if k == nil || !bytes.Equal(k.salt, m.Salt) {
		return nil, errNeedKey
	}
	return k, nil
}

// opener returns the key that opens sealed values read in tx.
func (s *Store) opener(tx *bolt.Tx) (*sealKey, error) {
	m, err := readSealMeta(tx)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("vault: a sealed value in a vault without a seal record: the vault file was altered")
	}
	k := s.key.Load()
	if k == nil || !bytes.Equal(k.salt, m.Salt) {
		return nil, errNeedKey
	}
	return k, nil
}

// askPassphrase calls Options.Passphrase the first time only. keyMu held.
func (s *Store) askPassphrase() (string, error) {
	if !s.asked {
		s.asked = true
		switch {
		case s.passphrase == nil:
			s.passErr = fmt.Errorf("%w: set TAI_VAULT_PASSPHRASE or run tai in a terminal to be asked", ErrNoPassphrase)
		default:
			s.pass, s.passErr = s.passphrase()
			if s.passErr != nil {
				s.passErr = fmt.Errorf("%w: %v", ErrNoPassphrase, s.passErr)
			} else if s.pass == "" {
				s.passErr = fmt.Errorf("%w: the passphrase given is empty", ErrNoPassphrase)
			}
		}
	}
	return s.pass, s.passErr
}

// unlock derives the seal key from the passphrase and checks it against
// the stored check value. Nothing is written.
func (s *Store) unlock() error {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	var m *sealMeta
	if err := s.viewOnce(func(tx *bolt.Tx) error {
		var err error
		m, err = readSealMeta(tx)
		return err
	}); err != nil {
		return err
	}
	if m == nil {
		s.sawOpen.Store(true)
		return nil
	}
	held := s.key.Load()
	if held != nil && bytes.Equal(held.salt, m.Salt) {
		return nil
	}
	var elsewhere error
	switch {
	case held != nil:
		elsewhere = fmt.Errorf("%w with a new passphrase", ErrSealedElsewhere)
	case s.sawOpen.Load():
		elsewhere = ErrSealedElsewhere
	}
	if s.prompt != nil {
		if why := s.refuse.Load(); why != nil {
			return refusedError(elsewhere, *why)
		}
		return s.unlockPrompt(m, elsewhere)
	}
	pass, err := s.askPassphrase()
	if err != nil {
		return err
	}
	k, err := openSeal(pass, m)
	if err != nil {
		return err
	}
	if k == nil {
		// Remember the failure: the source gives the same answer every
		// time, and a wrong one must not cost a key derivation per call.
		s.passErr = fmt.Errorf("%w: it does not open the seal of %s; nothing was read or changed", ErrWrongPassphrase, s.path)
		return s.passErr
	}
	s.key.Store(k)
	s.AddRedaction(passphraseName, pass)
	return nil
}

// passphraseName is the name the seal passphrase is redacted under,
// however it was given (TAI_VAULT_PASSPHRASE, typed at the prompt, or to
// Seal).
const passphraseName = "TAI_VAULT_PASSPHRASE"

// unlockPrompt asks Options.PassphrasePrompt up to PassphraseTries times
// for a passphrase that opens seal m; elsewhere (nil or wrapping
// ErrSealedElsewhere) is the first try's last. A failure is not
// remembered: the next access asks again. keyMu held, so concurrent
// accesses share one prompt.
func (s *Store) unlockPrompt(m *sealMeta, elsewhere error) error {
	last := elsewhere
	wrong := 0
	for try := 1; try <= PassphraseTries; try++ {
		pass, err := s.prompt(try, last)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrNoPassphrase, err)
		}
		if pass == "" {
			last = fmt.Errorf("%w: the passphrase given is empty", ErrNoPassphrase)
			continue
		}
		k, err := openSeal(pass, m)
		if err != nil {
			return err
		}
		if k != nil {
			s.key.Store(k)
			s.AddRedaction(passphraseName, pass)
			return nil
		}
		wrong++
		last = fmt.Errorf("%w: it does not open the seal of %s", ErrWrongPassphrase, s.path)
	}
	if wrong == 0 {
		return fmt.Errorf("%w: %d empty answers; nothing was read or changed, and the next use of a sealed value asks again", ErrNoPassphrase, PassphraseTries)
	}
	return fmt.Errorf("%w: %d tries did not open the seal of %s; nothing was read or changed, and the next use of a sealed value asks again", ErrWrongPassphrase, PassphraseTries, s.path)
}

// openSeal derives the key of seal m from pass and checks it against the
// check value: nil (and no error) when pass is not the passphrase.
func openSeal(pass string, m *sealMeta) (*sealKey, error) {
	k, err := deriveKey(pass, m)
	if err != nil {
		return nil, err
	}
	got, err := k.open(m.Check, checkAAD)
	audit, ok := parseCheck(got)
	if err != nil || !ok {
		return nil, nil
	}
	k.audit = audit
	return k, nil
}

// Sealed reports whether the seal is on.
func (s *Store) Sealed() (bool, error) {
	var sealed bool
	err := s.viewOnce(func(tx *bolt.Tx) error {
		m, err := readSealMeta(tx)
		sealed = m != nil
		if err == nil && !sealed {
			s.sawOpen.Store(true)
		}
		return err
	})
	return sealed, err
}

// Seal turns the seal on with passphrase: it derives a key (scrypt, random
// salt), stores the salt, the KDF parameters and a check value, and
// re-encrypts every secret value and every server's headers with
// XChaCha20-Poly1305 in one transaction. It then zeroes every free page of
// the file, so no plaintext from before the seal lingers on disk. On a
// vault that is already sealed it changes the passphrase, which needs the
// current one from Options.Passphrase or Options.PassphrasePrompt.
//
// The first Seal also makes the audit trail's MAC key (random, stored
// inside the sealed check value) and anchors the trail: the head as it
// stands gets a MAC, and every entry appended from then on carries one
// (see AuditVerify). A passphrase change keeps the audit key, so the trail
// is not re-signed.
func (s *Store) Seal(passphrase string) error {
	if passphrase == "" {
		return errors.New("vault: empty passphrase: choose a non-empty passphrase to seal the vault")
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return fmt.Errorf("vault: random salt: %w", err)
	}
	meta := &sealMeta{KDF: "scrypt", N: s.kdf.N, R: s.kdf.R, P: s.kdf.P, Salt: salt, Cipher: "xchacha20poly1305"}
	newKey, err := deriveKey(passphrase, meta)
	if err != nil {
		return err
	}
	freshAudit := make([]byte, auditKeySize)
	if _, err := rand.Read(freshAudit); err != nil {
		return fmt.Errorf("vault: random audit key: %w", err)
	}
	// The journal is folded first, and stays locked until the anchor is
	// set and committed, so no entry without a MAC follows it.
	reseal := func(tx *bolt.Tx) ([]byte, func() error, error) {
		old, err := readSealMeta(tx)
		if err != nil {
			return nil, nil, err
		}
		var oldKey *sealKey
		if old != nil {
			if oldKey = s.key.Load(); oldKey == nil || !bytes.Equal(oldKey.salt, old.Salt) {
				return nil, nil, errNeedKey
			}
		}
		return oldKey.auditKey(), func() error { return s.resealTx(tx, oldKey, newKey, meta, freshAudit) }, nil
	}
	err = s.rewriteSeal(reseal)
	if errors.Is(err, errNeedKey) {
		if err := s.unlock(); err != nil {
			return fmt.Errorf("vault: changing the passphrase needs the current one: %w", err)
		}
		err = s.rewriteSeal(reseal)
	}
	if err != nil {
		return err
	}
	s.keyMu.Lock()
	s.asked, s.pass, s.passErr = true, passphrase, nil
	s.key.Store(newKey)
	s.keyMu.Unlock()
	s.AddRedaction(passphraseName, passphrase)
	return nil
}

// resealTx re-encrypts the secrets and headers of tx under newKey, redacts
// the records, anchors the trail on a first seal and stores meta.
func (s *Store) resealTx(tx *bolt.Tx, oldKey, newKey *sealKey, meta *sealMeta, freshAudit []byte) error {
	values, err := resealSecrets(tx, oldKey, newKey)
	if err != nil {
		return err
	}
	if err := redactRecords(tx, values); err != nil {
		return err
	}
	if err := resealServers(tx, oldKey, newKey); err != nil {
		return err
	}
	if newKey.audit = oldKey.auditKey(); newKey.audit == nil {
		newKey.audit = freshAudit
		if err := anchorTx(tx, newKey.audit); err != nil {
			return err
		}
	}
	meta.Check = newKey.seal(checkValue(newKey.audit), checkAAD)
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	b, err := bucket(tx, bucketMeta)
	if err != nil {
		return err
	}
	if err := b.Put(sealMetaKey, metaJSON); err != nil {
		return err
	}
	return s.bumpGen(tx)
}

// resealSecrets re-encrypts every secret with newKey (stores it in the
// clear when newKey is nil) and returns their values (value -> name).
func resealSecrets(tx *bolt.Tx, oldKey, newKey *sealKey) (map[string]string, error) {
	b, err := bucket(tx, bucketSecrets)
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	rows := map[string]secretRow{}
	if err := b.ForEach(func(k, v []byte) error {
		row, err := decodeSecret(string(k), v)
		if err != nil {
			return err
		}
		rows[string(k)] = row
		return nil
	}); err != nil {
		return nil, err
	}
	for name, row := range rows {
		plain := []byte(row.Value)
		if row.Sealed != nil {
			if oldKey == nil {
				return nil, fmt.Errorf("vault: secret %q is sealed but the vault has no seal record: the vault file was altered", name)
			}
			if plain, err = oldKey.open(row.Sealed, secretAAD(name)); err != nil {
				return nil, fmt.Errorf("vault: secret %q does not decrypt (%v): the vault file was altered", name, err)
			}
		}
		if len(plain) >= secret.MinLen {
			if old, ok := values[string(plain)]; !ok || name < old {
				values[string(plain)] = name
			}
		}
		if newKey == nil {
			row.Value, row.Sealed = string(plain), nil
		} else {
			row.Value, row.Sealed = "", newKey.seal(plain, secretAAD(name))
		}
		data, err := json.Marshal(row)
		if err != nil {
			return nil, err
		}
		if err := b.Put([]byte(name), data); err != nil {
			return nil, err
		}
	}
	return values, nil
}

// redactRecords redacts values from every stored record, so records
// spilled before a secret was known do not keep it in plaintext once the
// vault is sealed. A changed record's Size follows its new text.
func redactRecords(tx *bolt.Tx, values map[string]string) error {
	m := newMatcher(values)
	heads, data := tx.Bucket(bucketRecords), tx.Bucket(bucketRecordData)
	if m == nil || heads == nil || data == nil {
		return nil
	}
	changed := map[string]string{}
	if err := data.ForEach(func(k, v []byte) error {
		if text := m.replace(string(v)); text != string(v) {
			changed[string(k)] = text
		}
		return nil
	}); err != nil {
		return err
	}
	for k, text := range changed {
		if err := data.Put([]byte(k), []byte(text)); err != nil {
			return err
		}
		var rec Record
		if err := json.Unmarshal(heads.Get([]byte(k)), &rec); err != nil {
			continue
		}
		rec.Size = len(text)
		head, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := heads.Put([]byte(k), head); err != nil {
			return err
		}
	}
	return nil
}

func resealServers(tx *bolt.Tx, oldKey, newKey *sealKey) error {
	b, err := bucket(tx, bucketServers)
	if err != nil {
		return err
	}
	rows := map[string]serverRow{}
	if err := b.ForEach(func(k, v []byte) error {
		var row serverRow
		if err := json.Unmarshal(v, &row); err != nil {
			return fmt.Errorf("vault: server %q is stored as invalid JSON (%v): add it again", k, err)
		}
		rows[string(k)] = row
		return nil
	}); err != nil {
		return err
	}
	for name, row := range rows {
		headers, err := row.headers(oldKey)
		if err != nil {
			return err
		}
		if err := row.setHeaders(headers, newKey); err != nil {
			return err
		}
		data, err := json.Marshal(row)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(name), data); err != nil {
			return err
		}
	}
	return nil
}

// scrubFreePages zeroes every free or pending page of db and everything
// past its high-water mark, then syncs the file. Together with bbolt's
// copy-on-write (every rewritten page is written whole from a zeroed
// buffer) this leaves no byte of a superseded value on disk. The caller
// holds the exclusive file lock, so no reader can be using those pages.
func scrubFreePages(db *bolt.DB) error {
	tx, err := db.Begin(true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	pageSize := int64(db.Info().PageSize)
	hwm := tx.Size() / pageSize
	f, err := os.OpenFile(db.Path(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("vault: scrub free pages: %w", err)
	}
	defer f.Close()
	zero := make([]byte, 64*pageSize)
	zeroRun := func(from, n int64) error {
		for n > 0 {
			c := min(n, int64(len(zero)))
			if _, err := f.WriteAt(zero[:c], from); err != nil {
				return fmt.Errorf("vault: scrub free pages: %w", err)
			}
			from, n = from+c, n-c
		}
		return nil
	}
	runStart, runLen := int64(0), int64(0)
	for id := int64(2); id < hwm; id++ {
		info, err := tx.Page(int(id))
		if err != nil {
			return fmt.Errorf("vault: scrub free pages: %w", err)
		}
		if info != nil && info.Type == "free" {
			if runLen == 0 {
				runStart = id
			}
			runLen++
			continue
		}
		if runLen > 0 {
			if err := zeroRun(runStart*pageSize, runLen*pageSize); err != nil {
				return err
			}
			runLen = 0
		}
	}
	if runLen > 0 {
		if err := zeroRun(runStart*pageSize, runLen*pageSize); err != nil {
			return err
		}
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("vault: scrub free pages: %w", err)
	}
	if tail := st.Size() - hwm*pageSize; tail > 0 {
		if err := zeroRun(hwm*pageSize, tail); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("vault: scrub free pages: %w", err)
	}
	return nil
}

// PassphraseEnv is the environment variable the vault passphrase is read
// from. It never holds anything a command or a model may see.
const PassphraseEnv = "TAI_VAULT_PASSPHRASE"

// PassphraseFromEnv returns an Options.Passphrase that reads
// PassphraseEnv, failing with a clear message when it is unset.
func PassphraseFromEnv() func() (string, error) {
	return func() (string, error) {
		p, ok := os.LookupEnv(PassphraseEnv)
		if !ok || p == "" {
			return "", errors.New(PassphraseEnv + " is not set")
		}
		return p, nil
	}
}

// rewriteSeal is the shape of every change of the seal (Seal, Unseal): in
// one transaction, prepare checks the seal record and names the audit key
// the trail is signed with now and the rewrite to run; the audit journal is
// folded first under that key and stays locked until the transaction
// ends, so no entry another tai appends falls between. Then every free
// page of the file is zeroed, so nothing of the old seal lingers on disk.
func (s *Store) rewriteSeal(prepare func(tx *bolt.Tx) (auditKey []byte, rewrite func() error, err error)) error {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return s.withDB(func(db *bolt.DB) error {
		finish := func(bool) error { return nil }
		err := db.Update(func(tx *bolt.Tx) error {
			key, rewrite, err := prepare(tx)
			if err != nil {
				return err
			}
			finish, err = s.foldTx(tx, key, rewrite)
			return err
		})
		if ferr := finish(err == nil); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		return scrubFreePages(db)
	})
}
