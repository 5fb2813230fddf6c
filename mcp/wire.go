package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// MCP_PROTOCOL_VERSION is the protocol version the client sends in
// initialize and, after it, in the MCP-Protocol-Version HTTP header.
const MCP_PROTOCOL_VERSION = "2025-11-25"

// Caps from the MCP layer's specification. Times are durations, sizes are
// bytes, counts are plain integers.
const (
	// MCP_CONNECT_TIMEOUT bounds spawn plus handshake, per server.
	MCP_CONNECT_TIMEOUT = 20 * time.Second
	// MCP_CALL_TIMEOUT bounds one tools/call; then the client sends
	// notifications/cancelled and fails the call locally.
	MCP_CALL_TIMEOUT = 60 * time.Second
	// MCP_RESULT_MAX is the tool result text kept inline; larger results
	// spill to a vault record.
	MCP_RESULT_MAX = 64 * 1024
	// MCP_HTTP_MAX_BODY is the largest single JSON-RPC message sent or
	// received on any leg (HTTP bodies and stdio lines alike).
	MCP_HTTP_MAX_BODY = 10 * 1024 * 1024
	// MCP_MAX_SERVERS is the number of registered servers; the 33rd
	// registration is refused.
	MCP_MAX_SERVERS = 32
	// MCP_MAX_TOOLS is the number of tools bridged per server; extras are
	// listed but not offered.
	MCP_MAX_TOOLS = 100
	// MCP_SESSION_IDLE is how long an idle server-side session lives.
	MCP_SESSION_IDLE = 3600 * time.Second
	// MCP_CHAT_TIMEOUT is the deadline of one served chat turn.
	MCP_CHAT_TIMEOUT = 600 * time.Second
	// MCP_RESOLVER_TIMEOUT is the deadline of the GitHub resolver subagent.
	MCP_RESOLVER_TIMEOUT = 300 * time.Second
	// MCP_RESOLVER_STEPS is the most agent steps of one GitHub resolution.
	MCP_RESOLVER_STEPS = 12
	// MCP_OAUTH_TIMEOUT is how long a login waits for the browser redirect.
	MCP_OAUTH_TIMEOUT = 300 * time.Second
	// MCP_DEFAULT_PORT is the port of the MCP server when none is given.
	MCP_DEFAULT_PORT = 8765
)

// Wire method names the client sends or handles.
const (
	// MethodInitialize opens a session.
	MethodInitialize = "initialize"
	// MethodInitialized tells the server the handshake is complete.
	MethodInitialized = "notifications/initialized"
	// MethodPing checks liveness, in either direction.
	MethodPing = "ping"
	// MethodToolsList lists a server's tools, one page per call.
	MethodToolsList = "tools/list"
	// MethodToolsCall runs one tool.
	MethodToolsCall = "tools/call"
	// MethodCancelled abandons an in-flight request.
	MethodCancelled = "notifications/cancelled"
	// MethodProgress reports progress on a request (accepted, ignored).
	MethodProgress = "notifications/progress"
	// MethodLogMessage carries a server log line (accepted, ignored).
	MethodLogMessage = "notifications/message"
	// MethodToolsListChanged says the tool list changed (accepted, ignored).
	MethodToolsListChanged = "notifications/tools/list_changed"
)

// JSON-RPC and MCP error codes.
const (
	// CodeParseError means the message was not valid JSON.
	CodeParseError = -32700
	// CodeInvalidRequest means the JSON was not a valid request.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound means the method is unknown or not offered.
	CodeMethodNotFound = -32601
	// CodeInvalidParams means the params were wrong (also unknown tool).
	CodeInvalidParams = -32602
	// CodeInternalError means the peer failed while handling the request.
	CodeInternalError = -32603
	// CodeResourceNotFound means an MCP resource does not exist.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired means the server needs a URL elicitation.
	CodeURLElicitationRequired = -32042
)

// SupportedProtocolVersion reports whether the client accepts a server
// answering initialize with protocol version v.
func SupportedProtocolVersion(v string) bool {
	switch v {
	case MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26":
		return true
	}
	return false
}

// ErrClosed is returned by a transport or client used after Close.
var ErrClosed = errors.New("mcp: connection closed")

// ErrTooLarge is wrapped by every error refusing a message larger than
// MCP_HTTP_MAX_BODY.
var ErrTooLarge = errors.New("mcp: message larger than MCP_HTTP_MAX_BODY")

// McpError is a JSON-RPC error answered by a server: a protocol failure, as
// opposed to a tool that ran and failed (a CallResult with IsError).
type McpError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

// Error formats the code and message.
func (e *McpError) Error() string {
	if len(e.Data) > 0 && len(e.Data) <= 200 {
		return fmt.Sprintf("mcp error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("mcp error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *McpError with the same code, so
// errors.Is(err, &McpError{Code: CodeMethodNotFound}) works.
func (e *McpError) Is(target error) bool {
	t, ok := target.(*McpError)
	return ok && t.Code == e.Code
}

// McpHttpError is an HTTP failure of the Streamable HTTP leg: the status
// code and the WWW-Authenticate header, so 401 can be told from anything
// else. It unwraps to its McpError, so errors.As finds either type.
type McpHttpError struct {
	McpError
	Status          int
	WWWAuthenticate string
}

// Error formats the status, the message and the authentication challenge.
func (e *McpHttpError) Error() string {
	s := fmt.Sprintf("mcp: HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.WWWAuthenticate != "" {
		s += " (WWW-Authenticate: " + e.WWWAuthenticate + ")"
	}
	return s
}

// Unwrap returns the embedded McpError.
func (e *McpHttpError) Unwrap() error { return &e.McpError }

// Unauthorized reports whether the server answered 401.
func (e *McpHttpError) Unauthorized() bool { return e.Status == http.StatusUnauthorized }

// Err converts a wire error object into the Go error the client returns.
func (w *WireError) Err() *McpError {
	return &McpError{Code: w.Code, Message: w.Message, Data: w.Data}
}

// StringID returns a string request id.
func StringID(s string) ID { return ID{Str: s, IsStr: true, Set: true} }

// IntID returns an integer request id; IntID(0) is a real id.
func IntID(n int64) ID { return ID{Num: n, Set: true} }

// IsZero reports whether the id is absent (a notification).
func (id ID) IsZero() bool { return !id.Set }

// String renders the id as it appears on the wire.
func (id ID) String() string {
	return string(id.appendJSON(nil))
}

func (id ID) appendJSON(b []byte) []byte {
	switch {
	case !id.Set:
		return append(b, "null"...)
	case id.IsStr:
		return appendJSONString(b, id.Str)
	default:
		return strconv.AppendInt(b, id.Num, 10)
	}
}

// MarshalJSON writes a string id as a JSON string and an integer id as a
// number; an absent id is null.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendJSON(nil), nil }

// UnmarshalJSON reads a string or integer id; null leaves the id absent.
// Fractions, exponents, booleans, objects and arrays are refused.
func (id *ID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	*id = ID{}
	if len(data) == 0 {
		return errors.New("mcp: empty JSON-RPC id")
	}
	switch c := data[0]; {
	case c == 'n' && string(data) == "null":
		return nil
	case c == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("mcp: bad JSON-RPC id %s: %w", data, err)
		}
		*id = StringID(s)
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return fmt.Errorf("mcp: JSON-RPC id %s is not a string or an integer", data)
		}
		*id = IntID(n)
		return nil
	}
	return fmt.Errorf("mcp: JSON-RPC id %s is not a string or an integer", data)
}

// IsRequest reports whether the message is a request (method and id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.Set }

// IsNotification reports whether the message is a notification (method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.Set }

// IsResponse reports whether the message is a response (no method).
func (m *Message) IsResponse() bool { return m.Method == "" }

// MarshalJSON writes the message as one compact JSON-RPC 2.0 object with
// "jsonrpc":"2.0". The result is a single line (no raw newlines), fit for
// newline-delimited framing. A message that is neither request,
// notification nor response is refused.
func (m Message) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, 64+len(m.Params)+len(m.Result)))
}

// AppendJSON appends the message's JSON encoding (as MarshalJSON) to b.
func (m *Message) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0"`...)
	if m.ID.Set {
		b = append(b, `,"id":`...)
		b = m.ID.appendJSON(b)
	}
	var err error
	switch {
	case m.Method != "":
		if m.Result != nil || m.Error != nil {
			return nil, fmt.Errorf("mcp: message %q carries a result or error beside its method", m.Method)
		}
		b = append(b, `,"method":`...)
		b = appendJSONString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			if b, err = appendCompact(b, m.Params); err != nil {
				return nil, fmt.Errorf("mcp: params of %q: %w", m.Method, err)
			}
		}
	case m.Error != nil:
		if m.Result != nil {
			return nil, errors.New("mcp: response carries both result and error")
		}
		if !m.ID.Set {
			b = append(b, `,"id":null`...)
		}
		b = append(b, `,"error":{"code":`...)
		b = strconv.AppendInt(b, int64(m.Error.Code), 10)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, m.Error.Message)
		if len(m.Error.Data) > 0 {
			b = append(b, `,"data":`...)
			if b, err = appendCompact(b, m.Error.Data); err != nil {
				return nil, fmt.Errorf("mcp: error data: %w", err)
			}
		}
		b = append(b, '}')
	case m.Result != nil:
		if !m.ID.Set {
			return nil, errors.New("mcp: response without an id")
		}
		b = append(b, `,"result":`...)
		if b, err = appendCompact(b, m.Result); err != nil {
			return nil, fmt.Errorf("mcp: result: %w", err)
		}
	default:
		return nil, errors.New("mcp: message has no method, result or error")
	}
	return append(b, '}'), nil
}

// wireMessage is the JSON shape of a Message, used for decoding.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// UnmarshalJSON reads one JSON-RPC 2.0 message and refuses malformed ones:
// a missing or wrong "jsonrpc", an id that is not a string or integer, a
// method beside a result or error, a response with both or neither, an
// error object without an integer code, or a batch array.
func (m *Message) UnmarshalJSON(data []byte) error {
	*m = Message{}
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
			return errors.New("mcp: batch JSON-RPC arrays are not supported; send one message at a time")
		}
		return fmt.Errorf("mcp: malformed JSON-RPC message: %w", err)
	}
	if w.JSONRPC == nil || *w.JSONRPC != "2.0" {
		return errors.New(`mcp: malformed JSON-RPC message: "jsonrpc" must be "2.0"`)
	}
	if w.ID != nil {
		if err := m.ID.UnmarshalJSON(w.ID); err != nil {
			return err
		}
	}
	if w.Method != nil {
		if *w.Method == "" {
			return errors.New("mcp: malformed JSON-RPC message: empty method")
		}
		if w.Result != nil || w.Error != nil {
			return fmt.Errorf("mcp: malformed JSON-RPC message: method %q beside a result or error", *w.Method)
		}
		if w.ID != nil && !m.ID.Set {
			return fmt.Errorf("mcp: malformed JSON-RPC message: request %q with a null id", *w.Method)
		}
		m.Method = *w.Method
		if !isNull(w.Params) {
			m.Params = w.Params
		}
		return nil
	}
	hasErr := w.Error != nil && !isNull(w.Error)
	switch {
	case w.Result != nil && hasErr:
		return errors.New("mcp: malformed JSON-RPC response: both result and error")
	case w.Result == nil && !hasErr:
		return errors.New("mcp: malformed JSON-RPC message: no method, result or error")
	case hasErr:
		var we struct {
			Code    *int            `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(w.Error, &we); err != nil || we.Code == nil {
			return fmt.Errorf("mcp: malformed JSON-RPC error object %.200s: needs an integer code", w.Error)
		}
		m.Error = &WireError{Code: *we.Code, Message: we.Message, Data: we.Data}
	default:
		if !m.ID.Set {
			return errors.New("mcp: malformed JSON-RPC response: result without an id")
		}
		m.Result = w.Result
	}
	return nil
}

// DecodeMessage parses one JSON-RPC message (see Message.UnmarshalJSON).
func DecodeMessage(data []byte) (*Message, error) {
	m := new(Message)
	if err := m.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return m, nil
}

// EncodeMessage encodes one message (see Message.MarshalJSON) and refuses
// it when the encoding is larger than MCP_HTTP_MAX_BODY.
func EncodeMessage(m *Message) ([]byte, error) {
	b, err := m.AppendJSON(make([]byte, 0, 64+len(m.Params)+len(m.Result)))
	if err != nil {
		return nil, err
	}
	if len(b) > MCP_HTTP_MAX_BODY {
		return nil, fmt.Errorf("%w: %q is %d bytes, the limit is %d", ErrTooLarge, m.describe(), len(b), MCP_HTTP_MAX_BODY)
	}
	return b, nil
}

// describe names the message for errors: its method or its response id.
func (m *Message) describe() string {
	if m.Method != "" {
		return m.Method
	}
	return "response " + m.ID.String()
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// appendCompact appends raw JSON without insignificant whitespace, checking
// that it is valid.
func appendCompact(b []byte, raw json.RawMessage) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
