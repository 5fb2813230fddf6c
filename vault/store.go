package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Bucket names. The four mcp_* buckets are the seed's tables; meta holds the
// seal parameters, the secrets generation counter and the audit head.
var (
	bucketServers        = []byte("mcp_servers")
	bucketServerProfiles = []byte("mcp_server_profiles")
	bucketPins           = []byte("mcp_tool_pins")
	bucketTools          = []byte("mcp_server_tools")
	bucketSecrets        = []byte("secrets")
	bucketRecords        = []byte("records")
	bucketRecordData     = []byte("record_data")
	bucketAudit          = []byte("audit")
	bucketProfiles       = []byte("profiles")
	bucketMeta           = []byte("meta")

	allBuckets = [][]byte{
		bucketServers, bucketServerProfiles, bucketPins, bucketTools,
		bucketSecrets, bucketRecords, bucketRecordData, bucketAudit,
		bucketProfiles, bucketMeta,
	}
)

// defaultLockTimeout is the wait for the file lock when Options.LockTimeout
// is zero.
const defaultLockTimeout = 5 * time.Second

// errClosed reports use of a Store after Close.
var errClosed = errors.New("vault: store is closed")

// pathLocks serialises transactions on one vault file inside this process.
// flock(2) locks belong to open file descriptions, so two opens of the same
// file by one process conflict like two processes would; every Store on a
// path shares one RWMutex so in-process callers queue here instead of
// polling the file lock.
var pathLocks sync.Map // absolute path -> *sync.RWMutex

// Store is an open vault. It is safe for concurrent use by goroutines of one
// process, and several processes may use one vault file at once.
//
// Store keeps no file open between calls: every method opens the bbolt file
// for one transaction (read-only with a shared lock for reads, read-write
// with an exclusive lock for writes) and closes it afterwards, so a REPL and
// a --serve-mcp process can share one vault.
type Store struct {
	path        string
	lockTimeout time.Duration
	passphrase  func() (string, error)
	prompt      func(try int, last error) (string, error)
	kdf         kdfParams
	// record retention: a total size cap (<= 0: none) and a maximum age
	// (0: none).
	recordLimit  int64
	recordMaxAge time.Duration
	mu           *sync.RWMutex
	closed       atomic.Bool
	creating     bool // set by Open while it lays out a new vault: the file may be empty

	// seal state: passphrase is asked for at most once (prompt is asked
	// again on every access that lacks the key).
	keyMu    sync.Mutex
	asked    bool
	pass     string
	passErr  error
	key      atomic.Pointer[sealKey]
	redactor redactor
	gen      genFile
	watch    fileWatch // the vault file itself, for the redactor
	journal  journal
	// onOpen is Options.OnOpen.
	onOpen func()

	// sawOpen: this Store saw the vault without a seal, so a seal found
	// later was put on by another process.
	sawOpen atomic.Bool
	// refuse, when set, is why an access is not to ask PassphrasePrompt
	// (see RefusePrompts).
	refuse atomic.Pointer[string]
}

// DefaultPath returns $TAI_VAULT, else $XDG_DATA_HOME/tai/vault.db, else
// ~/.local/share/tai/vault.db. It returns "" when none of them can be
// determined (no home folder), which Open reports as an error.
func DefaultPath() string {
	if p := os.Getenv("TAI_VAULT"); p != "" {
		return p
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "tai", "vault.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "tai", "vault.db")
}

// Open opens (creating 0600 in a 0700 folder when missing) the vault at path.
// Opening is cheap: it checks the file once and keeps nothing open.
func Open(path string, opts *Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("vault: no vault path: set TAI_VAULT or HOME, or pass --vault PATH")
	}
	// The real file, reached through links only when they are ours and
	// lead somewhere, and nobody else's to read or write.
	abs, err := resolvePath(path)
	if err != nil {
		return nil, err
	}
	if err := checkPlace(abs); err != nil {
		return nil, err
	}
	s := &Store{path: abs, lockTimeout: defaultLockTimeout, kdf: defaultKDF, recordLimit: DefaultRecordLimit}
	s.watch.every = FileRecheck
	if opts != nil {
		if opts.RecordLimit != 0 {
			s.recordLimit = opts.RecordLimit
		}
		if opts.RecordMaxAge < 0 {
			return nil, fmt.Errorf("vault: Options.RecordMaxAge %v is negative: give a positive age, or zero to keep records whatever their age", opts.RecordMaxAge)
		}
		s.recordMaxAge = opts.RecordMaxAge
		if opts.Passphrase != nil && opts.PassphrasePrompt != nil {
			return nil, errors.New("vault: Options.Passphrase and Options.PassphrasePrompt are both set: give one passphrase source")
		}
		s.passphrase, s.prompt = opts.Passphrase, opts.PassphrasePrompt
		if opts.LockTimeout > 0 {
			s.lockTimeout = opts.LockTimeout
		}
		if opts.kdf.N != 0 {
			s.kdf = opts.kdf
		}
		s.onOpen = opts.OnOpen
	}
	mu, _ := pathLocks.LoadOrStore(abs, new(sync.RWMutex))
	s.mu = mu.(*sync.RWMutex)
	s.redactor.extra = map[string]string{}
	s.gen.path = abs + GenerationSuffix
	s.journal.path = abs + JournalSuffix

	info, err := os.Stat(abs)
	switch {
	case err == nil && !info.Mode().IsRegular():
		return nil, notRegularError(abs, info.Mode())
	case err == nil && info.Size() > 0:
		// An existing vault: check that it is one with a read-only open.
		if err := s.view(func(tx *bolt.Tx) error {
			m, err := readSealMeta(tx)
			s.sawOpen.Store(err == nil && m == nil)
			return nil
		}); err != nil {
			return nil, err
		}
		return s, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("vault: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("vault: create the vault's folder: %w", err)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil && dir != filepath.Dir(abs) {
		// Key the in-process lock by the path later Opens will resolve.
		abs = filepath.Join(dir, filepath.Base(abs))
		mu, _ := pathLocks.LoadOrStore(abs, new(sync.RWMutex))
		s.path, s.mu = abs, mu.(*sync.RWMutex)
		s.gen.path = abs + GenerationSuffix
		s.journal.path = abs + JournalSuffix
	}
	// Only now may the file be empty: bbolt lays out a new vault in it.
	s.creating = true
	defer func() { s.creating = false }()
	if err := s.update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	s.sawOpen.Store(true)
	return s, nil
}

// Close releases the Store. It is safe to call more than once. The Store
// holds the bbolt file open only during a call; Close makes the audit
// entries this Store wrote durable (folding the journal into the vault, or
// syncing it), closes the generation file and the journal, and marks the
// Store unusable.
func (s *Store) Close() error {
	if s.closed.Load() {
		return nil
	}
	err := s.Sync()
	if s.closed.Swap(true) {
		return nil
	}
	s.journal.mu.Lock()
	s.journal.close()
	s.journal.mu.Unlock()
	s.gen.close()
	return err
}

// Path returns the vault file's path.
func (s *Store) Path() string { return s.path }

// view runs fn in a read transaction on a read-only open of the file,
// holding a shared file lock only for its duration. A sealed value read
// without the key makes fn return errNeedKey; view then asks for the
// passphrase (outside the lock) and runs fn once more.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	return s.withKey(s.viewOnce, fn)
}

// update is view's read-write counterpart; fn's changes commit atomically
// or not at all.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	return s.withKey(s.updateOnce, fn)
}

// withKey runs fn through once; when fn needed the seal key (errNeedKey), it
// unlocks the seal outside the file lock and runs fn once more.
func (s *Store) withKey(once func(func(*bolt.Tx) error) error, fn func(tx *bolt.Tx) error) error {
	err := once(fn)
	if errors.Is(err, errNeedKey) {
		if err := s.unlock(); err != nil {
			return err
		}
		err = once(fn)
	}
	return err
}

func (s *Store) viewOnce(fn func(tx *bolt.Tx) error) error {
	return s.viewWithin(s.lockTimeout, fn)
}

// viewWithin is viewOnce waiting at most timeout for the file lock.
func (s *Store) viewWithin(timeout time.Duration, fn func(tx *bolt.Tx) error) error {
	if s.closed.Load() {
		return errClosed
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	db, err := s.openDB(true, timeout)
	if err != nil {
		return err
	}
	defer db.Close()
	return guard(s.path, func() error { return db.View(fn) })
}

func (s *Store) updateOnce(fn func(tx *bolt.Tx) error) error {
	if s.closed.Load() {
		return errClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.openDB(false, s.lockTimeout)
	if err != nil {
		return err
	}
	before := s.watch.current(s.path, true)
	err = guard(s.path, func() error { return db.Update(fn) })
	if err == nil {
		s.ownWrite(before)
	}
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("vault: close %s: %w", s.path, cerr)
	}
	return err
}

// withDB runs fn with the file opened read-write and exclusively locked for
// the whole call; Seal uses it to commit and then scrub freed pages under
// one lock.
func (s *Store) withDB(fn func(db *bolt.DB) error) error {
	if s.closed.Load() {
		return errClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.openDB(false, s.lockTimeout)
	if err != nil {
		return err
	}
	err = guard(s.path, func() error { return fn(db) })
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("vault: close %s: %w", s.path, cerr)
	}
	return err
}

// openDB opens the bbolt file for one transaction. The file lock is taken
// by lockedOpen (a blocking flock bounded by the lock timeout) so waiters
// are woken as soon as the holder closes, rather than polling.
func (s *Store) openDB(readOnly bool, timeout time.Duration) (*bolt.DB, error) {
	if s.onOpen != nil {
		s.onOpen()
	}
	var db *bolt.DB
	err := guard(s.path, func() (err error) {
		db, err = bolt.Open(s.path, 0o600, &bolt.Options{
			ReadOnly:     readOnly,
			Timeout:      timeout,
			NoStatistics: true,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := lockedOpen(name, flag, perm, !readOnly, timeout)
				if err != nil {
					return nil, err
				}
				// Checked against its header before bbolt maps it.
				if err := checkHeader(f, name, s.creating); err != nil {
					f.Close()
					return nil, err
				}
				return f, nil
			},
		})
		return err
	})
	if err == nil {
		return db, nil
	}
	switch {
	case errors.Is(err, ErrDamaged):
		return nil, err
	case errors.Is(err, ErrLocked):
		return nil, err
	case errors.Is(err, berrors.ErrTimeout):
		return nil, lockedError(s.path, timeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping):
		return nil, fmt.Errorf("vault: %s is not a tai vault (%v): point TAI_VAULT or --vault at another file", s.path, err)
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("vault: %s no longer exists: open the vault again to recreate it", s.path)
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("vault: %s: permission denied: the vault must be readable and writable by you", s.path)
	}
	return nil, fmt.Errorf("vault: open %s: %w", s.path, err)
}

// bucket returns the named bucket for writing, creating it when a vault
// made by an older tai lacks it.
func bucket(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	if b := tx.Bucket(name); b != nil {
		return b, nil
	}
	return tx.CreateBucketIfNotExists(name)
}

// get returns a copy of key's value in bucket name, or nil when either is
// missing.
func get(tx *bolt.Tx, name, key []byte) []byte {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	v := b.Get(key)
	if v == nil {
		return nil
	}
	return append([]byte(nil), v...)
}
