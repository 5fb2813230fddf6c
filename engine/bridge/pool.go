package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"tai/engine"
	"tai/mcp"
	"tai/mcp/config"
	"tai/vault"
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
		cn = &conn{name: server}
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
		c, err := b.open(ctx, st, cn, false)
		if err != nil {
			return nil, err
		}
		cn.c, cn.listed = c, false
	}
	if !cn.listed || cn.stale.Load() {
		cn.stale.Store(false)
		if err := b.relist(ctx, st.row.Name, cn.c, prompt); err != nil {
			if dead(err) {
				cn.c.Close()
				cn.c = nil
			}
			return nil, err
		}
		cn.listed = true
	}
	return cn.c, nil
}

// spawn is what a person consents to before a server is started: the
// exact argv (or URL), the working directory and the names of the
// variables and headers set, with every known secret redacted.
type spawn struct {
	Server    string   `json:"server"`
	Transport string   `json:"transport"`
	Argv      []string `json:"argv,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Env       []string `json:"env,omitempty"` // names only
	URL       string   `json:"url,omitempty"`
	Headers   []string `json:"headers,omitempty"` // names only
}

func spawnOf(e mcp.Entry) spawn {
	s := spawn{Server: e.Name, Transport: e.Transport, Cwd: e.Cwd, URL: e.URL}
	if e.Transport == mcp.TransportStdio {
		s.Argv = append([]string{e.Command}, e.Args...)
	}
	for k := range e.Env {
		s.Env = append(s.Env, k)
	}
	for k := range e.Headers {
		s.Headers = append(s.Headers, k)
	}
	sort.Strings(s.Env)
	sort.Strings(s.Headers)
	return s
}

// digest identifies the spawn (over the expanded values: a changed
// variable that changes the argv asks again). Only the digest is stored.
func (s spawn) digest() string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// text is the spawn as a person reads it, secrets redacted.
func (s spawn) text(redact func(string) string) string {
	var b strings.Builder
	switch s.Transport {
	case mcp.TransportStdio:
		fmt.Fprintf(&b, "  run:  %s\n", redact(quoteArgv(s.Argv)))
		cwd := s.Cwd
		if cwd == "" {
			cwd = "(tai's working directory)"
		}
		fmt.Fprintf(&b, "  cwd:  %s\n", redact(cwd))
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "  env:  %s (values not shown)\n", strings.Join(s.Env, ", "))
		}
	default:
		fmt.Fprintf(&b, "  url:  %s\n", redact(s.URL))
		if len(s.Headers) > 0 {
			fmt.Fprintf(&b, "  headers: %s (values not shown)\n", strings.Join(s.Headers, ", "))
		}
	}
	return b.String()
}

// quoteArgv shows argv as a shell would read it: words with blanks or
// quotes are single-quoted.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// expand resolves st's ${VAR} references (process environment first, then
// vault secrets), registers every value found for redaction and refuses
// when a name cannot be resolved.
func (b *Bridge) expand(e mcp.Entry) (mcp.Entry, error) {
	// Literal credentials in the entry are secrets too.
	for k, v := range e.Headers {
		b.store.AddRedaction("header:"+k, v)
	}
	for k, v := range e.Env {
		if credentialName(k) {
			b.store.AddRedaction(k, v)
		}
	}
	lookup := config.Chain(
		func(name string) (string, bool) {
			v, ok := b.opts.Getenv(name)
			if ok && !slices.Contains(mcp.InheritedEnv(), name) {
				b.store.AddRedaction(name, v)
			}
			return v, ok
		},
		func(name string) (string, bool) {
			v, _, err := b.store.SecretGet(name)
			if err != nil {
				return "", false
			}
			b.store.AddRedaction(name, v)
			return v, true
		},
		config.FolderVars(b.opts.Dir),
	)
	out, missing := b.opts.Expand(e, lookup)
	if len(missing) > 0 {
		return e, config.MissingError(e.Name, missing)
	}
	return out, nil
}

// credentialName reports an environment name that holds a credential, as
// the shell's environment policy reads names.
func credentialName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL", "AUTH", "PAT"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// consentSpawn asks before a server is started: in interactive mode a
// person answers (nobody there: refused); --auto consents and tells the
// front end; --yolo consents silently. first says the server is not
// registered yet.
func (b *Bridge) consentSpawn(ctx context.Context, sp spawn, first bool) error {
	a := b.approver(ctx)
	if err := b.attended(ctx, a, "start MCP server "+sp.Server); err != nil {
		return err
	}
	args := map[string]any{"transport": sp.Transport}
	if len(sp.Argv) > 0 {
		args["argv"] = b.store.Redact(quoteArgv(sp.Argv))
	}
	if sp.Cwd != "" {
		args["cwd"] = b.store.Redact(sp.Cwd)
	}
	if sp.URL != "" {
		args["url"] = b.store.Redact(sp.URL)
	}
	if len(sp.Env) > 0 {
		args["env"] = strings.Join(sp.Env, ", ")
	}
	switch a.Mode() {
	case engine.Yolo:
		return nil
	case engine.Auto:
		_, err := a.Approve(ctx, engine.Consent{Tool: "mcp-spawn", Origin: sp.Server, Digest: sp.digest()[:12], Args: args})
		return err
	}
	why := "tai is about to start MCP server " + sp.Server + " for the first time:"
	if !first {
		why = "MCP server " + sp.Server + " would start with a command that differs from the one you consented to:"
	}
	q := why + "\n" + sp.text(b.store.Redact) + "Start it? [y/N]"
	ok, err := a.Decide(ctx, q)
	if err != nil {
		return fmt.Errorf("mcp server %q not started: nobody could consent (%v)", sp.Server, err)
	}
	if !ok {
		return fmt.Errorf("mcp server %q not started: consent was refused", sp.Server)
	}
	return nil
}

// attended refuses what needs a person in a turn a model runs with nobody
// present to consent (a served chat turn): the model cannot consent for a
// person.
func (b *Bridge) attended(ctx context.Context, a *engine.Approver, what string) error {
	if _, byModel := engine.AgentFrom(ctx); byModel && a.Prompter() == nil {
		return fmt.Errorf("refused to %s: a model asked, and nobody is present to consent; a person must do it (tai.mcp or /mcp)", what)
	}
	return nil
}

// clientOptions returns the options of one connection to server.
func (b *Bridge) clientOptions(cn *conn) *mcp.ClientOptions {
	var o mcp.ClientOptions
	if b.opts.Client != nil {
		o = *b.opts.Client
	}
	o.Redact = b.store.Redact
	if cn != nil {
		o.OnToolsChanged = func() { cn.stale.Store(true) }
	}
	return &o
}

// open expands st's entry, asks consent when the spawn differs from the
// one consented to, and connects.
func (b *Bridge) open(ctx context.Context, st *serverState, cn *conn, restart bool) (*mcp.Client, error) {
	e, err := b.expand(st.entry)
	if err != nil {
		return nil, err
	}
	sp := spawnOf(e)
	if d := sp.digest(); d != st.row.Consented {
		if err := b.consentSpawn(ctx, sp, false); err != nil {
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
	c, err := mcp.Connect(ctx, e, b.clientOptions(cn))
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
	return &bridgeError{msg: b.clean(msg), err: err}
}

// bridgeError is an error whose text was redacted and cleaned.
type bridgeError struct {
	msg string
	err error
}

func (e *bridgeError) Error() string { return e.msg }
func (e *bridgeError) Unwrap() error { return e.err }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// listing turns a tools/list answer into cache rows. A tool listed twice
// keeps its first definition; one whose name no call could carry (control
// characters, over 256 bytes) is left out rather than failing the whole
// server.
func listing(tools []mcp.Tool) []vault.ServerTool {
	out := make([]vault.ServerTool, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] || len(t.Name) > 256 || strings.ContainsFunc(t.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			continue
		}
		seen[t.Name] = true
		out = append(out, vault.ServerTool{Tool: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	return out
}

// relist lists server's tools on c, stores the listing as the cache and
// settles drift: a tool added or redefined since its pin is withheld
// unless a person grants it now (interactive mode only, when prompt); a
// removed one is dropped silently.
func (b *Bridge) relist(ctx context.Context, server string, c *mcp.Client, prompt bool) error {
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return b.failure(err, c.Stderr())
	}
	rows := listing(tools)
	if err := b.store.ToolsReplace(server, rows); err != nil {
		return err
	}
	s, err := b.reload()
	if err != nil {
		return err
	}
	st := s.servers[server]
	if st == nil {
		return fmt.Errorf("mcp server %q was removed meanwhile", server)
	}
	a := b.approver(ctx)
	if !prompt || a.Mode() != engine.Interactive || a.Prompter() == nil {
		return nil // --auto, --yolo and served sessions never grant drift
	}
	granted := false
	for _, bt := range st.tools {
		if bt.state != StateWithheld {
			continue
		}
		ok, err := b.askGrant(ctx, a, st, bt.cached)
		if err != nil || !ok {
			continue
		}
		granted = true
	}
	if granted {
		_, err = b.reload()
	}
	return err
}

// askGrant shows how t differs from its pin and stores the new pin when a
// person says yes.
func (b *Bridge) askGrant(ctx context.Context, a *engine.Approver, st *serverState, t vault.ServerTool) (bool, error) {
	pin, pinned := st.pins[t.Tool]
	var q strings.Builder
	if pinned {
		fmt.Fprintf(&q, "MCP server %s redefined tool %s since you granted it:\n", st.row.Name, t.Tool)
	} else {
		fmt.Fprintf(&q, "MCP server %s now lists a tool it did not have when you added it: %s\n", st.row.Name, t.Tool)
	}
	q.WriteString(b.clean(b.store.Redact(driftDiff(pin.Description, pin.Schema, t.Description, t.Schema))))
	q.WriteString("Grant the new definition? [y/N]")
	ok, err := a.Decide(ctx, q.String())
	if err != nil || !ok {
		return false, err
	}
	if err := b.store.PinPut(pinOf(st.row.Name, t)); err != nil {
		return false, err
	}
	b.auditAdmin("grant", st.row.Name+"/"+t.Tool, "ok")
	return true, nil
}

func pinOf(server string, t vault.ServerTool) vault.ToolPin {
	return vault.ToolPin{Server: server, Tool: t.Tool, Hash: toolHash(t.Tool, t.Description, t.Schema), Description: t.Description, Schema: t.Schema}
}

// auditAdmin records a change to the registry in the audit trail.
func (b *Bridge) auditAdmin(what, subject, outcome string) {
	_, _ = b.store.AuditAppend(vault.AuditEntry{Kind: "mcp-" + what, Subject: subject, Outcome: outcome})
}

// listTools lists c's tools within the connect timeout, so a server that
// never answers tools/list cannot hold a registration or a call forever.
func (b *Bridge) listTools(ctx context.Context, c *mcp.Client) ([]mcp.Tool, error) {
	limit := mcp.MCP_CONNECT_TIMEOUT
	if b.opts.Client != nil && b.opts.Client.ConnectTimeout > 0 {
		limit = b.opts.Client.ConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tools, err := c.Tools(ctx)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("mcp server %q did not answer tools/list within %s: %w", c.Name(), limit, err)
	}
	return tools, err
}
