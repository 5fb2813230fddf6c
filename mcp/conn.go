package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxServerRequests bounds the server-to-client requests (ping and the
// like) a client answers at once. More are refused with a JSON-RPC error,
// so a server flooding them cannot grow tai's memory without bound.
const MaxServerRequests = 16

// conn is the JSON-RPC connection under a Client: it sends requests and
// matches their responses (pending calls, one watchdog for their
// deadlines), reads the transport (whichever caller waits, else an idle
// reader), and answers what the server sends through its method table.
// It knows nothing of MCP's methods beyond ping and cancellation.
type conn struct {
	name  string // the server's name, in errors
	t     Transport
	table methodTable
	// sendTimeout bounds sending an answer or refusal to the server.
	sendTimeout time.Duration
	// warn, when set, is told once of a server sending too many requests.
	warn func(string)
	// redact, when set, scrubs the text of a handler's error before the
	// server sees it.
	redact func(string) string

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
	reading bool          // under mu: the idle reader was started

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

	// Server-to-client requests: serving holds one token per request being
	// answered; the excess waits in refusals for one goroutine to refuse
	// it, and is dropped when even that queue is full.
	serving    chan struct{}
	refusals   chan *Message
	refuseOnce sync.Once
	warnOnce   sync.Once

	// answering holds the server's requests being answered, by their id
	// (under mu), so the server's notifications/cancelled and the end of
	// the call each belongs to stop its handler. bound counts those
	// that belong to a call, so a call's end looks only when there are.
	answering map[ID]*answering
	bound     atomic.Int32
}

// init readies a conn over t for the server called name, with the method
// table and limits opts gives.
func (c *conn) init(name string, t Transport, opts *ClientOptions) {
	c.name, c.t = name, t
	c.table = newMethodTable(opts)
	c.sendTimeout, c.warn, c.redact = opts.ConnectTimeout, opts.OnWarning, opts.Redact
	c.pending = make(map[ID]pendingCall)
	c.answering = make(map[ID]*answering)
	c.done, c.readEnd = make(chan struct{}), make(chan struct{})
	c.readTok = make(chan struct{}, 1)
	c.epoch = time.Now()
	c.serving = make(chan struct{}, MaxServerRequests)
	c.refusals = make(chan *Message, MaxServerRequests)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.rctx, c.rcancel = context.WithCancel(c.ctx)
}

// run starts reading: the read token goes out, and the idle reader starts.
func (c *conn) run() {
	c.mu.Lock()
	c.reading = true
	c.mu.Unlock()
	c.readTok <- struct{}{}
	go c.idleLoop()
}

// close ends the connection with ErrClosed and closes the transport,
// then waits up to wait for the idle reader to return. It is called once.
func (c *conn) close(wait time.Duration) error {
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
	err := c.t.Close()
	c.mu.Lock()
	reading := c.reading
	c.mu.Unlock()
	if reading {
		select {
		case <-c.readEnd:
		case <-time.After(wait):
		}
	}
	return err
}

// RequestHandler answers one request a server sends (elicitation/create,
// roots/list, sampling/createMessage, …): params as sent, and the result
// to send back (nil sends {}). An error that is or wraps a *WireError goes
// back as that error, any other as CodeInternalError with its text
// (redacted, see ClientOptions.Redact).
//
// ctx is tied to the call in flight the request belongs to, when there is
// one: it carries that call's values, and ends when the call ends, when
// the server cancels the request, or on Close. A request sent on a
// tools/call's event stream (Streamable HTTP) belongs to that call; on
// stdio, one sent while a single tools/call is in flight belongs to it.
// Any other carries the calls in flight when it came (CallsInFlight).
// Each request is answered on a goroutine of its own, at most
// MaxServerRequests at once.
type RequestHandler func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)

// NotificationHandler sees one notification a server sends, its params as
// sent. ctx is that of the call in flight it belongs to (see
// RequestHandler; a notifications/progress belongs to the call its
// progressToken names), else one that ends on Close. It runs on the
// goroutine reading the connection and must not block.
type NotificationHandler func(ctx context.Context, params json.RawMessage)

// methodTable holds what answers each method a server may send.
type methodTable struct {
	requests      map[string]RequestHandler
	notifications map[string]NotificationHandler
	// every sees each notification after its handler (OnNotification).
	every func(*Message)
}

// newMethodTable builds the table from the options' handlers: ping is
// always answered with {}, and OnToolsChanged runs before any handler of
// notifications/tools/list_changed.
func newMethodTable(opts *ClientOptions) methodTable {
	t := methodTable{
		requests:      make(map[string]RequestHandler, len(opts.Requests)+1),
		notifications: make(map[string]NotificationHandler, len(opts.Notifications)+1),
		every:         opts.OnNotification,
	}
	for method, h := range opts.Requests {
		if h != nil {
			t.requests[method] = h
		}
	}
	t.requests[MethodPing] = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	}
	for method, h := range opts.Notifications {
		if h != nil {
			t.notifications[method] = h
		}
	}
	if changed := opts.OnToolsChanged; changed != nil {
		next := t.notifications[MethodToolsListChanged]
		t.notifications[MethodToolsListChanged] = func(ctx context.Context, params json.RawMessage) {
			changed()
			if next != nil {
				next(ctx, params)
			}
		}
	}
	return t
}

// idleReadDelay is how long the connection must go without a waiting
// caller before the idle reader takes over reading.
const idleReadDelay = time.Millisecond

// idleLoop reads while no caller does, so server requests (ping),
// notifications and a dying server are noticed between calls.
func (c *conn) idleLoop() {
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
func (c *conn) readOne(ctx context.Context) {
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
// request, a server request to its handler on a goroutine of its own, a
// notification to its handlers on this one.
func (c *conn) dispatch(m *Message) {
	switch {
	case m.IsResponse():
		if p, ok := c.take(m.ID); ok {
			p.ch <- reply{m: m}
		}
	case m.IsRequest():
		select {
		case c.serving <- struct{}{}:
			// The call it belongs to is found now, while it is in flight:
			// its response may follow at once.
			ctx, end := c.answerContext(m)
			go func() {
				defer func() { <-c.serving }()
				defer end()
				c.answer(ctx, m)
			}()
		default:
			c.refuse(m)
		}
	default:
		var ctx context.Context
		switch m.Method {
		case MethodCancelled:
			c.cancelAnswer(m.Params)
		case MethodProgress:
			var ok bool
			if ctx, ok = c.progressed(m.Params); !ok {
				return // a token tai never gave, or progress going back
			}
		}
		if h := c.table.notifications[m.Method]; h != nil {
			if ctx == nil {
				ctx = c.callContext(m)
			}
			h(ctx, m.Params)
		}
		if c.table.every != nil {
			c.table.every(m)
		}
	}
}

// take removes the pending request id and returns it; only its one taker
// delivers its reply.
func (c *conn) take(id ID) (pendingCall, bool) {
	c.mu.Lock()
	p, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	return p, ok
}

// dispatchMalformed fails the request a malformed reply answers. A
// malformed reply to no pending request is counted as garbage where the
// transport counts it, and otherwise dropped.
func (c *conn) dispatchMalformed(bad *MalformedReplyError) {
	if p, ok := c.take(bad.ID); ok {
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
// its timing (see timing), the caller's ctx and method, for what the
// server sends about it, and the last progress the server reported for it.
type pendingCall struct {
	ch  chan reply
	ctx context.Context
	timing
	method   string
	progress float64
	reported bool // progress holds a value the server sent
}

// timing is when a request must be answered by, all as time.Since(epoch)
// in nanoseconds: deadline (0 for none, leaving only the caller's ctx);
// renew, when not 0, is how far each progress the server reports moves
// the deadline from now (MCP_CALL_TIMEOUT again), never past until.
type timing struct {
	deadline, renew, until int64
}

// answer replies to a server-to-client request through the method table;
// a method it does not hold gets -32601, an answer too large to send
// -32603.
func (c *conn) answer(ctx context.Context, req *Message) {
	resp := &Message{ID: req.ID}
	if h := c.table.requests[req.Method]; h != nil {
		resp.Result, resp.Error = c.handle(ctx, h, req)
	} else {
		resp.Error = &WireError{Code: CodeMethodNotFound, Message: "method not supported by the tai client: " + req.Method}
	}
	sctx, cancel := context.WithTimeout(c.ctx, c.sendTimeout)
	defer cancel()
	if err := c.t.Send(sctx, resp); errors.Is(err, ErrTooLarge) {
		// The server still waits for an answer: say why there is none.
		_ = c.t.Send(sctx, &Message{ID: req.ID, Error: &WireError{Code: CodeInternalError,
			Message: fmt.Sprintf("tai's answer to %s is larger than %d bytes, the most one message may carry", req.Method, MCP_HTTP_MAX_BODY)}})
	}
}

// handle runs h on req and makes its outcome a response: the result, or
// the handler's *WireError, or CodeInternalError with its error's text
// (redacted). A result that is not one JSON value is an internal error.
func (c *conn) handle(ctx context.Context, h RequestHandler, req *Message) (json.RawMessage, *WireError) {
	res, err := h(ctx, req.Params)
	if err != nil {
		if we := (*WireError)(nil); errors.As(err, &we) {
			return nil, &WireError{Code: we.Code, Message: c.scrubText(we.Message), Data: we.Data}
		}
		return nil, &WireError{Code: CodeInternalError, Message: c.scrubText(err.Error())}
	}
	if res == nil {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid(res) {
		return nil, &WireError{Code: CodeInternalError, Message: "tai's answer to " + req.Method + " is not valid JSON"}
	}
	return res, nil
}

// scrubText applies the redaction, when there is one, to text bound for
// the server.
func (c *conn) scrubText(s string) string {
	if c.redact != nil {
		return c.redact(s)
	}
	return s
}

// answering is one server request being answered: the call it belongs
// to (unset when none) and what stops its handler.
type answering struct {
	call ID
	// calls are, for a request of no one call, the tools/call that were
	// in flight when it came and have not ended yet.
	calls  []ID
	cancel context.CancelFunc
}

// answerContext returns the context a handler answers m under, and what
// to call once it has: the context of the call m belongs to (see
// callContext), ended also by the call's end (for a request of no one
// call, once every call in flight when it came has ended), by the server
// cancelling m and by Close.
func (c *conn) answerContext(m *Message) (context.Context, func()) {
	c.mu.Lock()
	call, p, ok := c.callOfLocked(m)
	base := c.ctx
	if ok {
		base = p.ctx
	}
	var ids []ID
	if !ok {
		var calls []context.Context
		if ids, calls = c.callsLocked(); len(calls) > 0 {
			base = context.WithValue(base, inFlightKey{}, calls)
		}
	}
	ctx, cancel := context.WithCancel(base)
	a := &answering{cancel: cancel}
	// A request of no one call, answered for the calls in flight, ends
	// once all of them have (see endCall).
	bound := ok || len(ids) > 0
	if ok {
		a.call = call
	} else if len(ids) > 0 {
		a.calls = ids
	}
	if bound {
		c.bound.Add(1)
	}
	c.answering[m.ID] = a
	c.mu.Unlock()
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
		c.mu.Lock()
		if c.answering[m.ID] == a {
			delete(c.answering, m.ID)
		}
		c.mu.Unlock()
		if bound {
			c.bound.Add(-1)
		}
	}
}

type inFlightKey struct{}

// CallsInFlight returns, for the ctx of a server's request that belongs
// to no one call (several tools/call in flight on one stdio server, or a
// request sent outside any call's stream), the contexts of the tools/call
// requests in flight on its connection when it came, by request id; nil
// when the request belongs to a call, or none was in flight. Whoever
// answers may ask the person of those calls when they all have the same.
func CallsInFlight(ctx context.Context) []context.Context {
	calls, _ := ctx.Value(inFlightKey{}).([]context.Context)
	return calls
}

// callsLocked returns the ids and contexts of the tools/call requests in
// flight, in the order of their ids; c.mu is held.
func (c *conn) callsLocked() ([]ID, []context.Context) {
	var ids []ID
	for id, p := range c.pending {
		if p.method == MethodToolsCall {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b ID) int {
		if a.IsStr != b.IsStr || a.IsStr {
			return strings.Compare(a.String(), b.String())
		}
		return cmp.Compare(a.Num, b.Num)
	})
	calls := make([]context.Context, 0, len(ids))
	for _, id := range ids {
		calls = append(calls, c.pending[id].ctx)
	}
	return ids, calls
}

// callContext returns the context of the call in flight m belongs to, or
// the connection's when it belongs to none.
func (c *conn) callContext(m *Message) context.Context {
	c.mu.Lock()
	_, p, ok := c.callOfLocked(m)
	c.mu.Unlock()
	if ok {
		return p.ctx
	}
	return c.ctx
}

// callOfLocked finds the call in flight a message from the server belongs
// to; c.mu is held. In order: the request whose reply stream carried it
// (Streamable HTTP); else (stdio, or Streamable HTTP's standalone GET
// stream, where servers send what a tool asks while it runs when they do
// not tie it to the call's stream) the one tools/call in flight, when
// there is exactly one. Anything else belongs to no call. (A
// notifications/progress belongs to the request its progressToken names,
// tai's tokens being request ids: see progressed.)
func (c *conn) callOfLocked(m *Message) (ID, pendingCall, bool) {
	if m.related != nil {
		p, ok := c.pending[*m.related]
		return *m.related, p, ok
	}
	var one ID
	var found pendingCall
	n := 0
	for id, p := range c.pending {
		if p.method == MethodToolsCall {
			one, found = id, p
			if n++; n > 1 {
				return ID{}, pendingCall{}, false
			}
		}
	}
	return one, found, n == 1
}

// progressed takes in a notifications/progress: when its token names a
// call in flight and its progress is greater than the last that call
// reported, the call's deadline moves (see timing) and progressed returns
// the call's ctx and true. Anything else is dropped: false.
func (c *conn) progressed(params json.RawMessage) (context.Context, bool) {
	var tok, num []byte
	if len(params) == 0 || eachMember(params, validating, func(key, val []byte) {
		switch string(key) {
		case "progressToken":
			tok = val
		case "progress":
			num = val
		}
	}) != nil || tok == nil || num == nil {
		return nil, false
	}
	var id ID
	if id.UnmarshalJSON(tok) != nil || !id.Set {
		return nil, false
	}
	progress, err := strconv.ParseFloat(string(num), 64)
	if err != nil || math.IsNaN(progress) || math.IsInf(progress, 0) {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	if !ok || (p.reported && progress <= p.progress) {
		return nil, false
	}
	p.progress, p.reported = progress, true
	if p.deadline != 0 && p.renew != 0 {
		p.deadline = max(p.deadline, min(int64(time.Since(c.epoch))+p.renew, p.until))
	}
	c.pending[id] = p
	return p.ctx, true
}

// cancelAnswer stops the handler of the request a server's
// notifications/cancelled names.
func (c *conn) cancelAnswer(params json.RawMessage) {
	id, ok := cancelledID(params)
	if !ok {
		return
	}
	c.mu.Lock()
	a := c.answering[id]
	c.mu.Unlock()
	if a != nil {
		a.cancel()
	}
}

// endCall stops the handlers of the server's requests that belong to
// call id, which is over.
func (c *conn) endCall(id ID) {
	c.mu.Lock()
	for _, a := range c.answering {
		if a.call == id && a.call.Set {
			a.cancel()
		}
		if i := slices.Index(a.calls, id); i >= 0 {
			if a.calls = slices.Delete(a.calls, i, i+1); len(a.calls) == 0 {
				a.cancel()
			}
		}
	}
	c.mu.Unlock()
}

// refuse answers a server request beyond MaxServerRequests with an error,
// from one goroutine for all of them, and warns once. When the refusals
// queue up too (the server reads nothing), the request is dropped.
func (c *conn) refuse(req *Message) {
	c.warnOnce.Do(func() {
		if c.warn != nil {
			c.warn(fmt.Sprintf("mcp server %q sent more than %d requests at once; tai refuses the excess", c.name, MaxServerRequests))
		}
	})
	c.refuseOnce.Do(func() { go c.refuser() })
	select {
	case c.refusals <- req:
	default:
	}
}

// refuser sends the refusals until the session ends.
func (c *conn) refuser() {
	for {
		select {
		case req := <-c.refusals:
			resp := &Message{ID: req.ID, Error: &WireError{Code: CodeInternalError,
				Message: fmt.Sprintf("tai is already answering %d requests from this server; send fewer at once", MaxServerRequests)}}
			ctx, cancel := context.WithTimeout(c.ctx, c.sendTimeout)
			_ = c.t.Send(ctx, resp)
			cancel()
		case <-c.ctx.Done():
			return
		}
	}
}

// fail ends the session with err and wakes every waiting request.
func (c *conn) fail(err error) {
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
func (c *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: %s: params: %w", c.name, method, err)
	}
	return c.requestID(ctx, IntID(c.nextID.Add(1)), method, raw, timing{})
}

// requestID is request with a caller-chosen id and an optional deadline of
// its own (see timing; a zero timing leaves only ctx's). When that
// deadline passes first, the server gets notifications/cancelled and
// requestID returns context.DeadlineExceeded.
func (c *conn) requestID(ctx context.Context, id ID, method string, raw json.RawMessage, tm timing) (json.RawMessage, error) {
	deadline := tm.deadline
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
	c.pending[id] = pendingCall{ch: ch, timing: tm, ctx: ctx, method: method}
	if deadline != 0 {
		c.armWatchLocked(deadline)
	}
	c.mu.Unlock()
	sctx := ctx
	if deadline != 0 {
		// The send honours the deadline too, but its context is made only
		// if the transport asks for it (a stdio line that fits the pipe
		// never does).
		lc := &lazyDeadline{parent: ctx, deadline: c.epoch.Add(time.Duration(deadline)), c: c, id: id}
		defer lc.release()
		sctx = lc
	}
	if err := c.t.Send(sctx, &Message{ID: id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return nil, c.wrap(method, err)
	}
	r, got, err := c.await(ctx, ch)
	if c.bound.Load() != 0 {
		c.endCall(id)
	}
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
func (c *conn) await(ctx context.Context, ch chan reply) (reply, bool, error) {
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
func (c *conn) hookLocked(ctx context.Context) {
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
func (c *conn) interrupt() {
	c.mu.Lock()
	c.interruptLocked()
	c.mu.Unlock()
}

// interruptLocked cancels rctx and puts a fresh one in its place; c.mu is
// held.
func (c *conn) interruptLocked() {
	c.rcancel()
	c.rctx, c.rcancel = context.WithCancel(c.ctx)
}

// armWatchLocked makes sure the watchdog fires no later than deadline;
// c.mu is held. Calls share one CallTimeout, so a later call's deadline is
// never earlier than one already pending and the timer is rarely touched.
func (c *conn) armWatchLocked(deadline int64) {
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
func (c *conn) watchdog() {
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
// methods is first called. A person logging in during the call holds it
// (HoldStart): the deadline, here and in the conn's watchdog, does not run
// while they are in the browser.
type lazyDeadline struct {
	parent context.Context
	once   sync.Once
	ctx    context.Context
	cancel context.CancelCauseFunc
	c      *conn
	id     ID

	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
	held     bool
}

func (l *lazyDeadline) get() context.Context {
	l.once.Do(func() {
		l.ctx, l.cancel = context.WithCancelCause(l.parent)
		l.mu.Lock()
		l.timer = time.AfterFunc(time.Until(l.deadline), func() { l.cancel(context.DeadlineExceeded) })
		l.mu.Unlock()
	})
	return l.ctx
}

// Deadline returns the earlier of the two deadlines.
func (l *lazyDeadline) Deadline() (time.Time, bool) {
	l.get()
	l.mu.Lock()
	d := l.deadline
	l.mu.Unlock()
	if pd, ok := l.parent.Deadline(); ok && pd.Before(d) {
		return pd, true
	}
	return d, true
}

// Done is closed when the deadline passes or the parent ends.
func (l *lazyDeadline) Done() <-chan struct{} { return l.get().Done() }

// Err says why Done is closed.
func (l *lazyDeadline) Err() error {
	ctx := l.get()
	err := ctx.Err()
	if err != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// Value returns the parent's value for key; the call's clock for HoldStart.
func (l *lazyDeadline) Value(key any) any {
	if key == (heldClockKey{}) {
		return l
	}
	return l.parent.Value(key)
}

// hold stops the call's deadline until the function returned is called;
// the deadline then runs on with the time that was left (a second at
// least).
func (l *lazyDeadline) hold() func() {
	l.get()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held || !l.timer.Stop() {
		return func() {}
	}
	l.held = true
	left := time.Until(l.deadline)
	l.c.mu.Lock()
	if p, ok := l.c.pending[l.id]; ok {
		p.deadline = 0
		l.c.pending[l.id] = p
	}
	l.c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			left = max(left, time.Second)
			l.mu.Lock()
			l.held = false
			l.deadline = time.Now().Add(left)
			l.timer.Reset(left)
			l.mu.Unlock()
			c := l.c
			c.mu.Lock()
			if p, ok := c.pending[l.id]; ok {
				p.deadline = int64(time.Since(c.epoch) + left)
				c.pending[l.id] = p
				c.armWatchLocked(p.deadline)
			}
			c.mu.Unlock()
		})
	}
}

// release frees the derived context, if one was made.
func (l *lazyDeadline) release() {
	l.once.Do(func() {})
	if l.cancel != nil {
		l.mu.Lock()
		l.timer.Stop()
		l.mu.Unlock()
		l.cancel(context.Canceled)
	}
}

// cancelRemote tells the server to stop working on request id.
func (c *conn) cancelRemote(id ID, reason string) {
	params, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	_ = c.t.Send(ctx, &Message{Method: MethodCancelled, Params: params})
}

func (c *conn) forget(id ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *conn) notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	return c.t.Send(ctx, &Message{Method: method, Params: raw})
}

// wrap names the server and method in err.
func (c *conn) wrap(method string, err error) error {
	return fmt.Errorf("mcp server %q: %s: %w", c.name, method, err)
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
