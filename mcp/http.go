package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"tai/mcp/httppolicy"
	"tai/mcp/sse"
	"tai/vault/secret"
)

// Defaults of HTTPOptions.
const (
	// DefaultHTTPRetry is how long the transport waits before resuming a
	// broken event stream whose server sent no retry field.
	DefaultHTTPRetry = time.Second
	// DefaultHTTPMaxResumes is how many times in a row one request's event
	// stream is resumed without a message arriving before the request fails.
	DefaultHTTPMaxResumes = 5
	// DefaultHTTPCloseTimeout bounds the DELETE that ends the session on
	// Close.
	DefaultHTTPCloseTimeout = 2 * time.Second
)

// Streamable HTTP header names.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
)

// HTTPOptions tunes an HTTPTransport. The zero value (or nil) means
// defaults.
type HTTPOptions struct {
	// Client sends the requests. Nil means a client of the transport's own
	// (no overall timeout: streams may be long; contexts bound every wait).
	// Either way redirects follow httppolicy.SameOriginRedirects.
	Client *http.Client
	// MaxBody caps one message sent or received (default MCP_HTTP_MAX_BODY).
	MaxBody int64
	// DefaultRetry is the wait before resuming a broken stream that named
	// no retry delay (default DefaultHTTPRetry).
	DefaultRetry time.Duration
	// MaxResumes bounds consecutive fruitless resumptions of one request's
	// stream (default DefaultHTTPMaxResumes).
	MaxResumes int
	// CloseTimeout bounds the DELETE sent on Close (default
	// DefaultHTTPCloseTimeout).
	CloseTimeout time.Duration
	// Authorizer supplies the Authorization header and answers 401 and
	// 403 challenges, unless the entry's headers set Authorization
	// themselves (nil: none).
	Authorizer Authorizer
}

// HTTPTransport speaks MCP Streamable HTTP (2025-11-25) to one endpoint.
//
// Every message is its own POST with Accept: application/json,
// text/event-stream, Content-Type: application/json, the stored headers,
// and, once known, Mcp-Session-Id (from the initialize answer) and
// MCP-Protocol-Version (set by the client through SetProtocolVersion). A
// request's reply is one JSON message or an event stream; every message on
// it (responses, server requests such as ping, notifications) is queued for
// Recv. Notifications and responses expect 202 (200, with or without a
// body, is tolerated; the body is discarded).
//
// How failures reach the client: Send for a request returns once the
// reply has begun (a JSON reply read whole, or the first message of an
// event stream), or when ctx ends first, the request then being in flight.
// A refused POST makes Send return *MCPHTTPError (status,
// WWW-Authenticate, and the body's JSON-RPC error when present), so 401
// can be told from anything else; a network failure, an over-size message
// or a stream that fails before its first message makes Send return an
// error too (ErrTooLarge wrapped for size). A failure after that (a stream
// that broke and could not be resumed, a malformed or over-size event)
// arrives through Recv as an error response to that request id (code
// CodeInternalError, the message naming what happened), so the waiting
// call fails while the session lives on.
//
// A POST stream that ends before its response is resumed: after the
// stream's retry delay, a GET with Last-Event-ID and the session id.
//
// Once notifications/initialized is sent, the transport opens the
// standalone stream: one GET with Accept: text/event-stream and the
// session id, so the server can send requests and notifications outside a
// POST (Send of notifications/initialized waits up to listenWait for its
// answer). What it carries is queued for Recv, related to no request. 405
// (the server offers none), any other refusal, a 2xx that is not an event
// stream, a malformed or over-size event end it for good; a stream that
// ends or breaks is reopened (with Last-Event-ID when it sent event ids)
// after its retry delay, else a doubling backoff, at most MaxResumes times
// in a row without a message. Every GET carries the Authorization a POST
// does, and a 401 or 403 to it goes to the Authorizer once.
//
// A 404 to a message carrying a session id
// re-initializes once (the remembered initialize and
// notifications/initialized are replayed without the old id) and the
// message is resent. Close cancels every in-flight exchange and sends
// DELETE with the session id.
//
// Send may be called from several goroutines at once; Recv from one.
// Close may be called more than once, concurrently with both.
type HTTPTransport struct {
	url      string
	shownURL string // url without credentials or query, for errors
	opts     HTTPOptions
	client   *http.Client
	own      *http.Transport // our own round tripper, closed on Close

	ctx    context.Context // ends on Close; parents every exchange
	cancel context.CancelFunc
	done   chan struct{} // closed on Close
	in     chan inbound
	wg     sync.WaitGroup // request goroutines

	reinitMu sync.Mutex // one re-initialization at a time

	mu         sync.Mutex
	headers    http.Header // replaced whole by SetHeader, never modified
	secrets    []string    // credentials scrubbed from server text in errors
	closed     bool
	session    string
	version    string
	initBody   []byte
	initID     ID
	initNote   []byte
	inflight   map[ID]context.CancelFunc
	stopListen context.CancelFunc // ends the standalone GET stream
	listenEnd  chan struct{}      // closed when its goroutine returns
	closeOnce  sync.Once
}

// NewHTTPTransport returns a transport for the Streamable HTTP endpoint
// rawURL, sending headers with every request. It refuses a URL that is not
// http(s) with a host, and header names or values that cannot go on the
// wire (the error names the header, never its value).
// errHTTPTooLarge is ErrTooLarge on the HTTP leg, naming the cap the way
// its configuration does.
var errHTTPTooLarge = fmt.Errorf("%w (MCP_HTTP_MAX_BODY)", ErrTooLarge)

func NewHTTPTransport(rawURL string, headers map[string]string, opts *HTTPOptions) (*HTTPTransport, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp: server URL %q is not an http:// or https:// URL with a host; give the server's full endpoint, e.g. http://127.0.0.1:8765/mcp", httppolicy.RedactURL(rawURL))
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		if !validHeaderName(k) {
			return nil, fmt.Errorf("mcp: header name %q is not a valid HTTP header name; fix the server's headers", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("mcp: header %q holds a line break or NUL; fix its value", k)
		}
		h.Set(k, v)
	}
	t := &HTTPTransport{url: rawURL, shownURL: httppolicy.RedactURL(rawURL), headers: h, secrets: credentials(u, h),
		in: make(chan inbound, 64), done: make(chan struct{}), inflight: make(map[ID]context.CancelFunc)}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.MaxBody <= 0 {
		t.opts.MaxBody = MCP_HTTP_MAX_BODY
	}
	if t.opts.DefaultRetry <= 0 {
		t.opts.DefaultRetry = DefaultHTTPRetry
	}
	if t.opts.MaxResumes <= 0 {
		t.opts.MaxResumes = DefaultHTTPMaxResumes
	}
	if t.opts.CloseTimeout <= 0 {
		t.opts.CloseTimeout = DefaultHTTPCloseTimeout
	}
	t.client = t.opts.Client
	if t.client == nil {
		t.own = http.DefaultTransport.(*http.Transport).Clone()
		t.own.MaxIdleConnsPerHost = 16
		t.client = &http.Client{Transport: t.own}
	}
	// The entry's headers (and the key in them) go to its origin only.
	t.client = httppolicy.FollowSameOrigin(t.client)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// Connect checks the transport is still open; Streamable HTTP opens no
// connection before the first message.
func (t *HTTPTransport) Connect(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	return nil
}

// SetProtocolVersion sets the MCP-Protocol-Version header sent on every
// later request; the client calls it with the version initialize agreed.
func (t *HTTPTransport) SetProtocolVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// SetHeader sets (or, with an empty value, removes) a header sent with
// every later request, such as a refreshed Authorization. It refuses what
// NewHTTPTransport refuses, naming the header, never its value.
func (t *HTTPTransport) SetHeader(name, value string) error {
	if !validHeaderName(name) {
		return fmt.Errorf("mcp: header name %q is not a valid HTTP header name", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("mcp: header %q holds a line break or NUL; fix its value", name)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.headers.Clone() // requests being built keep the old map
	if value == "" {
		h.Del(name)
	} else {
		h.Set(name, value)
	}
	t.headers = h
	u, _ := url.Parse(t.url)
	t.secrets = credentials(u, h)
	return nil
}

// SessionID returns the session id the server assigned ("" for none).
func (t *HTTPTransport) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

// Send POSTs one message. See HTTPTransport for when it returns and how
// failures are reported.
func (t *HTTPTransport) Send(ctx context.Context, msg *Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	body, err := msg.AppendJSON(nil)
	if err != nil {
		return err
	}
	if int64(len(body)) > t.opts.MaxBody {
		return fmt.Errorf("%w: %q is %d bytes, the limit is %d; not sending it", errHTTPTooLarge, msg.describe(), len(body), t.opts.MaxBody)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	switch msg.Method {
	case MethodInitialize:
		t.initBody, t.initID = body, msg.ID
	case MethodInitialized:
		t.initNote = body
	}
	t.mu.Unlock()
	if msg.IsRequest() {
		return t.sendRequest(ctx, msg.ID, msg.Method, body)
	}
	err = t.sendOneWay(ctx, body)
	switch {
	case msg.Method == MethodCancelled:
		t.abandon(msg.Params)
	case msg.Method == MethodInitialized && err == nil:
		t.startListening(ctx)
	}
	return err
}

// Recv returns the next message any reply or stream carried, or the
// *MalformedReplyError of a request whose reply or stream held a message
// that is not valid JSON-RPC.
func (t *HTTPTransport) Recv(ctx context.Context) (*Message, error) {
	select {
	case in := <-t.in:
		if in.err != nil {
			return nil, in.err
		}
		return in.m, nil
	case <-t.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close cancels every in-flight exchange, then ends the session with a
// DELETE (bounded by CloseTimeout; 405 and other refusals are fine).
func (t *HTTPTransport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		sid := t.session
		t.mu.Unlock()
		t.cancel()
		close(t.done)
		t.wg.Wait()
		if sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), t.opts.CloseTimeout)
			if req, err := t.newRequest(ctx, http.MethodDelete, nil, sid, true); err == nil {
				if resp, err := t.client.Do(req); err == nil {
					drain(resp, 4096)
				}
			}
			cancel()
		}
		if t.own != nil {
			t.own.CloseIdleConnections()
		}
	})
	return nil
}

// sendStatus hands the outcome of a request's POST from its goroutine to
// Send, unless Send stopped waiting (its ctx ended), in which case the
// goroutine reports a failure through Recv instead.
type sendStatus struct {
	mu        sync.Mutex
	ch        chan error
	reported  bool
	abandoned bool
}

// report passes err to Send once; it returns false when Send is no longer
// listening (or already heard an outcome).
func (s *sendStatus) report(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reported || s.abandoned {
		return false
	}
	s.reported = true
	s.ch <- err
	return true
}

// sendRequest starts the POST of a request on its own goroutine and waits
// for the server's status, ctx, or Close.
func (t *HTTPTransport) sendRequest(ctx context.Context, id ID, method string, body []byte) error {
	// The exchange outlives ctx (see HTTPTransport) but keeps its values
	// (an Authorizer learns from them who is at this call), and ends on Close.
	rctx, rcancel := context.WithCancel(context.WithoutCancel(ctx))
	stopOnClose := context.AfterFunc(t.ctx, rcancel)
	st := &sendStatus{ch: make(chan error, 1)}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		stopOnClose()
		rcancel()
		return ErrClosed
	}
	t.inflight[id] = rcancel
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		defer t.forget(id)
		defer stopOnClose()
		defer rcancel()
		t.runRequest(rctx, id, method, body, st)
	}()
	select {
	case err := <-st.ch:
		return err
	case <-t.done:
		return ErrClosed
	case <-ctx.Done():
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.reported {
			return <-st.ch
		}
		st.abandoned = true
		return nil
	}
}

func (t *HTTPTransport) forget(id ID) {
	t.mu.Lock()
	delete(t.inflight, id)
	t.mu.Unlock()
}

// abandon stops reading the reply of a request the client cancelled (the
// params of the notifications/cancelled it sent name it).
func (t *HTTPTransport) abandon(params json.RawMessage) {
	id, ok := cancelledID(params)
	if !ok {
		return
	}
	t.mu.Lock()
	cancel := t.inflight[id]
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// runRequest performs one request's exchange: POST, then its JSON reply or
// event stream (resumed as needed), queueing what arrives.
func (t *HTTPTransport) runRequest(ctx context.Context, id ID, method string, body []byte, st *sendStatus) {
	fail := func(err error) {
		if ctx.Err() != nil {
			return // closed, or abandoned by the client: nobody waits
		}
		if !st.report(err) {
			t.deliverError(id, err)
		}
	}
	isInit := method == MethodInitialize
	resp, err := t.post(ctx, body, isInit)
	if err != nil {
		fail(err)
		return
	}
	defer resp.Body.Close()
	if isInit {
		sid := resp.Header.Get(headerSessionID)
		if !validSessionID(sid) {
			fail(fmt.Errorf("the server's initialize answer carries an Mcp-Session-Id that is not visible ASCII (%d bytes); the server is broken", len(sid)))
			return
		}
		if sid != "" {
			t.mu.Lock()
			t.session = sid
			t.mu.Unlock()
		}
	}
	switch ct := httppolicy.MediaType(resp.Header.Get("Content-Type")); {
	case ct == "text/event-stream":
		// Send returns at the first message, or with the error of a stream
		// that yields none: a stream that opens and then fails is reported
		// as Send's own error.
		first := true
		got := func(m *Message) {
			if first {
				first = false
				st.report(nil)
			}
			if !m.IsResponse() {
				related := id // what a request's stream carries belongs to it
				m.related = &related
			}
			t.deliver(m)
		}
		err := t.readStream(ctx, resp.Body, id, got)
		if bad := (*MalformedReplyError)(nil); errors.As(err, &bad) {
			fail(bad) // it names the request already
			return
		}
		if err != nil {
			fail(fmt.Errorf("request %s (%s): %w", id, method, err))
			return
		}
	case ct == "application/json":
		msg, err := t.readJSON(resp, id)
		if bad := (*MalformedReplyError)(nil); errors.As(err, &bad) {
			fail(bad)
			return
		}
		if err != nil {
			fail(fmt.Errorf("reply to request %s (%s): %w", id, method, err))
			return
		}
		if msg.IsResponse() && !msg.ID.Set {
			msg.ID = id // an error answered with "id": null belongs to this request
		}
		st.report(nil)
		t.deliver(msg)
		if !msg.IsResponse() || msg.ID != id {
			fail(fmt.Errorf("the server's JSON reply to request %s (%s) was not its response", id, method))
		}
	case resp.StatusCode == http.StatusAccepted || resp.ContentLength == 0:
		fail(fmt.Errorf("the server accepted request %s (%s) with HTTP %d but sent no response", id, method, resp.StatusCode))
	default:
		fail(fmt.Errorf("the server answered request %s (%s) with Content-Type %q; expected application/json or text/event-stream", id, method, resp.Header.Get("Content-Type")))
	}
}

// sendOneWay POSTs a notification or response and expects 202 (or any
// other 2xx, whose body is dropped).
func (t *HTTPTransport) sendOneWay(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()
	resp, err := t.post(ctx, body, false)
	if err != nil {
		if t.ctx.Err() != nil {
			return ErrClosed
		}
		return err
	}
	drainStream(resp.Body) // a body (tolerated) is read briefly, then dropped
	return nil
}

// post sends body and returns a 2xx response. A 404 to a POST that carried
// a session id re-initializes once and resends; any other non-2xx status
// becomes *MCPHTTPError.
func (t *HTTPTransport) post(ctx context.Context, body []byte, isInit bool) (*http.Response, error) {
	authTries, authTries401 := 0, 0
	for attempt := 0; ; attempt++ {
		t.mu.Lock()
		sid := t.session
		t.mu.Unlock()
		if isInit {
			sid = ""
		}
		req, err := t.newRequest(ctx, http.MethodPost, body, sid, !isInit)
		if err != nil {
			return nil, err
		}
		resp, err := t.client.Do(req)
		if err != nil {
			return nil, t.netError(http.MethodPost, err)
		}
		if (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && t.authorizing() {
			sent := req.Header.Get("Authorization")
			he := t.httpError(resp).(*MCPHTTPError)
			if (resp.StatusCode == http.StatusUnauthorized && authTries401 > 0) || authTries >= maxAuthRetries {
				return nil, he
			}
			retry, aerr := t.opts.Authorizer.Challenge(ctx, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), sent)
			if aerr != nil {
				return nil, &AuthError{HTTP: he, Err: aerr}
			}
			if !retry {
				return nil, he
			}
			authTries++
			if resp.StatusCode == http.StatusUnauthorized {
				authTries401++
			}
			attempt--
			continue
		}
		if resp.StatusCode == http.StatusNotFound && sid != "" && attempt == 0 {
			drain(resp, 64<<10)
			if err := t.reinit(ctx, sid); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, t.httpError(resp)
		}
		return resp, nil
	}
}

// reinit replays the remembered initialize and notifications/initialized
// without the stale session id, adopting the new session. When another
// goroutine already replaced the stale session, it does nothing.
func (t *HTTPTransport) reinit(ctx context.Context, stale string) error {
	t.reinitMu.Lock()
	defer t.reinitMu.Unlock()
	t.mu.Lock()
	cur, initBody, initID, note := t.session, t.initBody, t.initID, t.initNote
	t.mu.Unlock()
	if cur != stale {
		return nil
	}
	if initBody == nil {
		return fmt.Errorf("mcp: %s answered HTTP 404 for session %q and there is no initialize to replay; reconnect", t.shownURL, stale)
	}
	wrap := func(err error) error {
		return fmt.Errorf("mcp: re-initializing after %s dropped the session (HTTP 404): %w", t.shownURL, err)
	}
	req, err := t.newRequest(ctx, http.MethodPost, initBody, "", false)
	if err != nil {
		return wrap(err)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return wrap(t.netError(http.MethodPost, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return wrap(t.httpError(resp))
	}
	sid := resp.Header.Get(headerSessionID)
	if !validSessionID(sid) {
		return wrap(errors.New("the new Mcp-Session-Id is not visible ASCII"))
	}
	var answer *Message
	switch httppolicy.MediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		answer, err = t.readJSON(resp, initID)
	case "text/event-stream":
		err = t.readStream(ctx, resp.Body, initID, func(m *Message) {
			if m.IsResponse() && m.ID == initID {
				answer = m
			}
		})
	default:
		err = fmt.Errorf("unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
	if err == nil && (answer == nil || !answer.IsResponse() || answer.ID != initID) {
		err = errors.New("no initialize response")
	}
	if err == nil && answer.Error != nil {
		err = answer.Error
	}
	if err != nil {
		return wrap(err)
	}
	t.mu.Lock()
	t.session = sid
	t.mu.Unlock()
	if note != nil {
		req, err := t.newRequest(ctx, http.MethodPost, note, sid, true)
		if err != nil {
			return wrap(err)
		}
		resp, err := t.client.Do(req)
		if err != nil {
			return wrap(t.netError(http.MethodPost, err))
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return wrap(t.httpError(resp))
		}
		drainStream(resp.Body)
		t.startListening(ctx)
	}
	return nil
}

// errStreamFatal marks stream failures that resuming cannot fix.
type errStreamFatal struct{ err error }

func (e errStreamFatal) Error() string { return e.err.Error() }
func (e errStreamFatal) Unwrap() error { return e.err }

// readStream reads an event stream for request id, passing every message
// to got, until the response to id arrives. When the stream ends first and
// an event id was seen, it waits the stream's retry delay and resumes with
// GET + Last-Event-ID, up to MaxResumes times in a row without a message.
// The caller closes body.
func (t *HTTPTransport) readStream(ctx context.Context, body io.Reader, id ID, got func(*Message)) error {
	p := sse.NewParser(body, t.opts.MaxBody, errHTTPTooLarge)
	src := body // the body p reads, drained when the response arrives
	fruitless := 0
	var closer io.Closer // a resumed stream's body, ours to close
	defer func() {
		if closer != nil {
			closer.Close()
		}
	}()
	for {
		done, n, err := t.consume(p, id, got)
		if done {
			if !p.Ended() {
				drainStream(src)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fatal errStreamFatal
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if !p.SawID {
			if err == nil || errors.Is(err, io.EOF) {
				return errors.New("the server's event stream ended before the response, with no event id to resume from")
			}
			return fmt.Errorf("the server's event stream broke before the response, with no event id to resume from: %w", err)
		}
		if n > 0 {
			fruitless = 0
		}
		fruitless++
		if fruitless > t.opts.MaxResumes {
			return fmt.Errorf("the server's event stream ended before the response %d times in a row; giving up", fruitless)
		}
		wait := t.opts.DefaultRetry
		if p.RetrySet {
			wait = p.Retry
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		if closer != nil {
			closer.Close()
			closer = nil
		}
		resp, err := t.resume(ctx, p.LastID)
		if err != nil {
			var he *MCPHTTPError
			if errors.As(err, &he) || errors.As(err, &fatal) || ctx.Err() != nil {
				return fmt.Errorf("cannot resume the event stream with GET and Last-Event-ID: %w", err)
			}
			// A network failure: count it and try again after the delay.
			src = emptyReader{}
			p = p.Resumed(src)
			continue
		}
		closer, src = resp.Body, resp.Body
		p = p.Resumed(src)
	}
}

// emptyReader is a body at its end, used to retry after a failed GET.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, io.EOF }

// consume reads events until the response to id (done), the end of the
// stream or an error. n counts the messages read.
func (t *HTTPTransport) consume(p *sse.Parser, id ID, got func(*Message)) (done bool, n int, err error) {
	for {
		ev, err := p.Next()
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return false, n, errStreamFatal{err}
			}
			return false, n, err
		}
		if ev.Type != "message" {
			continue
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		msg, err := DecodeMessage(data)
		if err != nil {
			return false, n, errStreamFatal{&MalformedReplyError{ID: id, Err: fmt.Errorf("the server sent a malformed message on its event stream: %s", decodeReason(err))}}
		}
		n++
		got(msg)
		if msg.IsResponse() && msg.ID == id {
			return true, n, nil
		}
	}
}

// resume opens GET with Last-Event-ID to continue a broken stream.
func (t *HTTPTransport) resume(ctx context.Context, lastID string) (*http.Response, error) {
	return t.get(ctx, lastID)
}

// get opens GET with Accept: text/event-stream, the session id and, when
// lastID is set, Last-Event-ID. A 401 or 403 goes to the Authorizer as for
// a POST, once; any other non-2xx status becomes *MCPHTTPError, a 2xx that
// is not an event stream errStreamFatal.
func (t *HTTPTransport) get(ctx context.Context, lastID string) (*http.Response, error) {
	for tries := 0; ; tries++ {
		t.mu.Lock()
		sid := t.session
		t.mu.Unlock()
		req, err := t.newRequest(ctx, http.MethodGet, nil, sid, true)
		if err != nil {
			return nil, err
		}
		if lastID != "" {
			req.Header.Set(headerLastEventID, lastID)
		}
		resp, err := t.client.Do(req)
		if err != nil {
			return nil, t.netError(http.MethodGet, err)
		}
		if (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && t.authorizing() && tries == 0 {
			sent := req.Header.Get("Authorization")
			he := t.httpError(resp).(*MCPHTTPError)
			retry, aerr := t.opts.Authorizer.Challenge(ctx, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), sent)
			if aerr != nil {
				return nil, &AuthError{HTTP: he, Err: aerr}
			}
			if !retry {
				return nil, he
			}
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, t.httpError(resp)
		}
		if ct := httppolicy.MediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
			drain(resp, 64<<10)
			return nil, errStreamFatal{fmt.Errorf("the GET stream has Content-Type %q, not text/event-stream", ct)}
		}
		return resp, nil
	}
}

// listenWait bounds how long sending notifications/initialized waits for
// the standalone stream's GET to be answered, so that what the server
// sends on it right after (a request during the first call) is not lost.
const listenWait = time.Second

// startListening opens the standalone GET stream of the current session
// (ending the one of an earlier session), once notifications/initialized
// was sent, and waits (at most listenWait or until ctx ends) for the
// server to answer the GET.
func (t *HTTPTransport) startListening(ctx context.Context) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	if t.stopListen != nil {
		t.stopListen()
	}
	lctx, stop := context.WithCancel(t.ctx)
	end := make(chan struct{})
	t.stopListen, t.listenEnd = stop, end
	t.wg.Add(1)
	t.mu.Unlock()
	answered := make(chan struct{})
	go func() {
		defer t.wg.Done()
		defer close(end)
		defer stop()
		t.listen(lctx, answered)
	}()
	timer := time.NewTimer(listenWait)
	defer timer.Stop()
	select {
	case <-answered:
	case <-timer.C:
	case <-ctx.Done():
	case <-t.done:
	}
}

// listenBackoffMax caps the wait before reopening a standalone stream
// whose server named no retry delay.
const listenBackoffMax = 30 * time.Second

// listen reads the standalone GET stream until Close. What it carries
// (requests, notifications, even responses) is queued for Recv, related to
// no request. A refusal (405: the server offers no such stream; any other
// status), a reply that is not an event stream, a malformed or over-size
// event end it for good. A stream that ends or breaks is reopened, with
// Last-Event-ID when it sent event ids, after its retry delay (else
// DefaultRetry doubling up to listenBackoffMax), at most MaxResumes times
// in a row without a message. answered is closed once the first GET has
// its answer, whatever it is.
func (t *HTTPTransport) listen(ctx context.Context, answered chan struct{}) {
	once := sync.OnceFunc(func() { close(answered) })
	defer once()
	var p *sse.Parser
	fruitless := 0
	for {
		lastID := ""
		if p != nil && p.SawID {
			lastID = p.LastID
		}
		resp, err := t.get(ctx, lastID)
		once()
		if ctx.Err() != nil {
			if err == nil {
				resp.Body.Close()
			}
			return
		}
		var he *MCPHTTPError
		var fatal errStreamFatal
		if errors.As(err, &he) || errors.As(err, &fatal) { // an *AuthError holds its *MCPHTTPError
			return
		}
		n := 0
		if err == nil {
			if p == nil {
				p = sse.NewParser(resp.Body, t.opts.MaxBody, errHTTPTooLarge)
			} else {
				p = p.Resumed(resp.Body)
			}
			n, err = t.readListened(p)
			resp.Body.Close()
			if errors.As(err, &fatal) || ctx.Err() != nil {
				return
			}
		}
		if n > 0 {
			fruitless = 0
		}
		fruitless++
		if fruitless > t.opts.MaxResumes {
			return
		}
		wait := min(t.opts.DefaultRetry<<(fruitless-1), listenBackoffMax)
		if p != nil && p.RetrySet {
			wait = p.Retry
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// readListened queues every message of the standalone stream until it
// ends (nil or the read error) or fails for good (errStreamFatal). n
// counts the messages.
func (t *HTTPTransport) readListened(p *sse.Parser) (n int, err error) {
	for {
		ev, err := p.Next()
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return n, errStreamFatal{err}
			}
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		if ev.Type != "message" {
			continue
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		msg, err := DecodeMessage(data)
		if err != nil {
			return n, errStreamFatal{fmt.Errorf("the server sent a malformed message on its GET stream: %s", decodeReason(err))}
		}
		n++
		t.deliver(msg)
	}
}

// newRequest builds a request with the stored headers and the protocol
// headers: Accept and Content-Type by method, the session id when sid is
// set, MCP-Protocol-Version when withVersion and the version is known.
func (t *HTTPTransport) newRequest(ctx context.Context, method string, body []byte, sid string, withVersion bool) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.url, rd)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s %s: %v", method, t.shownURL, err)
	}
	t.mu.Lock()
	headers := t.headers
	t.mu.Unlock()
	for k, v := range headers {
		req.Header[k] = v
	}
	if t.opts.Authorizer != nil && headers.Get("Authorization") == "" {
		v, err := t.opts.Authorizer.Authorization(ctx)
		if err != nil {
			return nil, err
		}
		if v != "" {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, errors.New("mcp: the Authorization from the login holds a line break or NUL; log in again")
			}
			req.Header.Set("Authorization", v)
		}
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if sid != "" {
		req.Header.Set(headerSessionID, sid)
	} else {
		req.Header.Del(headerSessionID)
	}
	t.mu.Lock()
	v := t.version
	t.mu.Unlock()
	if withVersion && v != "" {
		req.Header.Set(headerProtocolVersion, v)
	} else {
		req.Header.Del(headerProtocolVersion)
	}
	return req, nil
}

// readJSON reads the single-message JSON reply to request id, refusing one
// over MaxBody without reading past the cap. A reply that is not valid
// JSON-RPC is a *MalformedReplyError.
func (t *HTTPTransport) readJSON(resp *http.Response, id ID) (*Message, error) {
	max := t.opts.MaxBody
	if resp.ContentLength > max {
		return nil, fmt.Errorf("%w: the server's reply is %d bytes, the limit is %d; refusing it", errHTTPTooLarge, resp.ContentLength, max)
	}
	data, err := readCapped(resp.Body, max+1, resp.ContentLength)
	if err != nil {
		return nil, fmt.Errorf("reading the reply from %s: %w", t.shownURL, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: the server's reply is over %d bytes; refusing it", errHTTPTooLarge, max)
	}
	m, err := DecodeMessage(data)
	if err != nil {
		return nil, &MalformedReplyError{ID: id, Err: err}
	}
	return m, nil
}

// readCapped reads r to its end or to limit bytes, whichever comes first.
// The buffer starts at hint (a Content-Length, when known) and doubles,
// never past limit, so reading n bytes allocates at most about 2n.
func readCapped(r io.Reader, limit, hint int64) ([]byte, error) {
	size := int64(4096)
	if hint >= 0 {
		size = hint + 1 // one more byte to see the end
	}
	buf := make([]byte, 0, min(size, limit))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= limit {
				return buf, nil
			}
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// httpError turns a non-2xx response into *MCPHTTPError, taking the
// JSON-RPC error from the body when there is one, else the body's first
// line. It closes the body.
func (t *HTTPTransport) httpError(resp *http.Response) error {
	defer resp.Body.Close()
	e := &MCPHTTPError{Status: resp.StatusCode, WWWAuthenticate: resp.Header.Get("WWW-Authenticate")}
	scrub := t.scrub
	if resp.Request != nil {
		// A token the Authorizer added is not among the stored headers.
		if _, tok, ok := strings.Cut(resp.Request.Header.Get("Authorization"), " "); ok {
			scrub = func(s string) string { return secret.Hide(t.scrub(s), tok) }
		}
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if m, err := DecodeMessage(bytes.TrimSpace(data)); err == nil && m.Error != nil {
		e.Code, e.Message, e.Data = m.Error.Code, m.Error.Message, m.Error.Data
	} else {
		e.Message = firstLine(data, 200)
	}
	if e.Message == "" {
		e.Message = "from " + t.shownURL
	} else {
		e.Message = "from " + t.shownURL + ": " + scrub(e.Message)
	}
	e.WWWAuthenticate = scrub(e.WWWAuthenticate)
	if len(e.Data) > 0 {
		e.Data = json.RawMessage(scrub(string(e.Data)))
	}
	return e
}

// credentials returns what the transport sends that may be secret: header
// values (and their token after a "Bearer "/"Basic " scheme), the URL's
// password and query values.
func credentials(u *url.URL, h http.Header) []string {
	var out []string
	add := func(v string) {
		if len(v) >= secret.MinLen {
			out = append(out, v)
		}
	}
	for _, vs := range h {
		for _, v := range vs {
			add(v)
			if _, tok, ok := strings.Cut(v, " "); ok {
				add(strings.TrimSpace(tok))
			}
		}
	}
	if p, ok := u.User.Password(); ok {
		add(p)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
		}
	}
	// Longest first, so a whole header value goes before its token.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrub blanks every credential the transport sends out of text from the
// server (an error body may echo a rejected token back).
func (t *HTTPTransport) scrub(s string) string {
	t.mu.Lock()
	secrets := t.secrets
	t.mu.Unlock()
	return secret.Hide(s, secrets...)
}

// netError rewrites a client error so it names the redacted URL (net/http
// would print the full one, query string and all).
func (t *HTTPTransport) netError(method string, err error) error {
	err = URLErrorCause(err)
	if t.ctx.Err() != nil {
		return ErrClosed
	}
	return fmt.Errorf("mcp: %s %s: %w", method, t.shownURL, err)
}

// inbound is one item for Recv: a message, or the malformed reply that
// fails one request.
type inbound struct {
	m   *Message
	err *MalformedReplyError
}

// deliver queues a message for Recv unless the transport closed.
func (t *HTTPTransport) deliver(m *Message) { t.queue(inbound{m: m}) }

func (t *HTTPTransport) queue(in inbound) {
	select {
	case t.in <- in:
	case <-t.done:
	}
}

// deliverError fails request id with err: a malformed reply reaches Recv
// as its *MalformedReplyError, anything else as an error response.
func (t *HTTPTransport) deliverError(id ID, err error) {
	if bad := (*MalformedReplyError)(nil); errors.As(err, &bad) {
		t.queue(inbound{err: &MalformedReplyError{ID: id, Err: bad.Err}})
		return
	}
	t.deliver(&Message{ID: id, Error: &WireError{Code: CodeInternalError, Message: "mcp http transport: " + err.Error()}})
}

// drain discards up to max bytes of a body and closes it, so the
// connection can be reused.
func drain(resp *http.Response, max int64) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, max))
	resp.Body.Close()
}

// streamDrainWait and streamDrainMax bound how long and how much of a
// stream's tail is read once its response arrived: a server ends the stream
// then, and reading to its end lets the connection be reused.
const (
	streamDrainWait = 100 * time.Millisecond
	streamDrainMax  = 64 << 10
)

// drainStream reads what is left of an answered stream, for at most
// streamDrainWait and streamDrainMax bytes, then closes it.
func drainStream(r io.Reader) {
	body, ok := r.(io.ReadCloser)
	if !ok {
		return
	}
	stop := time.AfterFunc(streamDrainWait, func() { body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, streamDrainMax))
	stop.Stop()
	body.Close()
}

// firstLine returns the first line of b, trimmed and cut to max runes, or
// "" when it is not printable text.
func firstLine(b []byte, max int) string {
	s := string(bytes.TrimSpace(b))
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if !utf8.ValidString(s) {
		return ""
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// validSessionID reports whether a session id is empty or only visible
// ASCII (0x21-0x7E), as the specification requires.
func validSessionID(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// authorizing reports whether challenges go to the Authorizer: there is
// one and the entry sets no Authorization of its own.
func (t *HTTPTransport) authorizing() bool {
	if t.opts.Authorizer == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.headers.Get("Authorization") == ""
}
