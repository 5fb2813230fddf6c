package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"tai/mcp"
	"tai/mcp/screen"
)

// DefaultMaxSessions bounds the sessions alive at once when
// Options.MaxSessions is zero; an initialize beyond it (after a sweep of
// idle ones) gets 503.
const DefaultMaxSessions = 1024

// MaxQueued bounds the requests of one session waiting for their turn
// behind the one that runs; one more gets 429, so a client cannot pile up
// goroutines and bodies in the server.
const MaxQueued = 32

// DefaultPath is the endpoint's path when Options.Path is empty.
const DefaultPath = "/mcp"

// Options configures New. Key is required.
type Options struct {
	// Key is the Bearer token every request must carry (see CheckKey).
	Key string
	// Name and Version are the serverInfo of the initialize answer; Name
	// defaults to "tai".
	Name    string
	Version string
	// Instructions, when set, are sent in the initialize answer.
	Instructions string
	// Path is the endpoint; empty means DefaultPath.
	Path string
	// MaxBody caps a request body; zero means mcp.MCP_HTTP_MAX_BODY.
	MaxBody int64
	// SessionIdle drops a session idle for longer; zero means
	// mcp.MCP_SESSION_IDLE.
	SessionIdle time.Duration
	// MaxSessions bounds the sessions alive at once; zero means
	// DefaultMaxSessions.
	MaxSessions int
	// AllowedOrigins are Origin values accepted beside loopback ones
	// ("https://app.example.com"); AllowedHosts are Host names accepted
	// beside loopback names and IP literals.
	AllowedOrigins []string
	AllowedHosts   []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logf, when set, is told of sessions opened and closed.
	Logf func(format string, args ...any)
	// ShutdownGrace is how long Serve lets in-flight requests finish when
	// its context ends before cancelling them; zero means 5 s.
	ShutdownGrace time.Duration
}

// Server is the MCP endpoint: an http.Handler in front of a Catalog. It is
// safe for concurrent use.
type Server struct {
	cat  Catalog
	opts Options
	key  keyCheck
	tab  table

	// base ends when the server closes: every session's context derives
	// from it.
	base   context.Context
	cancel context.CancelFunc

	closeOnce sync.Once
}

// New returns a server for cat. It fails when the key is too weak (see
// CheckKey).
func New(cat Catalog, opts *Options) (*Server, error) {
	if cat == nil {
		return nil, errors.New("server: New needs a catalog")
	}
	if opts == nil {
		return nil, fmt.Errorf("%w: no key given; %s", ErrWeakKey, KeyHint)
	}
	o := *opts
	if err := CheckKey(o.Key); err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = "tai"
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.MaxBody <= 0 {
		o.MaxBody = mcp.MCP_HTTP_MAX_BODY
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = mcp.MCP_SESSION_IDLE
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 5 * time.Second
	}
	s := &Server{cat: cat, opts: o, key: newKeyCheck(o.Key), tab: table{sessions: map[string]*session{}}}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.tab.swept = o.Now()
	return s, nil
}

// Sessions returns how many sessions are alive.
func (s *Server) Sessions() int { return s.tab.len() }

// Sweep drops the sessions idle for longer than Options.SessionIdle and
// returns how many it dropped. Serve runs it periodically; a bare handler
// sweeps on initialize.
func (s *Server) Sweep() int { return s.tab.sweep(s.opts.Now(), s.opts.SessionIdle) }

// Close cancels every in-flight call and closes every session. The handler
// answers 503 afterwards. It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		s.tab.closeAll()
	})
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Header names.
const (
	headerSession  = "Mcp-Session-Id"
	headerVersion  = "Mcp-Protocol-Version"
	headerAuthChal = "WWW-Authenticate"
)

// ServeHTTP answers the endpoint: POST carries one JSON-RPC message, GET
// gets 405 (no server-initiated streams), DELETE ends the session. Every
// request must come from an allowed Host and Origin (else 403) and carry
// the key (else 401).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != s.opts.Path {
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest, "no MCP endpoint here: the endpoint is "+s.opts.Path)
		return
	}
	if !hostAllowed(r.Host, s.opts.AllowedHosts) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "Host "+quoteHeader(r.Host)+" is not this server's: only loopback names and IP addresses are accepted (DNS-rebinding protection)")
		return
	}
	if origin := r.Header.Get("Origin"); !originAllowed(origin, s.opts.AllowedOrigins) {
		httpError(w, http.StatusForbidden, mcp.CodeInvalidRequest, "Origin "+quoteHeader(origin)+" is not allowed: only pages on this machine (loopback origins) may call this server")
		return
	}
	if r.URL.RawQuery != "" {
		// A key in a URL ends up in logs and histories: never accepted.
		w.Header().Set(headerAuthChal, `Bearer realm="tai", error="invalid_request", error_description="send the key in the Authorization header, never in the URL"`)
		httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "the endpoint takes no query string: send the key as Authorization: Bearer KEY, never in the URL")
		return
	}
	if !s.key.ok(r) {
		w.Header().Set(headerAuthChal, `Bearer realm="tai"`)
		httpError(w, http.StatusUnauthorized, mcp.CodeInvalidRequest, "missing or wrong key: send Authorization: Bearer KEY with the key tai --serve-mcp was started with")
		return
	}
	if s.base.Err() != nil {
		httpError(w, http.StatusServiceUnavailable, mcp.CodeInternalError, "the server is shutting down")
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodDelete:
		s.delete(w, r)
	case http.MethodGet:
		w.Header().Set("Allow", "POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "this server opens no event streams: GET is not supported")
	default:
		w.Header().Set("Allow", "POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, mcp.CodeInvalidRequest, "method "+r.Method+" is not supported: use POST")
	}
}

// delete ends the session the request names.
func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(headerSession)
	if id == "" {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "DELETE needs the Mcp-Session-Id of the session to end")
		return
	}
	sess := s.tab.remove(id)
	if sess == nil {
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest, "no such session (it ended, expired or never existed)")
		return
	}
	sess.close()
	s.logf("session %s closed by the client", short(id))
	w.WriteHeader(http.StatusOK)
}

// lookup finds the session of id, dropping it when it expired.
func (s *Server) lookup(id string) *session {
	sess := s.tab.get(id)
	if sess == nil {
		return nil
	}
	if sess.idle(s.opts.Now(), s.opts.SessionIdle) {
		if s.tab.remove(id) == sess {
			sess.close()
			s.logf("session %s expired after %s idle", short(id), s.opts.SessionIdle)
		}
		return nil
	}
	return sess
}

// post handles one JSON-RPC message.
func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get(headerVersion); v != "" && !mcp.SupportedProtocolVersion(v) {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "unsupported MCP-Protocol-Version "+quoteHeader(v)+": this server speaks "+mcp.MCP_PROTOCOL_VERSION+", 2025-06-18 and 2025-03-26")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			httpError(w, http.StatusUnsupportedMediaType, mcp.CodeInvalidRequest, "Content-Type must be application/json")
			return
		}
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	msg, err := mcp.DecodeMessage(body)
	if err != nil {
		switch {
		case firstByte(body) == '[':
			httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "batch JSON-RPC arrays are not supported: send one message per POST")
		case !json.Valid(body):
			httpError(w, http.StatusBadRequest, mcp.CodeParseError, "parse error: the body is not valid JSON ("+strings.TrimPrefix(err.Error(), "mcp: ")+")")
		default:
			httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "invalid JSON-RPC message: "+err.Error())
		}
		return
	}
	id := r.Header.Get(headerSession)
	if msg.Method == mcp.MethodInitialize {
		if !msg.IsRequest() {
			httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "initialize must be a request (with an id)")
			return
		}
		if id != "" {
			httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "initialize opens a new session: send it without Mcp-Session-Id")
			return
		}
		s.initialize(w, r, msg)
		return
	}
	if id == "" {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "missing Mcp-Session-Id: send initialize first and then the session id it returned")
		return
	}
	sess := s.lookup(id)
	if sess == nil {
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest, "no such session (it ended, expired or never existed): initialize again")
		return
	}
	if !msg.IsRequest() {
		if msg.Method == mcp.MethodCancelled {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(msg.Params, &p) == nil && len(p.RequestID) > 0 {
				var rid mcp.ID
				if rid.UnmarshalJSON(p.RequestID) == nil && rid.Set {
					sess.cancelCall(rid.String())
				}
			}
		}
		// Notifications and responses are accepted and need no answer.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	now := s.opts.Now()
	if !sess.begin(now) {
		httpError(w, http.StatusNotFound, mcp.CodeInvalidRequest, "the session ended: initialize again")
		return
	}
	defer func() { sess.end(s.opts.Now()) }()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(sess.ctx, cancel)
	defer stop()
	key := msg.ID.String()
	sess.track(key, cancel)
	defer sess.untrack(key)

	// ping has no effect on the session, so it need not wait its turn.
	if msg.Method != mcp.MethodPing {
		if sess.turn.queued() >= MaxQueued {
			w.Header().Set("Retry-After", "1")
			httpError(w, http.StatusTooManyRequests, mcp.CodeInternalError, fmt.Sprintf("%d requests of this session already wait for their turn: send the next when one is answered", MaxQueued))
			return
		}
		if err := sess.turn.lock(ctx); err != nil {
			s.reply(w, errorReply(msg.ID, mcp.CodeInternalError, "the request was cancelled before its turn came"))
			return
		}
		defer sess.turn.unlock()
	}
	if m := s.handle(ctx, sess, msg, w, r); m != nil {
		s.reply(w, m)
	}
}

// readBody reads the whole body, refusing one over MaxBody with 413
// without reading past the cap.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	max := s.opts.MaxBody
	tooLarge := func() ([]byte, bool) {
		// The rest is not read: the connection closes after the answer.
		w.Header().Set("Connection", "close")
		httpError(w, http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, fmt.Sprintf("the body is over the limit of %d bytes (MCP_HTTP_MAX_BODY)", max))
		return nil, false
	}
	if r.ContentLength > max {
		return tooLarge()
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(r.Body, max+1))
	if n > max {
		return tooLarge()
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, "reading the body failed: "+err.Error())
		return nil, false
	}
	return buf.Bytes(), true
}

// handle answers one request of a session: the reply to send, or nil
// when a tools/call answered on its own event stream (see stream).
func (s *Server) handle(ctx context.Context, sess *session, msg *mcp.Message, w http.ResponseWriter, r *http.Request) *mcp.Message {
	switch msg.Method {
	case mcp.MethodPing:
		return result(msg.ID, json.RawMessage(`{}`))
	case mcp.MethodToolsList:
		return s.toolsList(msg)
	case mcp.MethodToolsCall:
		return s.toolsCall(ctx, sess, msg, w, r)
	case mcp.MethodSetLogLevel:
		return s.setLevel(sess, msg)
	}
	return errorReply(msg.ID, mcp.CodeMethodNotFound, fmt.Sprintf("method %q is not served: this server answers initialize, ping, tools/list, tools/call and logging/setLevel", msg.Method))
}

// setLevel answers logging/setLevel: the session's calls then log their
// failures at error level to a client that reads their event stream (see
// stream), when error is at or above the level set.
func (s *Server) setLevel(sess *session, msg *mcp.Message) *mcp.Message {
	var p struct {
		Level *string `json:"level"`
	}
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &p) != nil || p.Level == nil {
		return errorReply(msg.ID, mcp.CodeInvalidParams, "logging/setLevel params must be {level}, one of debug, info, notice, warning, error, critical, alert, emergency")
	}
	level, err := mcp.ParseLogLevel(*p.Level)
	if err != nil || string(level) != *p.Level {
		return errorReply(msg.ID, mcp.CodeInvalidParams, fmt.Sprintf("logging/setLevel: no log level is named %s; levels: debug, info, notice, warning, error, critical, alert, emergency", mcp.Clip(*p.Level)))
	}
	sess.setLevel(level)
	return result(msg.ID, json.RawMessage(`{}`))
}

func (s *Server) toolsList(msg *mcp.Message) *mcp.Message {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return errorReply(msg.ID, mcp.CodeInvalidParams, "tools/list params must be an object: "+err.Error())
		}
	}
	if p.Cursor != nil {
		return errorReply(msg.ID, mcp.CodeInvalidParams, "invalid cursor: tools/list has one page, so no cursor is valid")
	}
	tools := s.cat.Tools()
	if tools == nil {
		tools = []Tool{}
	}
	b, err := json.Marshal(struct {
		Tools []Tool `json:"tools"`
	}{tools})
	if err != nil {
		return errorReply(msg.ID, mcp.CodeInternalError, "encoding the tool list: "+err.Error())
	}
	return result(msg.ID, b)
}

func (s *Server) toolsCall(ctx context.Context, sess *session, msg *mcp.Message, w http.ResponseWriter, r *http.Request) *mcp.Message {
	name, args, token, err := mcp.ParseToolCallMeta(msg.Params)
	if errors.Is(err, mcp.ErrProgressToken) {
		return errorReply(msg.ID, mcp.CodeInvalidParams, "tools/call "+err.Error())
	}
	if err != nil || len(msg.Params) == 0 {
		return errorReply(msg.ID, mcp.CodeInvalidParams, "tools/call params must be an object {name, arguments?, _meta?}")
	}
	if name == "" {
		return errorReply(msg.ID, mcp.CodeInvalidParams, "tools/call needs the name of a tool")
	}
	switch firstByte(args) {
	case 0, 'n':
		args = nil
	case '{':
	default:
		return errorReply(msg.ID, mcp.CodeInvalidParams, "tools/call arguments must be a JSON object")
	}
	var st *stream
	if token != nil && acceptsStream(r.Header.Get("Accept")) {
		// The client asked for progress and reads event streams: the
		// call may report it (ProgressFrom), and then answers on the
		// stream.
		st = &stream{w: w, token: token}
		ctx = context.WithValue(ctx, progressKey{}, ProgressFunc(st.progress))
	}
	start := s.opts.Now()
	res, err := sess.state.Call(ctx, name, args)
	s.logCall(sess, name, res, err, s.opts.Now().Sub(start))
	if st == nil {
		return callReply(ctx, msg.ID, res, err)
	}
	s.logFailure(sess, st, name, res, err)
	if m := callReply(ctx, msg.ID, res, err); !st.finish(m) {
		return m
	}
	return nil
}

// callReply is the answer to a tools/call from what the session's Call
// returned.
func callReply(ctx context.Context, id mcp.ID, res json.RawMessage, err error) *mcp.Message {
	switch {
	case errors.Is(err, ErrUnknownTool), errors.Is(err, ErrInvalidParams):
		return errorReply(id, mcp.CodeInvalidParams, err.Error())
	case err != nil && ctx.Err() != nil:
		return errorReply(id, mcp.CodeInternalError, "the call was cancelled: "+err.Error())
	case err != nil:
		return errorReply(id, mcp.CodeInternalError, err.Error())
	}
	return result(id, res)
}

// initialize opens a session and answers with the negotiated version, the
// tools capability, the server's name and version, and Mcp-Session-Id.
func (s *Server) initialize(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			s.reply(w, errorReply(msg.ID, mcp.CodeInvalidParams, "initialize params must be {protocolVersion, capabilities, clientInfo}: "+err.Error()))
			return
		}
	}
	version := mcp.MCP_PROTOCOL_VERSION
	if mcp.SupportedProtocolVersion(p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	now := s.opts.Now()
	if s.tab.sweepDue(now, s.sweepEvery()) || s.tab.len() >= s.opts.MaxSessions {
		s.Sweep()
	}
	if s.tab.len() >= s.opts.MaxSessions {
		w.Header().Set("Retry-After", "60")
		httpError(w, http.StatusServiceUnavailable, mcp.CodeInternalError, fmt.Sprintf("too many sessions (%d): end one with DELETE, or wait for idle ones to expire", s.opts.MaxSessions))
		return
	}
	id, err := newSessionID()
	if err != nil {
		s.reply(w, errorReply(msg.ID, mcp.CodeInternalError, "no session id: "+err.Error()))
		return
	}
	state, err := s.cat.Open(r.Context(), id)
	if err != nil {
		s.reply(w, errorReply(msg.ID, mcp.CodeInternalError, "the session could not be opened: "+err.Error()))
		return
	}
	sess := &session{id: id, state: state, created: now, lastSeen: now, client: clientLabel(p.ClientInfo.Name, p.ClientInfo.Version)}
	sess.ctx, sess.cancel = context.WithCancel(s.base)
	s.tab.add(sess)
	s.logf("session %s opened (%s)", short(id), sess.client)

	type info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	res := struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    map[string]any `json:"capabilities"`
		ServerInfo      info           `json:"serverInfo"`
		Instructions    string         `json:"instructions,omitempty"`
	}{version, map[string]any{"tools": map[string]any{"listChanged": false}, "logging": map[string]any{}}, info{s.opts.Name, s.opts.Version}, s.opts.Instructions}
	b, err := json.Marshal(res)
	if err != nil {
		s.reply(w, errorReply(msg.ID, mcp.CodeInternalError, err.Error()))
		return
	}
	w.Header().Set(headerSession, id)
	s.reply(w, result(msg.ID, b))
}

// sweepEvery is how often idle sessions are swept: a quarter of the idle
// limit, at most a minute, at least a second.
func (s *Server) sweepEvery() time.Duration {
	return min(max(s.opts.SessionIdle/4, time.Second), time.Minute)
}

// reply writes a JSON-RPC response as the whole body.
func (s *Server) reply(w http.ResponseWriter, m *mcp.Message) {
	b, err := mcp.EncodeMessage(m)
	if err != nil {
		b, _ = mcp.EncodeMessage(errorReply(m.ID, mcp.CodeInternalError, "the answer could not be sent: "+err.Error()))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

func result(id mcp.ID, res json.RawMessage) *mcp.Message {
	return &mcp.Message{ID: id, Result: res}
}

func errorReply(id mcp.ID, code int, msg string) *mcp.Message {
	return &mcp.Message{ID: id, Error: &mcp.WireError{Code: code, Message: msg}}
}

// httpError answers with status and a JSON-RPC error without an id as the
// body.
func httpError(w http.ResponseWriter, status, code int, msg string) {
	b, _ := mcp.EncodeMessage(&mcp.Message{Error: &mcp.WireError{Code: code, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// firstByte returns the first byte of b that is not JSON white space, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// quoteHeader quotes a header value for an error message, cut short.
func quoteHeader(v string) string {
	if len(v) > 100 {
		v = v[:100] + "…"
	}
	return fmt.Sprintf("%q", v)
}

// logCall tells Logf of a finished tools/call: the tool, how it ended
// (an error's first line), and how long it took, so a console shows what
// its clients do and why calls fail (a vault sealed under the server).
func (s *Server) logCall(sess *session, name string, res json.RawMessage, err error, took time.Duration) {
	outcome := "ok"
	switch {
	case err != nil:
		first, _, _ := strings.Cut(err.Error(), "\n")
		outcome = "failed: " + screen.VisibleLine(first)
	case bytes.Contains(res, []byte(`"isError":true`)):
		outcome = "answered with an error"
	}
	s.logf("session %s: %s %s (%s)", short(sess.id), screen.VisibleLine(name), outcome, took.Round(time.Millisecond))
}

// logFailure tells the client, on the call's event stream, of a tools/call
// that failed (an error, or a result with isError), as a
// notifications/message at error level, when the level the session set
// (logging/setLevel) lets errors through. The text is the failure's first
// line, at most 500 bytes; the catalog has redacted it.
func (s *Server) logFailure(sess *session, st *stream, name string, res json.RawMessage, err error) {
	if !sess.logs(mcp.LogError) {
		return
	}
	var why string
	switch {
	case err != nil:
		why = err.Error()
	case bytes.Contains(res, []byte(`"isError":true`)):
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(res, &r) == nil && len(r.Content) > 0 {
			why = r.Content[0].Text
		}
		why = cmp.Or(why, "the tool answered with an error")
	default:
		return
	}
	first, _, _ := strings.Cut(why, "\n")
	if len(first) > 500 {
		first = strings.ToValidUTF8(first[:500], "") + "…"
	}
	st.notify(mcp.MethodLogMessage, map[string]any{"level": mcp.LogError, "logger": "tai",
		"data": map[string]string{"tool": name, "failure": first}})
}

// short is the part of a session id shown in messages and audit entries.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// clientLabel names a session's client in the log, from what it said at
// initialize.
func clientLabel(name, version string) string {
	switch {
	case name == "":
		return "unnamed client"
	case version == "":
		return plainWord(name)
	}
	return plainWord(name) + " " + plainWord(version)
}

// plainWord is what a client sent as the log shows it: as it is when it
// is short and shows as itself, else quoted, clipped and rendered visibly
// (mcp.Clip), so no client writes lines or escapes into the log.
func plainWord(s string) string {
	if len(s) <= mcp.ClipMax && screen.VisibleLine(s) == s {
		return s
	}
	return mcp.Clip(s)
}
