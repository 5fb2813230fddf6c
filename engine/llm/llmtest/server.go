package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// ToolCall is a tool call a scripted turn makes. An empty ID is filled with
// a fresh one ("call_N" for OpenAI, "toolu_N" for Anthropic).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON object text; empty means {}
}

// Turn is one scripted answer. A Turn with Status set is a failure instead
// of an answer.
type Turn struct {
	// Text is the answer's text.
	Text string
	// ToolCalls are the tool calls the answer makes, in order.
	ToolCalls []ToolCall
	// Finish overrides the wire finish/stop reason ("" means the natural
	// one: stop/tool_calls for OpenAI, end_turn/tool_use for Anthropic).
	Finish string
	// Refusal is an OpenAI model's refusal: message.refusal in a whole
	// answer, delta.refusal chunks in a stream (the OpenAI fake only; an
	// Anthropic refusal is Finish "refusal").
	Refusal string
	// InputTokens and OutputTokens override the usage counts (0 means a
	// count derived from the sizes of request and answer).
	InputTokens, OutputTokens int
	// NoUsage leaves the usage out of the answer (OpenAI fake), as some
	// OpenAI-compatible servers do.
	NoUsage bool
	// NoIDs sends the tool calls without ids (OpenAI fake), as some local
	// servers do.
	NoIDs bool

	// Status, when non-zero, answers with this HTTP status and an error
	// body in the API's shape, carrying ErrorType and Error.
	Status     int
	ErrorType  string
	Error      string
	RetryAfter string // Retry-After header sent with Status

	// CutAfter, when positive, ends a streamed answer after this many
	// events, without the terminating ones, as a dropped connection would.
	CutAfter int
	// Hang makes a streamed answer stop after its first text event and wait
	// until the client goes away (or the test ends).
	Hang bool
	// StreamError, when set, sends an error inside the stream after the
	// first text event (Anthropic: an `error` event of type
	// overloaded_error; OpenAI: a data chunk with an error object) and ends
	// the stream.
	StreamError string
}

// Say returns a turn answering text.
func Say(text string) Turn { return Turn{Text: text} }

// Calls returns a turn making the given tool calls.
func Calls(calls ...ToolCall) Turn { return Turn{ToolCalls: calls} }

// Call returns a tool call of name with JSON arguments args.
func Call(name, args string) ToolCall { return ToolCall{Name: name, Arguments: args} }

// Fail returns a turn answering HTTP status with message msg.
func Fail(status int, msg string) Turn { return Turn{Status: status, Error: msg} }

// RateLimited returns a 429 turn with the given Retry-After value ("" sends
// none).
func RateLimited(retryAfter string) Turn {
	return Turn{Status: http.StatusTooManyRequests, ErrorType: "rate_limit_error", Error: "Rate limit reached, slow down", RetryAfter: retryAfter}
}

// Message is one message of a received request in a provider-neutral form:
// Anthropic tool_result blocks become Role "tool" messages, a top-level
// system prompt a Role "system" message first.
type Message struct {
	Role       string // system, user, assistant, tool
	Text       string
	ToolCalls  []ToolCall
	ToolCallID string
	IsError    bool
	Images     []Image // Anthropic: a tool_result's image blocks; OpenAI: a user message's image parts
	Audio      []Image // OpenAI: a user message's input_audio parts, MIME "wav" or "mp3"
}

// Image is an image a received request carried, decoded.
type Image struct {
	MIME string
	Data []byte
}

// Tool is a tool offered in a received request.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one request the fake received, parsed.
type Request struct {
	Path      string
	Header    http.Header
	Body      []byte // exactly as received
	Model     string
	Stream    bool
	MaxTokens int
	Messages  []Message
	Tools     []Tool
}

// LastUser returns the text of the last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// ToolResults returns the tool results after the last assistant message:
// the answers to the calls of the previous turn.
func (r Request) ToolResults() []Message {
	var out []Message
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "assistant"; i-- {
		if r.Messages[i].Role == "tool" {
			out = append([]Message{r.Messages[i]}, out...)
		}
	}
	return out
}

// Images returns the images after the last assistant message, in tool
// results or user messages: what the model sees of the previous turn's
// tools.
func (r Request) Images() []Image {
	var out []Image
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "assistant"; i-- {
		out = append(append([]Image(nil), r.Messages[i].Images...), out...)
	}
	return out
}

// ToolNames returns the names of the tools offered.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

type flavor int

const (
	openAI flavor = iota
	anthropic
)

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's root, http://127.0.0.1:PORT.
	URL string
	// BaseURL is what a profile's base_url should be: URL+"/v1" for the
	// OpenAI fake (as OPENAI_BASE_URL), URL for the Anthropic fake (as
	// ANTHROPIC_BASE_URL).
	BaseURL string

	t      testing.TB
	flavor flavor
	schema *schema
	srv    *httptest.Server
	done   chan struct{}

	mu      sync.Mutex
	turns   []Turn
	rule    func(Request) Turn
	reqs    []Request
	key     string
	models  []Model
	ids     int
	invalid bool // AllowInvalid
	listed  bool // RefuseUnlisted
}

// NewOpenAI starts a fake OpenAI chat-completions server (POST
// /v1/chat/completions, and GET /api/tags as Ollama serves it) answering
// turns in order.
func NewOpenAI(t testing.TB, turns ...Turn) *Server { return start(t, openAI, turns) }

// NewAnthropic starts a fake Anthropic Messages server (POST /v1/messages)
// answering turns in order.
func NewAnthropic(t testing.TB, turns ...Turn) *Server { return start(t, anthropic, turns) }

func start(t testing.TB, f flavor, turns []Turn) *Server {
	t.Helper()
	s := &Server{t: t, flavor: f, turns: turns, done: make(chan struct{})}
	file := "openai-chat-request.schema.json"
	if f == anthropic {
		file = "anthropic-messages-request.schema.json"
	}
	var err error
	if s.schema, err = loadSchema(file); err != nil {
		t.Fatalf("llmtest: %v", err)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	s.BaseURL = s.URL
	if f == openAI {
		s.BaseURL += "/v1"
	}
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// SetRule answers every request that finds the script empty with
// rule(request), so a test can make the model read a tool result and answer
// from it.
func (s *Server) SetRule(rule func(Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rule = rule
}

// RequireKey makes the fake reject requests that do not carry key
// (Authorization: Bearer for OpenAI, x-api-key for Anthropic) with 401. The
// 401 message repeats the key it received, as some servers do, so tests can
// check that clients redact it.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Model is a model the fake lists, with the date it was created.
type Model struct {
	ID      string
	Created time.Time // zero: listed without a date
}

// SetModels sets the models GET /v1/models lists (both fakes, as the
// APIs do: {"data": [{"id": …}, …]}) and GET /api/tags (OpenAI fake only,
// as a local Ollama), without creation dates.
func (s *Server) SetModels(names ...string) {
	models := make([]Model, len(names))
	for i, n := range names {
		models[i] = Model{ID: n}
	}
	s.SetModelList(models...)
}

// SetModelList sets the models GET /v1/models lists with their creation
// dates, as each API gives them: "created" in Unix seconds (OpenAI),
// "created_at" in RFC 3339 (Anthropic).
func (s *Server) SetModelList(models ...Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]Model(nil), models...)
}

// RefuseUnlisted makes the fake answer a request for a model it does not
// list (SetModels, SetModelList) as the API answers one for a model that
// does not exist or was retired: 404, not_found_error "model: NAME"
// (Anthropic), model_not_found "The model `NAME` does not exist or you do
// not have access to it." (OpenAI).
func (s *Server) RefuseUnlisted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed = true
}

// AllowInvalid makes a request the real API would refuse answer 400, as
// that API does, without failing the test. By default such a request also
// fails the test (t.Errorf names what the API would refuse), so that no
// test passes against the fake with a request the real API rejects. Tests
// of the fake's own checks, or of how a client reports a refusal, call it.
func (s *Server) AllowInvalid() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invalid = true
}

// refuse answers 400 with msg, in the API's error shape, and fails the
// test unless AllowInvalid was called.
func (s *Server) refuse(w http.ResponseWriter, msg string) {
	s.mu.Lock()
	allowed := s.invalid
	s.mu.Unlock()
	if !allowed {
		s.t.Errorf("llmtest: the API would refuse this request: %s", msg)
	}
	s.apiError(w, http.StatusBadRequest, "invalid_request_error", msg, "")
}

// Requests returns the completion requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Remaining returns how many scripted turns are left.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.flavor == openAI && r.URL.Path == "/api/tags" && r.Method == http.MethodGet {
		s.serveTags(w)
		return
	}
	if r.URL.Path == "/v1/models" && r.Method == http.MethodGet {
		s.serveModels(w, r)
		return
	}
	want := "/v1/chat/completions"
	if s.flavor == anthropic {
		want = "/v1/messages"
	}
	if r.URL.Path != want {
		s.apiError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("no route %s %s (the API serves POST %s)", r.Method, r.URL.Path, want), "")
		return
	}
	if r.Method != http.MethodPost {
		s.apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST", "")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		s.apiError(w, http.StatusBadRequest, "invalid_request_error", "unreadable body: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key != "" {
		got := r.Header.Get("x-api-key")
		if s.flavor == openAI {
			got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if got != key {
			s.apiError(w, http.StatusUnauthorized, "authentication_error", "Incorrect API key provided: "+got, "")
			return
		}
	}
	var req Request
	if s.flavor == anthropic && r.Header.Get("anthropic-version") == "" {
		s.refuse(w, "anthropic-version: header is required")
		return
	}
	if s.flavor == openAI {
		req, err = parseOpenAI(body)
	} else {
		req, err = parseAnthropic(body)
	}
	req.Path, req.Header, req.Body = r.URL.Path, r.Header.Clone(), body
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if err == nil {
		err = s.schema.validate(body)
	}
	if err != nil {
		s.refuse(w, err.Error())
		return
	}
	if s.unlisted(req.Model) {
		if s.flavor == anthropic {
			s.apiError(w, http.StatusNotFound, "not_found_error", "model: "+req.Model, "")
		} else {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "The model `" + req.Model + "` does not exist or you do not have access to it.", "type": "invalid_request_error", "param": nil, "code": "model_not_found"}})
		}
		return
	}
	turn, ok := s.next(req)
	if !ok {
		s.t.Errorf("llmtest: request %d found no scripted turn and no rule", len(s.Requests()))
		s.apiError(w, http.StatusBadRequest, "invalid_request_error", "llmtest: no scripted turn left", "")
		return
	}
	if turn.Status != 0 {
		typ := turn.ErrorType
		if typ == "" {
			typ = "api_error"
		}
		s.apiError(w, turn.Status, typ, turn.Error, turn.RetryAfter)
		return
	}
	s.fillIDs(&turn)
	if turn.InputTokens == 0 {
		turn.InputTokens = len(body)/4 + 1
	}
	if turn.OutputTokens == 0 {
		n := len(turn.Text)
		for _, c := range turn.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
		turn.OutputTokens = n/4 + 1
	}
	switch {
	case s.flavor == openAI && req.Stream:
		s.streamOpenAI(w, r, req, turn)
	case s.flavor == openAI:
		s.wholeOpenAI(w, req, turn)
	case req.Stream:
		s.streamAnthropic(w, r, req, turn)
	default:
		s.wholeAnthropic(w, req, turn)
	}
}

// unlisted reports whether RefuseUnlisted is on and model is not listed.
func (s *Server) unlisted(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listed {
		return false
	}
	for _, m := range s.models {
		if m.ID == model {
			return false
		}
	}
	return true
}

func (s *Server) next(req Request) (Turn, bool) {
	s.mu.Lock()
	if len(s.turns) > 0 {
		t := s.turns[0]
		s.turns = s.turns[1:]
		s.mu.Unlock()
		return t, true
	}
	rule := s.rule
	s.mu.Unlock()
	if rule == nil {
		return Turn{}, false
	}
	return rule(req), true
}

func (s *Server) fillIDs(t *Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := make([]ToolCall, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		if c.ID == "" {
			s.ids++
			if s.flavor == openAI {
				c.ID = fmt.Sprintf("call_%d", s.ids)
			} else {
				c.ID = fmt.Sprintf("toolu_%d", s.ids)
			}
		}
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		calls[i] = c
	}
	t.ToolCalls = calls
}

func (s *Server) serveTags(w http.ResponseWriter) {
	s.mu.Lock()
	models := append([]Model(nil), s.models...)
	s.mu.Unlock()
	type model struct {
		Name  string `json:"name"`
		Model string `json:"model"`
	}
	list := make([]model, len(models))
	for i, m := range models {
		list[i] = model{Name: m.ID, Model: m.ID}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": list})
}

// serveModels answers GET /v1/models (with the key RequireKey set, if
// any); with no models set it answers 404, as a server that offers no
// list does.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	models, key := append([]Model(nil), s.models...), s.key
	s.mu.Unlock()
	got := r.Header.Get("x-api-key")
	if s.flavor == openAI {
		got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	} else if r.Header.Get("anthropic-version") == "" {
		s.refuse(w, "anthropic-version: header is required")
		return
	}
	if key != "" && got != key {
		s.apiError(w, http.StatusUnauthorized, "authentication_error", "Incorrect API key provided", "")
		return
	}
	if len(models) == 0 {
		s.apiError(w, http.StatusNotFound, "not_found_error", "no model list here", "")
		return
	}
	list := make([]map[string]any, len(models))
	for i, m := range models {
		if s.flavor == anthropic {
			list[i] = map[string]any{"id": m.ID, "type": "model", "display_name": m.ID}
			if !m.Created.IsZero() {
				list[i]["created_at"] = m.Created.UTC().Format(time.RFC3339)
			}
			continue
		}
		list[i] = map[string]any{"id": m.ID, "object": "model", "owned_by": "llmtest"}
		if !m.Created.IsZero() {
			list[i]["created"] = m.Created.Unix()
		}
	}
	if s.flavor == anthropic {
		writeJSON(w, http.StatusOK, map[string]any{"data": list, "has_more": false, "first_id": models[0].ID, "last_id": models[len(models)-1].ID})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "object": "list"})
}

// apiError writes an error body shaped as the API's own.
func (s *Server) apiError(w http.ResponseWriter, status int, typ, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if s.flavor == anthropic {
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		return
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and flushes each one.
type sse struct {
	w     http.ResponseWriter
	f     http.Flusher
	sent  int
	limit int // 0: none; else stop (report false) after limit events
}

func newSSE(w http.ResponseWriter, limit int) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f, limit: limit}
}

// send writes one event (event may be ""); it reports false when the cut
// limit is reached and nothing more may be sent.
func (e *sse) send(event string, data any) bool {
	if e.limit > 0 && e.sent >= e.limit {
		return false
	}
	var buf bytes.Buffer
	if event != "" {
		fmt.Fprintf(&buf, "event: %s\n", event)
	}
	switch d := data.(type) {
	case string:
		fmt.Fprintf(&buf, "data: %s\n\n", d)
	default:
		b, _ := json.Marshal(d)
		fmt.Fprintf(&buf, "data: %s\n\n", b)
	}
	_, _ = e.w.Write(buf.Bytes())
	if e.f != nil {
		e.f.Flush()
	}
	e.sent++
	return true
}

// hang waits until the client goes away or the test ends.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// pieces splits text into word-sized deltas ("Hello", " world").
func pieces(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if r == ' ' && i > start {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// argPieces splits JSON argument text into chunks of at most 7 bytes, on
// rune boundaries, so clients must reassemble deltas.
func argPieces(args string) []string {
	var out []string
	for len(args) > 0 {
		n := min(7, len(args))
		for n < len(args) && !utf8.RuneStart(args[n]) {
			n++
		}
		out = append(out, args[:n])
		args = args[n:]
	}
	return out
}
