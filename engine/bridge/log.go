package bridge

import (
	"context"

	"tai/mcp"
)

// Log returns what server has logged through this bridge's connections
// (notifications/message) at or above min, every level for "": the
// newest mcp.LogMaxEntries messages at most, redacted. It never reaches
// a model: no agent tool reads it.
func (b *Bridge) Log(server string, min mcp.LogLevel) (mcp.LogView, error) {
	if _, err := b.registered(server); err != nil {
		return mcp.LogView{}, err
	}
	cn, err := b.connFor(server)
	if err != nil {
		return mcp.LogView{}, err
	}
	return cn.log.View(min), nil
}

// SetLogLevel asks server to log at level and above (logging/setLevel),
// connecting when needed; a connection opened later asks again. A server
// that does not declare logging is not asked: the error wraps
// mcp.ErrNoLogging.
func (b *Bridge) SetLogLevel(ctx context.Context, server string, level mcp.LogLevel) error {
	st, err := b.registered(server)
	if err != nil {
		return err
	}
	c, err := b.client(ctx, st, false)
	if err != nil {
		return err
	}
	if err := c.SetLogLevel(ctx, level); err != nil {
		return err
	}
	cn, err := b.connFor(server)
	if err != nil {
		return err
	}
	cn.mu.Lock()
	cn.level = level
	cn.mu.Unlock()
	return nil
}

// registered returns the state of the registered server called name.
func (b *Bridge) registered(name string) (*serverState, error) {
	s, err := b.current()
	if err != nil {
		return nil, err
	}
	st := s.servers[name]
	if st == nil {
		return nil, notRegistered(name)
	}
	return st, nil
}
