package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"tai/mcp"
)

// session is one entry of the session table: the catalog's state plus what
// the server keeps about it.
type session struct {
	id      string
	state   Session
	created time.Time
	client  string // clientInfo name and version, for messages

	// ctx ends when the session closes, cancelling its calls.
	ctx    context.Context
	cancel context.CancelFunc

	turn fifo // one request at a time, in order of arrival

	mu       sync.Mutex
	lastSeen time.Time
	inFlight int                           // requests between begin and end
	calls    map[string]context.CancelFunc // in-flight requests by id, for notifications/cancelled
	closed   bool                          // out of the table; state.Close when inFlight reaches 0
	released bool                          // state.Close was called
	level    mcp.LogLevel                  // set by logging/setLevel; "" logs nothing
}

// setLevel keeps the log level the client set.
func (s *session) setLevel(l mcp.LogLevel) {
	s.mu.Lock()
	s.level = l
	s.mu.Unlock()
}

// logs reports whether a message at level l goes to the client: it set a
// level (logging/setLevel), and l is at or above it.
func (s *session) logs(l mcp.LogLevel) bool {
	s.mu.Lock()
	set := s.level
	s.mu.Unlock()
	return set != "" && slices.Index(mcp.LogLevels, l) >= slices.Index(mcp.LogLevels, set)
}

// newSessionID returns 32 random bytes as 64 hex digits: visible ASCII, and
// unguessable.
func newSessionID() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// begin marks a request in flight; it fails when the session closed
// meanwhile.
func (s *session) begin(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inFlight++
	s.lastSeen = now
	return true
}

// end marks a request done, and releases the state when the session was
// closed while the request ran.
func (s *session) end(now time.Time) {
	s.mu.Lock()
	s.inFlight--
	s.lastSeen = now
	release := s.closed && s.inFlight == 0 && !s.released
	if release {
		s.released = true
	}
	s.mu.Unlock()
	if release {
		s.state.Close()
	}
}

// idle reports whether the session has had no request in flight for
// longer than idle.
func (s *session) idle(now time.Time, idle time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight == 0 && now.Sub(s.lastSeen) > idle
}

// close cancels the session's calls and releases its state once none is
// in flight. It may be called more than once.
func (s *session) close() {
	s.cancel()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	release := s.inFlight == 0 && !s.released
	if release {
		s.released = true
	}
	s.mu.Unlock()
	if release {
		s.state.Close()
	}
}

// track registers an in-flight request, by its id as ID.String gives it,
// for notifications/cancelled.
func (s *session) track(id string, cancel context.CancelFunc) {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]context.CancelFunc{}
	}
	s.calls[id] = cancel
	s.mu.Unlock()
}

func (s *session) untrack(id string) {
	s.mu.Lock()
	delete(s.calls, id)
	s.mu.Unlock()
}

// cancelCall cancels the in-flight request with the given id (the raw
// JSON of requestId), if there is one.
func (s *session) cancelCall(id string) {
	s.mu.Lock()
	cancel := s.calls[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// fifo is a lock granted in the order it was asked for, so the requests of
// one session run in the order they arrived.
type fifo struct {
	mu      sync.Mutex
	busy    bool
	waiters []chan struct{}
}

// lock waits for the lock; it gives up when ctx ends first.
func (f *fifo) lock(ctx context.Context) error {
	f.mu.Lock()
	if !f.busy {
		f.busy = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		for i, w := range f.waiters {
			if w == ch {
				f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
				f.mu.Unlock()
				return ctx.Err()
			}
		}
		f.mu.Unlock()
		// Granted meanwhile: pass it on.
		f.unlock()
		return ctx.Err()
	}
}

// queued returns how many wait for the lock.
func (f *fifo) queued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// unlock hands the lock to the longest waiter, or frees it.
func (f *fifo) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		f.busy = false
		return
	}
	next := f.waiters[0]
	f.waiters = f.waiters[1:]
	close(next)
}

// table is the session table.
type table struct {
	mu       sync.Mutex
	sessions map[string]*session
	swept    time.Time
}

func (t *table) get(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[id]
}

func (t *table) add(s *session) {
	t.mu.Lock()
	t.sessions[s.id] = s
	t.mu.Unlock()
}

// remove takes id out of the table and reports the session it held.
func (t *table) remove(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions[id]
	delete(t.sessions, id)
	return s
}

func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// sweep closes the sessions idle for longer than idle and returns how many.
func (t *table) sweep(now time.Time, idle time.Duration) int {
	t.mu.Lock()
	var gone []*session
	for id, s := range t.sessions {
		if s.idle(now, idle) {
			gone = append(gone, s)
			delete(t.sessions, id)
		}
	}
	t.swept = now
	t.mu.Unlock()
	for _, s := range gone {
		s.close()
	}
	return len(gone)
}

// sweepDue reports whether the last sweep is older than every.
func (t *table) sweepDue(now time.Time, every time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return now.Sub(t.swept) >= every
}

// closeAll empties the table and closes every session.
func (t *table) closeAll() {
	t.mu.Lock()
	all := t.sessions
	t.sessions = map[string]*session{}
	t.mu.Unlock()
	for _, s := range all {
		s.close()
	}
}
