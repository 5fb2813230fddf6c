package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tai/mcp"
)

// conn is the connection to one server, opened on its first call and
// reused. A connection that died is opened again on the next call, once
// per call.
type conn struct {
	name string

	mu     sync.Mutex // held while connecting or listing
	c      *mcp.Client
	listed bool        // tools/list done on this connection
	stale  atomic.Bool // the server sent tools/list_changed since
	// log keeps what the server logs, across its connections; level is
	// the one a person asked for (SetLogLevel), asked again of each new
	// connection.
	log   *mcp.ServerLog
	level mcp.LogLevel
	// res is the connection's resource listing (nil: none yet);
	// resStale says the server sent resources/list_changed since.
	res      *ResourceList
	resStale atomic.Bool
	// sampled holds its sampling requests of the last minute.
	sampled sampleWindow
	// asked holds the URL elicitations awaiting their completion.
	asked urlAsks
}

func (cn *conn) close() {
	cn.mu.Lock()
	c := cn.c
	cn.c = nil
	cn.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// connFor returns the pool's conn for server, creating it.
func (b *Bridge) connFor(server string) (*conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("mcp server %q: tai is shutting down", server)
	}
	cn := b.conns[server]
	if cn == nil {
		cn = &conn{name: server, log: mcp.NewServerLog(b.store.Redact)}
		b.conns[server] = cn
	}
	return cn, nil
}

// dropConn closes and forgets server's connection (its row was removed).
func (b *Bridge) dropConn(server string) {
	b.mu.Lock()
	cn := b.conns[server]
	delete(b.conns, server)
	b.mu.Unlock()
	if cn != nil {
		cn.close()
	}
}

// dead reports whether err means the connection is gone (the process
// exited, the stream closed), so the next call should open a new one.
func dead(err error) bool {
	var pe *mcp.ProcessError
	return errors.As(err, &pe) || errors.Is(err, mcp.ErrClosed)
}

// client returns a live client for st, connecting (with spawn consent when
// the expanded command differs from the one consented to) and listing the
// tools (pins checked) when needed.
func (b *Bridge) client(ctx context.Context, st *serverState, prompt bool) (*mcp.Client, error) {
	cn, err := b.connFor(st.row.Name)
	if err != nil {
		return nil, err
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.c == nil {
		c, err := b.open(ctx, st, cn)
		if err != nil {
			return nil, b.explained(st.entry, err, true)
		}
		cn.c, cn.listed, cn.res = c, false, nil
		if cn.level != "" {
			// Asked of the new connection as of the last; a server that
			// stopped declaring logging keeps its own level.
			_ = c.SetLogLevel(ctx, cn.level)
		}
	}
	if !cn.listed || cn.stale.Load() {
		cn.stale.Store(false)
		if err := b.relist(ctx, st.row.Name, cn.c, prompt); err != nil {
			if dead(err) {
				cn.c.Close()
				cn.c = nil
			}
			return nil, b.explained(st.entry, err, true)
		}
		cn.listed = true
	}
	return cn.c, nil
}

// clientOptions returns the options of one connection to server.
func (b *Bridge) clientOptions(cn *conn, e mcp.Entry) *mcp.ClientOptions {
	var o mcp.ClientOptions
	if b.opts.Client != nil {
		o = *b.opts.Client
	}
	o.Redact = b.store.Redact
	o.Notifications = maps.Clone(o.Notifications)
	if o.Notifications == nil {
		o.Notifications = map[string]mcp.NotificationHandler{}
	}
	o.Notifications[mcp.MethodProgress] = b.progressHandler
	if cn != nil {
		o.OnToolsChanged = func() { cn.stale.Store(true) }
		notes := make(map[string]mcp.NotificationHandler, len(o.Notifications)+2)
		for method, h := range o.Notifications {
			notes[method] = h
		}
		notes[mcp.MethodLogMessage] = cn.log.Notify
		// A changed prompt list is listed again with the tools, before
		// the next call or prompt.
		prev := notes[mcp.MethodPromptsListChanged]
		notes[mcp.MethodPromptsListChanged] = func(ctx context.Context, params json.RawMessage) {
			cn.stale.Store(true)
			if prev != nil {
				prev(ctx, params)
			}
		}
		o.Notifications = notes
		next := notes[mcp.MethodResourcesListChanged]
		notes[mcp.MethodResourcesListChanged] = func(ctx context.Context, params json.RawMessage) {
			cn.resStale.Store(true)
			if next != nil {
				next(ctx, params)
			}
		}
	}
	b.serverAsks(&o, cn, e)
	return b.sandboxed(&o, e)
}

// open expands st's entry, asks consent when the spawn differs from the
// one consented to, and connects.
func (b *Bridge) open(ctx context.Context, st *serverState, cn *conn) (*mcp.Client, error) {
	e, _, err := b.expand(st.entry)
	if err != nil {
		return nil, err
	}
	if err := b.requireSandbox(e); err != nil {
		return nil, err
	}
	sp := b.spawnFor(e, st.entry)
	if d := sp.digest(); d != st.row.Consented {
		sp.Confined = b.confinementOf(e)
		if err := b.consentSpawn(ctx, sp); err != nil {
			return nil, err
		}
		if err := b.store.ServerConsent(st.row.Name, d); err != nil {
			return nil, err
		}
		// Snapshots are shared and never modified: read the new one.
		if _, err := b.reload(); err != nil {
			return nil, err
		}
	}
	o, err := b.withAuthorizer(b.clientOptions(cn, e), e)
	if err != nil {
		return nil, err
	}
	c, err := mcp.Connect(ctx, e, o)
	if err != nil {
		return nil, b.failure(err, "")
	}
	return c, nil
}

// failure words a connection failure for a person and a model: the error
// (already redacted by the client) and the server's stderr tail, cleaned.
func (b *Bridge) failure(err error, stderr string) error {
	msg := err.Error()
	if tail := strings.TrimSpace(stderr); tail != "" && !strings.Contains(msg, tail) {
		msg += "\nlast stderr lines:\n" + lastLines(b.store.Redact(tail), 10)
	}
	return mcp.Reworded(err, b.clean(msg))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// connectLimit is the connect timeout, which bounds a listing too.
func (b *Bridge) connectLimit() time.Duration {
	if b.opts.Client != nil && b.opts.Client.ConnectTimeout > 0 {
		return b.opts.Client.ConnectTimeout
	}
	return mcp.MCP_CONNECT_TIMEOUT
}

// listTools lists c's tools within the connect timeout, so a server that
// never answers tools/list cannot hold a registration or a call forever.
func (b *Bridge) listTools(ctx context.Context, c *mcp.Client) ([]mcp.Tool, error) {
	limit := b.connectLimit()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tools, err := c.Tools(ctx)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("mcp server %q did not answer tools/list within %s: %w", c.Name(), limit, err)
	}
	if err == nil {
		b.noteOutputs(c.Name(), tools)
	}
	return tools, err
}
