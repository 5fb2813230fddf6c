package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"tai/mcp/screen"
)

// ClientName is the clientInfo.name the client sends in initialize.
const ClientName = "tai"

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
	// CallTimeout bounds one tools/call (default MCP_CALL_TIMEOUT); each
	// notifications/progress the server sends for the call starts it
	// again, up to CallMaxTotal.
	CallTimeout time.Duration
	// CallMaxTotal bounds one tools/call however much progress the server
	// reports (default MCP_CALL_MAX_TOTAL; never less than CallTimeout).
	CallMaxTotal time.Duration
	// MaxPages caps the tools/list pages followed (default DefaultMaxPages).
	MaxPages int
	// OnNotification, when set, sees every notification the server sends
	// (logging, list_changed, and the progress of a call in flight: see
	// Notifications). It runs on whichever goroutine is reading the
	// connection (a waiting call's or the client's own) and must not
	// block.
	OnNotification func(*Message)
	// OnToolsChanged, when set, is called for each
	// notifications/tools/list_changed the server sends (the bridge then
	// lists the tools again before the next call). Unlike OnNotification it
	// asks for nothing more of the server. It runs on the reading goroutine
	// and must not block.
	OnToolsChanged func()
	// Requests is the method table for requests a server sends, by
	// method: each handler answers its method (see RequestHandler for the
	// context it gets). ping is always answered with {}; a method not
	// here gets -32601. The capabilities tai declares in initialize
	// follow from which methods are here (see ClientCapabilities).
	Requests map[string]RequestHandler
	// Notifications is the method table for notifications a server
	// sends, by method (see NotificationHandler). OnToolsChanged runs
	// before the handler of its method, OnNotification after any.
	//
	// Every tools/call asks for progress, with _meta.progressToken set to
	// its request id. A notifications/progress reaches the handlers only
	// when its token names a call in flight and its progress is greater
	// than the last that call reported; any other is dropped, unseen.
	Notifications map[string]NotificationHandler
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

// Client is one MCP client session over a Transport: the protocol (the
// handshake, tools, the capabilities tai declares) over a conn (the
// JSON-RPC connection). Its methods are safe for concurrent use; several
// calls may be in flight at once.
type Client struct {
	conn
	opts ClientOptions

	started   bool
	info      ServerInfo
	version   string
	caps      json.RawMessage
	instr     string
	closeOnce sync.Once
	closeErr  error
}

// NewClient returns an unstarted client for the server called name (used in
// errors) over t. Start runs the handshake.
func NewClient(name string, t Transport, opts *ClientOptions) *Client {
	c := &Client{}
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
	if c.opts.CallMaxTotal <= 0 {
		c.opts.CallMaxTotal = MCP_CALL_MAX_TOTAL
	}
	c.opts.CallMaxTotal = max(c.opts.CallMaxTotal, c.opts.CallTimeout)
	if c.opts.InstallTimeout <= 0 {
		c.opts.InstallTimeout = MCP_INSTALL_TIMEOUT
	}
	if c.opts.MaxPages <= 0 {
		c.opts.MaxPages = DefaultMaxPages
	}
	c.conn.init(name, t, &c.opts)
	return c
}

// ClientCapabilities is the capabilities object tai declares in
// initialize: one member per client feature the method table answers
// (ClientOptions.Requests). With no such handler it is {}.
type ClientCapabilities struct {
	// Elicitation is set when elicitation/create has a handler: tai
	// answers both modes, form and url.
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	// Roots is set when roots/list has a handler.
	Roots *RootsCapability `json:"roots,omitempty"`
	// Sampling is set when sampling/createMessage has a handler.
	Sampling *SamplingCapability `json:"sampling,omitempty"`
}

// SamplingCapability is the sampling member of ClientCapabilities: the
// handler takes requests that offer the model tools (2025-11-25), so
// tools is declared with it.
type SamplingCapability struct {
	// Tools says sampling requests may carry tools and toolChoice.
	Tools *struct{} `json:"tools,omitempty"`
}

// ElicitationCapability is the elicitation member of ClientCapabilities:
// the modes tai answers (an empty object would mean form only).
type ElicitationCapability struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

// RootsCapability is the roots member of ClientCapabilities.
type RootsCapability struct {
	// ListChanged says tai sends notifications/roots/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// CapabilitiesFor returns the capabilities a client whose method table
// holds requests declares.
func CapabilitiesFor(requests map[string]RequestHandler) ClientCapabilities {
	var caps ClientCapabilities
	if requests[MethodElicitationCreate] != nil {
		caps.Elicitation = &ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	}
	if requests[MethodRootsList] != nil {
		caps.Roots = &RootsCapability{ListChanged: true}
	}
	if requests[MethodSamplingCreateMessage] != nil {
		caps.Sampling = &SamplingCapability{Tools: &struct{}{}}
	}
	return caps
}

// initParams is what initialize sends; its members are in the
// order encoding/json gave the map it replaces, so the bytes stay put.
type initParams struct {
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      clientInfo         `json:"clientInfo"`
	ProtocolVersion string             `json:"protocolVersion"`
}

// clientInfo is initialize's clientInfo.
type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// initializeParams returns the params of the client's initialize.
func (c *Client) initializeParams() initParams {
	return initParams{
		Capabilities:    CapabilitiesFor(c.opts.Requests),
		ClientInfo:      clientInfo{Name: ClientName, Version: c.opts.Version},
		ProtocolVersion: MCP_PROTOCOL_VERSION,
	}
}

// Connect opens a session on a canonical entry: it picks the transport,
// connects it and runs the handshake, all within ConnectTimeout.
func Connect(ctx context.Context, entry Entry, opts *ClientOptions) (*Client, error) {
	redact := func(err error) error { return Reworded(err, screen.Visible(err.Error())) }
	if opts != nil && opts.Redact != nil {
		redact = func(err error) error { return Reworded(err, screen.Visible(opts.Redact(err.Error()))) }
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
	if msg = screen.Visible(msg); msg == err.Error() {
		return err
	}
	return Reworded(err, msg)
}

func (c *Client) start(ctx context.Context) error {
	if err := c.t.Connect(ctx); err != nil {
		return fmt.Errorf("mcp server %q: %w", c.name, err)
	}
	c.run()
	raw, err := c.request(ctx, MethodInitialize, c.initializeParams())
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

func (c *Client) stderrNote() string {
	tail := lastLines(c.Stderr(), 10)
	if tail == "" {
		return ""
	}
	return "; last stderr lines:\n" + tail + "\n"
}

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
		return screen.Visible(c.opts.Redact(s.Stderr()))
	}
	return screen.Visible(s.Stderr())
}

// Transport returns the leg the client speaks over.
func (c *Client) Transport() Transport { return c.t }

// Close ends the session and releases the transport (a stdio server is shut
// down: stdin closed, then SIGTERM, then SIGKILL). Later calls fail with
// ErrClosed. Close may be called more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close(c.opts.ConnectTimeout) })
	return c.closeErr
}
