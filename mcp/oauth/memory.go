package oauth

import "sync"

// MemoryStore is a TokenStore in memory, for tests and for a login whose
// tokens need not outlive the process.
type MemoryStore struct {
	mu  sync.Mutex
	tok *Tokens
	reg *Registration
}

// Tokens returns a copy of the tokens held, or nil.
func (m *MemoryStore) Tokens() (*Tokens, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tok == nil {
		return nil, nil
	}
	t := *m.tok
	return &t, nil
}

// SaveTokens keeps a copy of t.
func (m *MemoryStore) SaveTokens(t *Tokens) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *t
	m.tok = &c
	return nil
}

// DropTokens forgets the tokens.
func (m *MemoryStore) DropTokens() error {
	m.mu.Lock()
	m.tok = nil
	m.mu.Unlock()
	return nil
}

// Registration returns a copy of the registration kept, or nil.
func (m *MemoryStore) Registration() (*Registration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reg == nil {
		return nil, nil
	}
	r := *m.reg
	return &r, nil
}

// SaveRegistration keeps a copy of r.
func (m *MemoryStore) SaveRegistration(r *Registration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *r
	m.reg = &c
	return nil
}

// DropRegistration forgets the registration.
func (m *MemoryStore) DropRegistration() error {
	m.mu.Lock()
	m.reg = nil
	m.mu.Unlock()
	return nil
}
