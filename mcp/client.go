package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ClientName is the clientInfo.name the client sends in initialize.
const ClientName = "tai"

// DefaultMaxPages caps how many tools/list pages Tools follows.
const DefaultMaxPages = 1000

// MaxToolsList caps the bytes of one whole listing, over all its pages
// (each page is already capped at MCP_HTTP_MAX_BODY): a server paging
// fresh cursors must not make tai hold a gigabyte of descriptions.
const MaxToolsList = MCP_HTTP_MAX_BODY

// ClientOptions tunes a Client. The zero value (or nil) means defaults.
type ClientOptions struct {
	// Version is clientInfo.version (default "dev").
	Version string
	// ConnectTimeout bounds spawn plus handshake (default
	// MCP_CONNECT_TIMEOUT). For a server a launcher fetches (npx, uvx,
	// docker run, …: see LaunchOf) it counts from the launcher's last
	// sign of work, up to InstallTimeout, and from the server's first
	// output on stdout for the handshake.
	ConnectTimeout time.Duration
	// InstallTimeout bounds the whole start of a server a launcher
	// fetches, however busy the launcher stays (default
	// MCP_INSTALL_TIMEOUT).
	InstallTimeout time.Duration
	// OnStartup, when set, is told every second of a launcher's start
	// that has run past two seconds (npx is installing …), then once more
	// with Done when it is over; a context's WithStartupNotice wins. It
	// runs on a goroutine of its own and must not block.
	OnStartup func(StartupNotice)
	// CallTimeout bounds one tools/call (default MCP_CALL_TIMEOUT).
	CallTimeout time.Duration
	// MaxPages caps the tools/list pages followed (default DefaultMaxPages).
	MaxPages int
	// OnNotification, when set, sees every notification the server sends
	// (progress, logging, list_changed); tools/call then asks for progress
	// with _meta.progressToken set to the request id. It runs on whichever goroutine is
	// reading the connection (a waiting call's or the client's own) and
	// must not block.
	OnNotification func(*Message)
	// OnToolsChanged, when set, is called for each
	// notifications/tools/list_changed the server sends (the bridge then
	// lists the tools again before the next call). Unlike OnNotification it
	// asks for nothing more of the server. It runs on the reading goroutine
	// and must not block.
	OnToolsChanged func()
	// Redact, when set, scrubs the text of every error the client returns
	// and of Stderr (the bridge passes the vault's Redact, so a secret in
	// an argv or a server's stderr never reaches a person or a model). The
	// errors still unwrap to their typed causes.
	Redact func(string) string
	// OnWarning, when set, is told once per session of what the server
	// did wrong without ending it: sending more than MaxServerRequests
	// requests at once (the excess is refused). It must not block.
	OnWarning func(string)
	// Stdio tunes a stdio leg; the entry's env and cwd are laid over it.
	Stdio *StdioOptions
	// HTTP tunes a Streamable HTTP leg.
	HTTP *HTTPOptions

	// startClock, set by tests, replaces the start watch's wall clock.
	startClock *startClock
}

// ServerInfo is the serverInfo a server answers initialize with.
type ServerInfo struct {
	// Name is the server's programmatic name.
	Name string `json:"name"`
	// Version is the server's version string.
	Version string `json:"version"`
	// Title is the server's display name, when it gives one.
	Title string `json:"title,omitempty"`
}

// Tool is one tool a server lists. Raw keeps the whole object as sent, so
// fields this type does not name (icons, _meta, execution) pass through.
type Tool struct {
	// Name is what tools/call takes.
	Name string `json:"name"`
	// Title is the display name, when given.
	Title string `json:"title,omitempty"`
	// Description is the server's (untrusted) description.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments, as sent.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the JSON Schema of structuredContent, when given.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the server's (untrusted) behaviour hints.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Raw is the whole tool object as sent.
	Raw json.RawMessage `json:"-"`
}

// CallResult is a tools/call result. Content items stay as the server sent
// them (text, image, audio, resources and annotations unchanged). IsError
// marks a tool that ran and failed, which is a result, not a Go error.
type CallResult struct {
	// Content holds each content item exactly as sent.
	Content []json.RawMessage `json:"content"`
	// StructuredContent is the structured result, when given.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError says the tool ran and failed.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta, when given.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// Raw is the whole result object as sent.
	Raw json.RawMessage `json:"-"`
}

// Text joins the text of the result's text content items with newlines.
func (r *CallResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		var item struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &item) == nil && item.Type == "text" {
			parts = append(parts, item.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TextOf returns the text of a text content item of a result (one
// element of CallResult.Content): {"type": "text", "text": …} with no
// other member, which is most of what servers send. ok is false for any
// other item (an image, a resource, a text item with annotations), which
// a caller keeps as its JSON. It does not re-validate item, which Client
// results already are.
func TextOf(item json.RawMessage) (text string, ok bool) {
	var typ, txt []byte
	n := 0
	if eachMember(item, trusted, func(key, val []byte) {
		n++
		switch string(key) {
		case "type":
			typ = val
		case "text":
			txt = val
		}
	}) != nil || n != 2 || string(typ) != `"text"` || txt == nil {
		return "", false
	}
	return jsonString(txt)
}

// Client is one MCP client session over a Transport. Its methods are safe
// for concurrent use; several calls may be in flight at once.
type Client struct {
	name string
	t    Transport
	opts ClientOptions

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[ID]pendingCall
	// spare is a reply channel a finished request left empty, for the next
	// one. A channel is put back only when its reply was received: each
	// pending entry is taken out once, by its one sender. Under mu.
	spare   chan reply
	err     error         // terminal failure, set once before done closes
	done    chan struct{} // closed when the session is over
	readEnd chan struct{} // closed when the idle reader returns

	// Reading: whoever holds the one token in readTok may call t.Recv and
	// dispatches what arrives. A caller waiting for its response takes it
	// (so a sequential call never hops goroutines); when no caller has
	// waited for idleReadDelay, the idle reader takes it, and a new caller
	// kicks it off (interrupting the read) to read for itself.
	readTok     chan struct{}
	waiters     atomic.Int32
	lastBusy    atomic.Int64 // time.Since(epoch) when a waiter last left
	idleReading bool         // under mu: the idle reader is in t.Recv
	epoch       time.Time

	// Every t.Recv runs under rctx, one long-lived context (so a transport
	// can keep one cancel hook on it across reads). Whatever must stop the
	// current read (a call's deadline, a caller's cancelled ctx, a caller
	// kicking the idle reader) cancels it and puts a fresh one in its
	// place: see interruptLocked. Under mu.
	rctx    context.Context
	rcancel context.CancelFunc

	// One timer per client enforces every call's deadline (see watchdog),
	// instead of a derived context and timer per call. Under mu.
	watch   *time.Timer
	watchAt int64 // the deadline watch is armed for; 0 when disarmed

	// The reader's ctx, when it can be cancelled, must end its read: the
	// hook (see hookLocked) stays on the last reader's ctx, so sequential
	// calls under one ctx register it once. Under mu.
	hookDone <-chan struct{}
	unhook   func() bool

	ctx    context.Context // lives until Close
	cancel context.CancelFunc

	started   bool
	reading   bool
	info      ServerInfo
	version   string
	caps      json.RawMessage
	instr     string
	closeOnce sync.Once
	closeErr  error

	// Server-to-client requests: serving holds one token per request being
	// answered; the excess waits in refusals for one goroutine to refuse
	// it, and is dropped when even that queue is full.
	serving    chan struct{}
	refusals   chan *Message
	refuseOnce sync.Once
	warnOnce   sync.Once
}

// MaxServerRequests bounds the server-to-client requests (ping and the
// like) a client answers at once. More are refused with a JSON-RPC error,
// so a server flooding them cannot grow tai's memory without bound.
const MaxServerRequests = 16

// NewClient returns an unstarted client for the server called name (used in
// errors) over t. Start runs the handshake.
func NewClient(name string, t Transport, opts *ClientOptions) *Client {
	c := &Client{name: name, t: t, pending: make(map[ID]pendingCall),
		done: make(chan struct{}), readEnd: make(chan struct{}),
		readTok: make(chan struct{}, 1), epoch: time.Now(),
		serving: make(chan struct{}, MaxServerRequests), refusals: make(chan *Message, MaxServerRequests)}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Version == "" {
		c.opts.Version = "dev"
	}
	if c.opts.ConnectTimeout <= 0 {
		c.opts.ConnectTimeout = MCP_CONNECT_TIMEOUT
	}
	if c.opts.CallTimeout <= 0 {
		c.opts.CallTimeout = MCP_CALL_TIMEOUT
	}
	if c.opts.InstallTimeout <= 0 {
		c.opts.InstallTimeout = MCP_INSTALL_TIMEOUT
	}
	if c.opts.MaxPages <= 0 {
		c.opts.MaxPages = DefaultMaxPages
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.rctx, c.rcancel = context.WithCancel(c.ctx)
	return c
}

// Connect opens a session on a canonical entry: it picks the transport,
// connects it and runs the handshake, all within ConnectTimeout.
func Connect(ctx context.Context, entry Entry, opts *ClientOptions) (*Client, error) {
	redact := func(err error) error { return Reworded(err, Visible(err.Error())) }
	if opts != nil && opts.Redact != nil {
		redact = func(err error) error { return Reworded(err, Visible(opts.Redact(err.Error()))) }
	}
	if err := entry.Validate(); err != nil {
		return nil, redact(err)
	}
	t, err := newTransport(entry, opts)
	if err != nil {
		return nil, redact(err)
	}
	c := NewClient(entry.Label(), t, opts)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// newTransport builds the leg an entry names.
func newTransport(entry Entry, opts *ClientOptions) (Transport, error) {
	switch entry.Transport {
	case TransportStdio:
		var so StdioOptions
		if opts != nil && opts.Stdio != nil {
			so = *opts.Stdio
		}
		if len(entry.Env) > 0 {
			env := make(map[string]string, len(so.Env)+len(entry.Env))
			for k, v := range so.Env {
				env[k] = v
			}
			for k, v := range entry.Env {
				env[k] = v
			}
			so.Env = env
		}
		if entry.Cwd != "" {
			so.Dir = entry.Cwd
		}
		return NewStdioTransport(entry.Command, entry.Args, &so), nil
	case TransportHTTP:
		var ho *HTTPOptions
		if opts != nil {
			ho = opts.HTTP
		}
		t, err := NewHTTPTransport(entry.URL, entry.Headers, ho)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", entry.Label(), err)
		}
		return t, nil
	}
	return nil, entry.Validate()
}

// Start connects the transport, then runs the handshake: initialize with
// MCP_PROTOCOL_VERSION, a check of the answered version and of
// capabilities.tools, then notifications/initialized. It all happens
// within ConnectTimeout; on failure the transport is closed.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("mcp: client already started")
	}
	c.started = true
	c.mu.Unlock()
	parent := ctx
	var cancel context.CancelFunc
	var held *heldClock
	w := c.newStartWatch(ctx)
	_, isHTTP := c.t.(*HTTPTransport)
	switch {
	case w == nil && isHTTP:
		// An OAuth login in the middle of the handshake stops the clock
		// while a person is in the browser (HoldStart).
		ctx, cancel = context.WithCancel(ctx)
		held = newHeldClock(c.opts.ConnectTimeout, cancel)
		defer held.stop()
		ctx = context.WithValue(ctx, heldClockKey{}, held)
	case w == nil:
		ctx, cancel = context.WithTimeout(ctx, c.opts.ConnectTimeout)
	default:
		ctx, cancel = context.WithCancel(ctx)
		go w.run(cancel)
	}
	defer cancel()
	err := c.start(ctx)
	var late *StartupError
	if w != nil {
		late = w.stop()
	}
	if err == nil {
		return nil
	}
	switch {
	case late != nil && parent.Err() == nil && !errors.Is(err, ErrTooLarge):
		err = late
	case (ctx.Err() == context.DeadlineExceeded || held != nil && held.expired()) && parent.Err() == nil && !errors.Is(err, ErrTooLarge):
		err = fmt.Errorf("mcp server %q: spawn and handshake did not finish within %s%s: %w",
			c.name, c.opts.ConnectTimeout, c.stderrNote(), context.DeadlineExceeded)
	}
	c.Close()
	return c.scrub(err)
}

// Reworded returns an error whose text is msg (err's own text redacted,
// say, or made visible) but that still unwraps to err, so
// errors.Is(err, context.Canceled) keeps working.
func Reworded(err error, msg string) error { return &rewordedError{msg: msg, err: err} }

type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }

// scrub applies ClientOptions.Redact to err's text and makes what a
// terminal would act on visible (see Visible): error text carries what the
// server sent.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if c.opts.Redact != nil {
		msg = c.opts.Redact(msg)
	}
	if msg = Visible(msg); msg == err.Error() {
		return err
	}
	return Reworded(err, msg)
}

func (c *Client) start(ctx context.Context) error {
	if err := c.t.Connect(ctx); err != nil {
		return fmt.Errorf("mcp server %q: %w", c.name, err)
	}
	c.mu.Lock()
	c.reading = true
	c.mu.Unlock()
	c.readTok <- struct{}{}
	go c.idleLoop()
	params := map[string]any{
		"protocolVersion": MCP_PROTOCOL_VERSION,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": ClientName, "version": c.opts.Version},
	}
	raw, err := c.request(ctx, MethodInitialize, params)
	if err != nil {
		return err
	}
	var res struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      ServerInfo                 `json:"serverInfo"`
		Instructions    string                     `json:"instructions"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("mcp server %q: malformed initialize result: %v", c.name, err)
	}
	if !SupportedProtocolVersion(res.ProtocolVersion) {
		return fmt.Errorf("mcp server %q: answered protocol version %q; tai speaks %s, 2025-06-18 and 2025-03-26 (upgrade the server)",
			c.name, res.ProtocolVersion, MCP_PROTOCOL_VERSION)
	}
	if tools, ok := res.Capabilities["tools"]; !ok || isNull(tools) {
		return fmt.Errorf("mcp server %q: %w", c.name, ErrNoTools)
	}
	if vs, ok := c.t.(ProtocolVersionSetter); ok {
		vs.SetProtocolVersion(res.ProtocolVersion)
	}
	caps, _ := json.Marshal(res.Capabilities)
	c.mu.Lock()
	c.info, c.version, c.caps, c.instr = res.ServerInfo, res.ProtocolVersion, caps, res.Instructions
	c.mu.Unlock()
	if err := c.notify(ctx, MethodInitialized, nil); err != nil {
		return fmt.Errorf("mcp server %q: %s: %w", c.name, MethodInitialized, err)
	}
	return nil
}

// idleReadDelay is how long the connection must go without a waiting
// caller before the idle reader takes over reading.
const idleReadDelay = time.Millisecond

// idleLoop reads while no caller does, so server requests (ping),
// notifications and a dying server are noticed between calls.
func (c *Client) idleLoop() {
	defer close(c.readEnd)
	timer := time.NewTimer(idleReadDelay)
	defer timer.Stop()
	for {
		// Polled rather than signalled, so a busy caller never pays for
		// waking this goroutine.
		if since := time.Since(c.epoch) - time.Duration(c.lastBusy.Load()); c.waiters.Load() > 0 || since < idleReadDelay {
			timer.Reset(max(idleReadDelay-since, idleReadDelay/4))
			select {
			case <-c.done:
				return
			case <-timer.C:
			}
			continue
		}
		select {
		case <-c.done:
			return
		case <-c.readTok:
		}
		c.mu.Lock()
		ctx := c.rctx
		c.idleReading = true
		c.mu.Unlock()
		if c.waiters.Load() > 0 {
			c.interrupt() // a caller arrived meanwhile: let it read
		}
		m, err := c.t.Recv(ctx)
		c.mu.Lock()
		c.idleReading = false
		c.mu.Unlock()
		kicked := ctx.Err() != nil && c.ctx.Err() == nil
		var bad *MalformedReplyError
		switch {
		case err == nil:
			c.dispatch(m)
		case errors.As(err, &bad):
			c.dispatchMalformed(bad)
		case kicked && errors.Is(err, context.Canceled):
		default:
			c.fail(err)
			c.readTok <- struct{}{}
			return
		}
		c.readTok <- struct{}{}
	}
}

// readOne receives one message while holding the read token and
// dispatches it. A Recv ended by ctx loses nothing; a malformed reply fails
// only its request; any other failure ends the session.
func (c *Client) readOne(ctx context.Context) {
	m, err := c.t.Recv(ctx)
	if bad := (*MalformedReplyError)(nil); errors.As(err, &bad) {
		c.dispatchMalformed(bad)
		return
	}
	if err != nil {
		if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
			c.fail(err)
		}
		return
	}
	c.dispatch(m)
}

// dispatch routes one received message: a response to its waiting
// request, a server request to answer, a notification to the hook.
func (c *Client) dispatch(m *Message) {
	switch {
	case m.IsResponse():
		c.mu.Lock()
		p, ok := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ok {
			p.ch <- reply{m: m}
		}
	case m.IsRequest():
		select {
		case c.serving <- struct{}{}:
			go func() {
				defer func() { <-c.serving }()
				c.answer(m)
			}()
		default:
			c.refuse(m)
		}
	default:
		if m.Method == MethodToolsListChanged && c.opts.OnToolsChanged != nil {
			c.opts.OnToolsChanged()
		}
		if c.opts.OnNotification != nil {
			c.opts.OnNotification(m)
		}
	}
}

// dispatchMalformed fails the request a malformed reply answers. A
// malformed reply to no pending request is counted as garbage where the
// transport counts it, and otherwise dropped.
func (c *Client) dispatchMalformed(bad *MalformedReplyError) {
	c.mu.Lock()
	p, ok := c.pending[bad.ID]
	delete(c.pending, bad.ID)
	c.mu.Unlock()
	if ok {
		p.ch <- reply{err: bad}
		return
	}
	if g, ok := c.t.(interface{ noteGarbage() }); ok {
		g.noteGarbage()
	}
}

// reply is what a pending request receives: its response, the decode
// error of a malformed one, or word that its deadline passed.
type reply struct {
	m        *Message
	err      error
	timedOut bool
}

// pendingCall is a request waiting for its response: where to deliver it,
// and its deadline (time.Since(epoch) in nanoseconds; 0 for none).
type pendingCall struct {
	ch       chan reply
	deadline int64
}

// answer replies to a server-to-client request: ping gets {}, anything else
// -32601.
func (c *Client) answer(req *Message) {
	resp := &Message{ID: req.ID}
	if req.Method == MethodPing {
		resp.Result = json.RawMessage(`{}`)
	} else {
		resp.Error = &WireError{Code: CodeMethodNotFound, Message: "method not supported by the tai client: " + req.Method}
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.ConnectTimeout)
	defer cancel()
	_ = c.t.Send(ctx, resp)
}

// refuse answers a server request beyond MaxServerRequests with an error,
// from one goroutine for all of them, and warns once. When the refusals
// queue up too (the server reads nothing), the request is dropped.
func (c *Client) refuse(req *Message) {
	c.warnOnce.Do(func() {
		if c.opts.OnWarning != nil {
			c.opts.OnWarning(fmt.Sprintf("mcp server %q sent more than %d requests at once; tai refuses the excess", c.name, MaxServerRequests))
		}
	})
	c.refuseOnce.Do(func() { go c.refuser() })
	select {
	case c.refusals <- req:
	default:
	}
}

// refuser sends the refusals until the session ends.
func (c *Client) refuser() {
	for {
		select {
		case req := <-c.refusals:
			resp := &Message{ID: req.ID, Error: &WireError{Code: CodeInternalError,
				Message: fmt.Sprintf("tai is already answering %d requests from this server; send fewer at once", MaxServerRequests)}}
			ctx, cancel := context.WithTimeout(c.ctx, c.opts.ConnectTimeout)
			_ = c.t.Send(ctx, resp)
			cancel()
		case <-c.ctx.Done():
			return
		}
	}
}

// fail ends the session with err and wakes every waiting request.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
}

// request sends one request and waits for its response. When ctx ends
// first, the server gets notifications/cancelled (except for initialize).
func (c *Client) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %s: params: %w", c.name, method, err)
	}
	return c.requestID(ctx, IntID(c.nextID.Add(1)), method, raw, 0)
}

// requestID is request with a caller-chosen id and an optional deadline of
// its own (time.Since(epoch) in nanoseconds; 0 for none, which leaves only
// ctx's). When that deadline passes first, the server gets
// notifications/cancelled and requestID returns context.DeadlineExceeded.
func (c *Client) requestID(ctx context.Context, id ID, method string, raw json.RawMessage, deadline int64) (json.RawMessage, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, c.wrap(method, err)
	}
	ch := c.spare
	if c.spare = nil; ch == nil {
		ch = make(chan reply, 1)
	}
	c.pending[id] = pendingCall{ch: ch, deadline: deadline}
	if deadline != 0 {
		c.armWatchLocked(deadline)
	}
	c.mu.Unlock()
	sctx := ctx
	if deadline != 0 {
		// The send honours the deadline too, but its context is made only
		// if the transport asks for it (a stdio line that fits the pipe
		// never does).
		lc := &lazyDeadline{parent: ctx, deadline: c.epoch.Add(time.Duration(deadline))}
		defer lc.release()
		sctx = lc
	}
	if err := c.t.Send(sctx, &Message{ID: id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return nil, c.wrap(method, err)
	}
	r, got, err := c.await(ctx, ch)
	if got {
		c.mu.Lock()
		c.spare = ch
		c.mu.Unlock()
	}
	switch m := r.m; {
	case r.timedOut:
		c.cancelRemote(id, "timed out")
		return nil, context.DeadlineExceeded
	case r.err != nil:
		return nil, c.wrap(method, r.err)
	case m != nil:
		if m.Error != nil {
			return nil, c.wrap(method, m.Error)
		}
		return m.Result, nil
	case ctx.Err() != nil:
		c.forget(id)
		if method != MethodInitialize {
			reason := "cancelled by the client"
			if ctx.Err() == context.DeadlineExceeded {
				reason = "timed out"
			}
			c.cancelRemote(id, reason)
		}
		return nil, ctx.Err()
	default:
		c.forget(id)
		return nil, c.wrap(method, err)
	}
}

// await waits for the reply on ch, reading the connection itself whenever
// the read token is free. It returns the reply and got true, or a zero
// reply and the session's failure, or a zero reply and ctx's error when
// ctx ended.
func (c *Client) await(ctx context.Context, ch chan reply) (reply, bool, error) {
	c.waiters.Add(1)
	defer func() {
		c.lastBusy.Store(int64(time.Since(c.epoch)))
		c.waiters.Add(-1)
	}()
	c.mu.Lock()
	if c.idleReading {
		c.idleReading = false
		c.interruptLocked()
	}
	c.mu.Unlock()
	for {
		select {
		case r := <-ch:
			return r, true, nil
		case <-c.done:
			select { // the answer may have arrived just before the end
			case r := <-ch:
				return r, true, nil
			default:
			}
			return reply{}, false, c.err
		case <-ctx.Done():
			return reply{}, false, ctx.Err()
		case <-c.readTok:
			// Another reader may have delivered our answer just before
			// handing the token over; reading now could wait forever.
			select {
			case r := <-ch:
				c.readTok <- struct{}{}
				return r, true, nil
			default:
			}
			c.mu.Lock()
			c.hookLocked(ctx)
			rctx := c.rctx
			c.mu.Unlock()
			if ctx.Err() == nil {
				c.readOne(rctx)
			}
			c.readTok <- struct{}{}
			select { // our own answer wins over reading again
			case r := <-ch:
				return r, true, nil
			default:
			}
		}
	}
}

// hookLocked makes sure cancelling ctx, the ctx of a caller about to read,
// interrupts the read; c.mu is held. A hook left on an earlier caller's
// ctx is removed; should it fire anyway, one read is interrupted for
// nothing and simply starts again.
func (c *Client) hookLocked(ctx context.Context) {
	done := ctx.Done()
	if done == nil || done == c.hookDone {
		return
	}
	if c.unhook != nil {
		c.unhook()
	}
	c.hookDone, c.unhook = done, context.AfterFunc(ctx, c.interrupt)
}

// interrupt ends the read in progress, if any (see rctx).
func (c *Client) interrupt() {
	c.mu.Lock()
	c.interruptLocked()
	c.mu.Unlock()
}

// interruptLocked cancels rctx and puts a fresh one in its place; c.mu is
// held.
func (c *Client) interruptLocked() {
	c.rcancel()
	c.rctx, c.rcancel = context.WithCancel(c.ctx)
}

// armWatchLocked makes sure the watchdog fires no later than deadline;
// c.mu is held. Calls share one CallTimeout, so a later call's deadline is
// never earlier than one already pending and the timer is rarely touched.
func (c *Client) armWatchLocked(deadline int64) {
	if c.watchAt != 0 && c.watchAt <= deadline {
		return
	}
	c.watchAt = deadline
	d := time.Duration(deadline) - time.Since(c.epoch)
	if c.watch == nil {
		c.watch = time.AfterFunc(d, c.watchdog)
		return
	}
	c.watch.Reset(d)
}

// watchdog fails every pending request whose deadline has passed, ends the
// read in progress so its caller notices, and re-arms itself for the
// earliest deadline left.
func (c *Client) watchdog() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchAt = 0
	if c.err != nil {
		return
	}
	now := int64(time.Since(c.epoch))
	var next int64
	expired := false
	for id, p := range c.pending {
		switch {
		case p.deadline == 0:
		case p.deadline <= now:
			delete(c.pending, id)
			p.ch <- reply{timedOut: true}
			expired = true
		case next == 0 || p.deadline < next:
			next = p.deadline
		}
	}
	if expired {
		c.interruptLocked()
	}
	if next != 0 {
		c.armWatchLocked(next)
	}
}

// lazyDeadline is ctx with an earlier deadline, made only when one of its
// methods is first called.
type lazyDeadline struct {
	parent   context.Context
	deadline time.Time
	once     sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
}

func (l *lazyDeadline) get() context.Context {
	l.once.Do(func() { l.ctx, l.cancel = context.WithDeadline(l.parent, l.deadline) })
	return l.ctx
}

// Deadline returns the earlier of the two deadlines.
func (l *lazyDeadline) Deadline() (time.Time, bool) { return l.get().Deadline() }

// Done is closed when the deadline passes or the parent ends.
func (l *lazyDeadline) Done() <-chan struct{} { return l.get().Done() }

// Err says why Done is closed.
func (l *lazyDeadline) Err() error { return l.get().Err() }

// Value returns the parent's value for key.
func (l *lazyDeadline) Value(key any) any { return l.parent.Value(key) }

// release frees the derived context, if one was made.
func (l *lazyDeadline) release() {
	l.once.Do(func() {})
	if l.cancel != nil {
		l.cancel()
	}
}

// cancelRemote tells the server to stop working on request id.
func (c *Client) cancelRemote(id ID, reason string) {
	params, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	_ = c.t.Send(ctx, &Message{Method: MethodCancelled, Params: params})
}

func (c *Client) forget(id ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Client) notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	return c.t.Send(ctx, &Message{Method: method, Params: raw})
}

// wrap names the server and method in err.
func (c *Client) wrap(method string, err error) error {
	return fmt.Errorf("mcp server %q: %s: %w", c.name, method, err)
}

func (c *Client) stderrNote() string {
	tail := lastLines(c.Stderr(), 10)
	if tail == "" {
		return ""
	}
	return "; last stderr lines:\n" + tail + "\n"
}

func marshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	return json.Marshal(params)
}

// Tools lists the server's tools, following nextCursor until the last page.
// A server that repeats a cursor, or pages past MaxPages, gets an error
// instead of an endless loop.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	tools, err := c.tools(ctx)
	return tools, c.scrub(err)
}

func (c *Client) tools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	seen := map[string]bool{}
	cursor := ""
	total := 0
	for page := 0; ; page++ {
		if page == c.opts.MaxPages {
			return nil, fmt.Errorf("mcp server %q: %s: more than %d pages; stopping (the server keeps sending nextCursor)", c.name, MethodToolsList, c.opts.MaxPages)
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := c.request(ctx, MethodToolsList, params)
		if err != nil {
			return nil, err
		}
		if total += len(raw); total > MaxToolsList {
			return nil, fmt.Errorf("mcp server %q: %s passed %d bytes over %d pages, the most tai reads (MaxToolsList); stopping", c.name, MethodToolsList, MaxToolsList, page+1)
		}
		list, next, err := decodeToolsPage(raw)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: malformed %s result: %v", c.name, MethodToolsList, err)
		}
		for _, r := range list {
			t, err := decodeTool(r)
			if err != nil {
				return nil, fmt.Errorf("mcp server %q: malformed tool in %s: %v", c.name, MethodToolsList, err)
			}
			if t.Name == "" {
				return nil, fmt.Errorf("mcp server %q: %s lists a tool with no name", c.name, MethodToolsList)
			}
			tools = append(tools, t)
		}
		if next == "" {
			return tools, nil
		}
		cursor = next
		if seen[cursor] {
			return nil, fmt.Errorf("mcp server %q: %s repeated cursor %q; stopping instead of looping forever", c.name, MethodToolsList, cursor)
		}
		seen[cursor] = true
	}
}

// decodeToolsPage splits one tools/list result into its tools (raw) and
// its nextCursor. It reads member by member rather than through
// encoding/json, which refuses a whole result nested deeper than 10,000
// levels: one tool's hostile schema must not cost the server its others.
func decodeToolsPage(raw []byte) (tools [][]byte, next string, err error) {
	var list, cursor []byte
	if err := eachMember(raw, validating, func(key, val []byte) {
		switch string(key) {
		case "tools":
			list = val
		case "nextCursor":
			cursor = val
		}
	}); err != nil {
		return nil, "", err
	}
	if !isNull(cursor) {
		s, ok := jsonString(cursor)
		if !ok {
			return nil, "", errors.New("nextCursor is not a string")
		}
		next = s
	}
	if isNull(list) {
		return nil, next, nil
	}
	if err := eachElement(list, trusted, func(val []byte) { tools = append(tools, val) }); err != nil {
		return nil, "", fmt.Errorf("tools: %v", err)
	}
	return tools, next, nil
}

// decodeTool reads one tool object of a tools/list result (already valid
// JSON): the string members by name, the schemas and annotations kept raw
// whatever their depth. Member names match exactly; a repeated member
// counts as its last occurrence, as encoding/json has it.
func decodeTool(raw []byte) (Tool, error) {
	t := Tool{Raw: bytes.Clone(raw)}
	var bad string
	err := eachMember(t.Raw, trusted, func(key, val []byte) {
		var dst *string
		switch string(key) {
		case "name":
			dst = &t.Name
		case "title":
			dst = &t.Title
		case "description":
			dst = &t.Description
		case "inputSchema":
			t.InputSchema = rawOrNil(val)
		case "outputSchema":
			t.OutputSchema = rawOrNil(val)
		case "annotations":
			t.Annotations = rawOrNil(val)
		}
		if dst == nil {
			return
		}
		if isNull(val) {
			*dst = ""
			return
		}
		s, ok := jsonString(val)
		if !ok && bad == "" {
			bad = string(key)
		}
		*dst = s
	})
	if err != nil {
		return Tool{}, err
	}
	if bad != "" {
		return Tool{}, fmt.Errorf("%s is not a string", bad)
	}
	return t, nil
}

// rawOrNil is val as a json.RawMessage, nil for null.
func rawOrNil(val []byte) json.RawMessage {
	if isNull(val) {
		return nil
	}
	return json.RawMessage(val)
}

// Call runs one tool within CallTimeout. args may be nil, a
// map[string]any, a json.RawMessage object or anything that marshals to a
// JSON object. A tool that ran and failed comes back as a result with
// IsError; a JSON-RPC error comes back as an error wrapping *WireError. On
// timeout the server gets notifications/cancelled and the call fails.
func (c *Client) Call(ctx context.Context, name string, args any) (*CallResult, error) {
	res, err := c.call(ctx, name, args)
	return res, c.scrub(err)
}

func (c *Client) call(ctx context.Context, name string, args any) (*CallResult, error) {
	var arguments []byte
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		arguments = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: tool %q: arguments do not encode as JSON: %v", c.name, name, err)
		}
		arguments = b
	}
	if t := bytes.TrimSpace(arguments); len(t) > 0 {
		if string(t) == "null" {
			arguments = nil
		} else if t[0] != '{' {
			return nil, fmt.Errorf("mcp server %q: tool %q: arguments must be a JSON object, got %.40s", c.name, name, t)
		}
	}
	params := make([]byte, 0, 32+len(name)+len(arguments))
	params = append(params, `{"name":`...)
	params = AppendJSONString(params, name)
	if len(arguments) > 0 {
		params = append(params, `,"arguments":`...)
		params = append(params, arguments...)
	}
	id := IntID(c.nextID.Add(1))
	if c.opts.OnNotification != nil {
		// Someone listens: ask for progress, keyed by the request id.
		params = append(params, `,"_meta":{"progressToken":`...)
		params = id.appendJSON(params)
		params = append(params, '}')
	}
	params = append(params, '}')
	deadline := int64(time.Since(c.epoch) + c.opts.CallTimeout)
	if d, ok := ctx.Deadline(); ok && int64(d.Sub(c.epoch)) < deadline {
		deadline = 0 // ctx ends first, as it would have with a derived context
	}
	raw, err := c.requestID(ctx, id, MethodToolsCall, params, deadline)
	if err != nil {
		if deadline != 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && int64(time.Since(c.epoch)) >= deadline {
			return nil, fmt.Errorf("mcp server %q: tool %q timed out after %s (sent %s): %w",
				c.name, name, c.opts.CallTimeout, MethodCancelled, context.DeadlineExceeded)
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("mcp server %q: tool %q: %w", c.name, name, err)
		}
		return nil, err
	}
	res, err := decodeCallResult(raw)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: tool %q: malformed result: %v", c.name, name, err)
	}
	return res, nil
}

// decodeCallResult splits a tools/call result into its parts without
// re-encoding anything: every content item is a subslice of raw, which
// Message.UnmarshalJSON has already validated.
func decodeCallResult(raw json.RawMessage) (*CallResult, error) {
	res := &CallResult{Raw: raw}
	var bad error
	err := eachMember(raw, trusted, func(key, val []byte) {
		switch string(key) {
		case "content":
			if isNull(val) {
				return
			}
			res.Content = res.Content[:0]
			if err := eachElement(val, trusted, func(item []byte) { res.Content = append(res.Content, item) }); err != nil {
				bad = fmt.Errorf("content: %v", err)
			}
		case "structuredContent":
			if !isNull(val) {
				res.StructuredContent = val
			}
		case "_meta":
			if !isNull(val) {
				res.Meta = val
			}
		case "isError":
			switch string(val) {
			case "true":
				res.IsError = true
			case "false", "null":
				res.IsError = false
			default:
				bad = fmt.Errorf("isError is %.20s, not a boolean", val)
			}
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.request(ctx, MethodPing, json.RawMessage(`{}`))
	return c.scrub(err)
}

// ServerInfo returns what the server said about itself in initialize.
func (c *Client) ServerInfo() ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// ProtocolVersion returns the protocol version the server answered.
func (c *Client) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Capabilities returns the server's capabilities object as sent.
func (c *Client) Capabilities() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}

// Instructions returns the server's optional instructions.
func (c *Client) Instructions() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.instr
}

// Name returns the server name the client uses in errors.
func (c *Client) Name() string { return c.name }

// Stderr returns the kept tail of a stdio server's stderr ("" for http),
// redacted and with control sequences made visible (see Visible).
func (c *Client) Stderr() string {
	s, ok := c.t.(StderrSource)
	if !ok {
		return ""
	}
	if c.opts.Redact != nil {
		return Visible(c.opts.Redact(s.Stderr()))
	}
	return Visible(s.Stderr())
}

// Transport returns the leg the client speaks over.
func (c *Client) Transport() Transport { return c.t }

// Close ends the session and releases the transport (a stdio server is shut
// down: stdin closed, then SIGTERM, then SIGKILL). Later calls fail with
// ErrClosed. Close may be called more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.fail(ErrClosed)
		c.cancel()
		c.mu.Lock()
		if c.watch != nil {
			c.watch.Stop()
		}
		if c.unhook != nil {
			c.unhook()
		}
		c.mu.Unlock()
		c.closeErr = c.t.Close()
		c.mu.Lock()
		reading := c.reading
		c.mu.Unlock()
		if reading {
			select {
			case <-c.readEnd:
			case <-time.After(c.opts.ConnectTimeout):
			}
		}
	})
	return c.closeErr
}
