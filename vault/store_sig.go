package vault

// This file lists the Store's methods. Every body is replaced by the real
// implementation; the signatures are the contract the other packages build on.

import "encoding/json"

// Store is an open vault. It is safe for concurrent use by goroutines of one
// process, and several processes may use one vault file at once.
type Store struct{}

// DefaultPath returns $TAI_VAULT, else $XDG_DATA_HOME/tai/vault.db, else
// ~/.local/share/tai/vault.db.
func DefaultPath() string { panic("todo") }

// Open opens (creating 0600 in a 0700 folder when missing) the vault at path.
func Open(path string, opts *Options) (*Store, error) { panic("todo") }

// Close releases the Store. It is safe to call more than once.
func (s *Store) Close() error { panic("todo") }

// Path returns the vault file's path.
func (s *Store) Path() string { panic("todo") }

// ValidSecretName reports whether name follows the SecretName rule:
// 1–128 of letters, digits, '-', '_', '.'.
func ValidSecretName(name string) error { panic("todo") }

func (s *Store) SecretSet(name, value string, meta map[string]any) error         { panic("todo") }
func (s *Store) SecretGet(name string) (string, map[string]any, error)           { panic("todo") }
func (s *Store) SecretList() ([]SecretInfo, error)                               { panic("todo") }
func (s *Store) SecretDelete(name string) error                                  { panic("todo") }
func (s *Store) RecordPut(text string, meta map[string]any) (string, error)      { panic("todo") }
func (s *Store) RecordGet(id string, offset, length int) (string, Record, error) { panic("todo") }
func (s *Store) RecordList(n int) ([]Record, error)                              { panic("todo") }
func (s *Store) AuditAppend(e AuditEntry) (AuditEntry, error)                    { panic("todo") }
func (s *Store) AuditTail(n int, kind string) ([]AuditEntry, error)              { panic("todo") }
func (s *Store) AuditVerify() (int, error)                                       { panic("todo") }
func (s *Store) ProfilePut(name string, data json.RawMessage) error              { panic("todo") }
func (s *Store) ProfileGet(name string) (json.RawMessage, error)                 { panic("todo") }
func (s *Store) ProfileList() ([]string, error)                                  { panic("todo") }
func (s *Store) ProfileDelete(name string) error                                 { panic("todo") }
func (s *Store) ServerPut(srv Server) error                                      { panic("todo") }
func (s *Store) ServerGet(name string) (Server, error)                           { panic("todo") }
func (s *Store) ServerList() ([]Server, error)                                   { panic("todo") }
func (s *Store) ServerDelete(name string) error                                  { panic("todo") }
func (s *Store) ServerProfileSet(server, profile string, enabled bool) error     { panic("todo") }
func (s *Store) ServerProfiles(server string) (map[string]bool, error)           { panic("todo") }
func (s *Store) PinPut(p ToolPin) error                                          { panic("todo") }
func (s *Store) Pins(server string) ([]ToolPin, error)                           { panic("todo") }
func (s *Store) ToolsReplace(server string, tools []ServerTool) error            { panic("todo") }
func (s *Store) Tools(server string) ([]ServerTool, error)                       { panic("todo") }
func (s *Store) Seal(passphrase string) error                                    { panic("todo") }
func (s *Store) Sealed() (bool, error)                                           { panic("todo") }
func (s *Store) Redact(text string) string                                       { panic("todo") }
func (s *Store) AddRedaction(name, value string)                                 { panic("todo") }
