package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MCP_PROTOCOL_VERSION is the protocol version the client sends in
// initialize and, after it, in the MCP-Protocol-Version HTTP header.
const MCP_PROTOCOL_VERSION = "2025-11-25"

// Caps from the MCP layer's specification. Times are durations, sizes are
// bytes, counts are plain integers.
const (
	// MCP_CONNECT_TIMEOUT bounds spawn plus handshake, per server.
	MCP_CONNECT_TIMEOUT = 20 * time.Second
	// MCP_INSTALL_TIMEOUT bounds the start of a server a launcher (npx,
	// uvx, docker run, …) fetches on its first start: while the launcher
	// keeps working, MCP_CONNECT_TIMEOUT counts from its last sign of
	// work, up to this in all. tai's own cap, beside the seed's.
	MCP_INSTALL_TIMEOUT = 300 * time.Second
	// MCP_CALL_TIMEOUT bounds one tools/call; then the client sends
	// notifications/cancelled and fails the call locally.
	MCP_CALL_TIMEOUT = 60 * time.Second
	// MCP_CALL_MAX_TOTAL bounds one tools/call however much progress the
	// server reports: each notifications/progress for the call gives it
	// MCP_CALL_TIMEOUT again, up to this in all. tai's own cap, beside
	// the seed's.
	MCP_CALL_MAX_TOTAL = 600 * time.Second
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
	// MethodElicitationCreate asks the client for input from its user.
	MethodElicitationCreate = "elicitation/create"
	// MethodRootsList asks the client for its roots.
	MethodRootsList = "roots/list"
	// MethodRootsListChanged tells the server the client's roots changed.
	MethodRootsListChanged = "notifications/roots/list_changed"
	// MethodElicitationComplete says a URL-mode elicitation is done.
	MethodElicitationComplete = "notifications/elicitation/complete"
	// MethodSamplingCreateMessage asks the client for a model's completion.
	MethodSamplingCreateMessage = "sampling/createMessage"
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
var ErrTooLarge = errors.New("mcp: message over tai's size cap")

// ErrNoTools reports a server whose initialize answer declares no
// capabilities.tools: tai has nothing to bridge from it, so the handshake is
// aborted.
var ErrNoTools = errors.New("mcp: server offers no tools (capabilities.tools missing from its initialize answer)")

// MalformedReplyError reports a reply to request ID that is not valid
// JSON-RPC (both result and error, a "jsonrpc" other than "2.0", an error
// without a code, …) though its id could be read. A transport's Recv
// returns it for such a reply and stays usable; the Client fails that one
// request with it at once, instead of waiting out the call's deadline, and
// other calls carry on.
type MalformedReplyError struct {
	// ID is the request the reply answers.
	ID ID
	// Err says what is wrong with the reply.
	Err error
}

// Error names the request and what is wrong with its reply.
func (e *MalformedReplyError) Error() string {
	return fmt.Sprintf("mcp: malformed reply to request %s: %s", e.ID, decodeReason(e.Err))
}

// decodeReason is a decode error's text without the "mcp: malformed
// JSON-RPC message: " prefix a MalformedReplyError already says.
func decodeReason(err error) string {
	s := err.Error()
	for _, p := range [...]string{"mcp: malformed JSON-RPC message: ", "mcp: malformed JSON-RPC response: ", "mcp: "} {
		if r, ok := strings.CutPrefix(s, p); ok {
			return r
		}
	}
	return s
}

// Unwrap returns the decode error.
func (e *MalformedReplyError) Unwrap() error { return e.Err }

// malformedReplyID returns the id of a message that failed to decode but is
// shaped like a response: one JSON object with an integer or string id and
// a result or error member, or no method. A malformed request (a method and
// no result or error) is not a reply: its id is the server's, not ours.
func malformedReplyID(data []byte) (ID, bool) {
	var id []byte
	var method, answer bool
	if err := eachMember(data, validating, func(key, val []byte) {
		switch string(key) {
		case "id":
			id = val
		case "method":
			method = true
		case "result", "error":
			answer = true
		}
	}); err != nil || id == nil || method && !answer {
		return ID{}, false
	}
	var v ID
	if err := v.UnmarshalJSON(id); err != nil || !v.Set {
		return ID{}, false
	}
	return v, true
}

// Error formats the code and message: a WireError a server answered is
// the Go error the client returns (a protocol failure, as opposed to a
// tool that ran and failed, a CallResult with IsError).
// A message that already begins with its code ("MCP error -32602: …",
// as the TypeScript SDK words them) does not say it twice.
func (e *WireError) Error() string {
	msg := e.Message
	if code := fmt.Sprintf("mcp error %d: ", e.Code); len(msg) >= len(code) && strings.EqualFold(msg[:len(code)], code) {
		msg = msg[len(code):]
	}
	if len(e.Data) > 0 && len(e.Data) <= 200 {
		return fmt.Sprintf("mcp error %d: %s (data: %s)", e.Code, msg, e.Data)
	}
	return fmt.Sprintf("mcp error %d: %s", e.Code, msg)
}

// Is reports whether target is a *WireError with the same code, so
// errors.Is(err, &WireError{Code: CodeMethodNotFound}) works.
func (e *WireError) Is(target error) bool {
	t, ok := target.(*WireError)
	return ok && t.Code == e.Code
}

// MCPHTTPError is an HTTP failure of the Streamable HTTP leg: the status
// code and the WWW-Authenticate header, so 401 can be told from anything
// else. It unwraps to its WireError, so errors.As finds either type.
type MCPHTTPError struct {
	WireError
	// Status is the HTTP status code.
	Status int
	// WWWAuthenticate is the response's WWW-Authenticate header, if any.
	WWWAuthenticate string
}

// Error formats the status, the message and the authentication challenge.
func (e *MCPHTTPError) Error() string {
	s := fmt.Sprintf("mcp: HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.WWWAuthenticate != "" {
		s += " (WWW-Authenticate: " + e.WWWAuthenticate + ")"
	}
	return s
}

// Unwrap returns the embedded WireError.
func (e *MCPHTTPError) Unwrap() error { return &e.WireError }

// Unauthorized reports whether the server answered 401.
func (e *MCPHTTPError) Unauthorized() bool { return e.Status == http.StatusUnauthorized }

// cancelledID reads the requestId of a notifications/cancelled's params.
func cancelledID(params json.RawMessage) (ID, bool) {
	var p struct {
		RequestID ID `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !p.RequestID.Set {
		return ID{}, false
	}
	return p.RequestID, true
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
		return AppendJSONString(b, id.Str)
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
		b = AppendJSONString(b, m.Method)
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
		b = AppendJSONString(b, m.Error.Message)
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

// UnmarshalJSON reads one JSON-RPC 2.0 message and refuses malformed ones:
// invalid JSON, a missing or wrong "jsonrpc", an id that is not a string or
// integer, a method beside a result or error, a response with both or
// neither, an error object without an integer code, or a batch array.
// Params and Result are copies, independent of data.
func (m *Message) UnmarshalJSON(data []byte) error {
	*m = Message{}
	i := skipWS(data, 0, nil)
	if i < len(data) && data[i] == '[' {
		return errors.New("mcp: batch JSON-RPC arrays are not supported; send one message at a time")
	}
	if i >= len(data) || data[i] != '{' {
		return fmt.Errorf("mcp: malformed JSON-RPC message %.60q: not a JSON object", data)
	}
	var jsonrpc, id, method, params, result, errv []byte
	err := eachMember(data[i:], validating, func(key, val []byte) {
		switch string(key) {
		case "jsonrpc":
			jsonrpc = val
		case "id":
			id = val
		case "method":
			method = val
		case "params":
			params = val
		case "result":
			result = val
		case "error":
			errv = val
		}
	})
	if err != nil {
		return fmt.Errorf("mcp: malformed JSON-RPC message: %w", err)
	}
	if s, ok := jsonString(jsonrpc); !ok || s != "2.0" {
		return errors.New(`mcp: malformed JSON-RPC message: "jsonrpc" must be "2.0"`)
	}
	if id != nil {
		if err := m.ID.UnmarshalJSON(id); err != nil {
			return err
		}
	}
	if method != nil {
		name, ok := jsonString(method)
		switch {
		case !ok:
			return errors.New("mcp: malformed JSON-RPC message: method is not a string")
		case name == "":
			return errors.New("mcp: malformed JSON-RPC message: empty method")
		case result != nil || errv != nil:
			return fmt.Errorf("mcp: malformed JSON-RPC message: method %q beside a result or error", name)
		case id != nil && !m.ID.Set:
			return fmt.Errorf("mcp: malformed JSON-RPC message: request %q with a null id", name)
		}
		m.Method = name
		if !isNull(params) {
			m.Params = bytes.Clone(params)
		}
		return nil
	}
	hasErr := errv != nil && !isNull(errv)
	switch {
	case result != nil && hasErr:
		return errors.New("mcp: malformed JSON-RPC response: both result and error")
	case result == nil && !hasErr:
		return errors.New("mcp: malformed JSON-RPC message: no method, result or error")
	case hasErr:
		var we struct {
			Code    *int            `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(errv, &we); err != nil || we.Code == nil {
			return fmt.Errorf("mcp: malformed JSON-RPC error object %.200s: needs an integer code", errv)
		}
		m.Error = &WireError{Code: *we.Code, Message: we.Message, Data: we.Data}
	default:
		if !m.ID.Set {
			return errors.New("mcp: malformed JSON-RPC response: result without an id")
		}
		m.Result = bytes.Clone(result)
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
	var sawWS bool
	end, err := skipValue(raw, 0, &sawWS)
	if err == nil && skipWS(raw, end, &sawWS) != len(raw) {
		err = fmt.Errorf("invalid JSON: data after the value at offset %d", end)
	}
	if err != nil {
		return nil, err
	}
	if !sawWS {
		return append(b, raw...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var errJSONEnd = errors.New("invalid JSON: unexpected end of input")

// skipWS returns the index of the first non-whitespace byte at or after i;
// it sets *saw when it skipped any.
func skipWS(d []byte, i int, saw *bool) int {
	j := i
	for j < len(d) && (d[j] == ' ' || d[j] == '\t' || d[j] == '\n' || d[j] == '\r') {
		j++
	}
	if j != i && saw != nil {
		*saw = true
	}
	return j
}

// skipValue validates the JSON value starting at or after d[i] (leading
// whitespace allowed) and returns the index just past it. Whitespace seen
// outside strings sets *saw. It keeps the open containers in a stack of
// its own rather than recursing, so any nesting the input's length allows
// costs one pass and one byte per level: a server's deeply nested schema
// is judged by what reads it, not refused with the whole message.
func skipValue(d []byte, i int, saw *bool) (int, error) {
	var open []byte // '{' or '[' per open container
	var err error
	for {
		// A value starts at i.
		i = skipWS(d, i, saw)
		if i >= len(d) {
			return 0, errJSONEnd
		}
		switch c := d[i]; c {
		case '{', '[':
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			i = skipWS(d, i+1, saw)
			if i < len(d) && d[i] == end {
				i++
				break
			}
			open = append(open, c)
			if c == '{' {
				if i, err = skipMemberName(d, i, saw); err != nil {
					return 0, err
				}
			}
			continue
		case '"':
			i, err = skipString(d, i)
		case 't':
			i, err = skipLiteral(d, i, "true")
		case 'f':
			i, err = skipLiteral(d, i, "false")
		case 'n':
			i, err = skipLiteral(d, i, "null")
		default:
			if c != '-' && (c < '0' || c > '9') {
				return 0, fmt.Errorf("invalid JSON: unexpected %q at offset %d", c, i)
			}
			i, err = skipNumber(d, i)
		}
		if err != nil {
			return 0, err
		}
		// A value ended at i: close containers until one goes on.
		for {
			if len(open) == 0 {
				return i, nil
			}
			i = skipWS(d, i, saw)
			if i >= len(d) {
				return 0, errJSONEnd
			}
			top := open[len(open)-1]
			end := byte('}')
			if top == '[' {
				end = ']'
			}
			if d[i] == end {
				i++
				open = open[:len(open)-1]
				continue
			}
			if d[i] != ',' {
				return 0, fmt.Errorf("invalid JSON: expected ',' or '%c' at offset %d", end, i)
			}
			i++
			if top == '{' {
				if i, err = skipMemberName(d, i, saw); err != nil {
					return 0, err
				}
			}
			break
		}
	}
}

// skipMemberName validates a member name and its colon at or after d[i]
// and returns the index just past the colon.
func skipMemberName(d []byte, i int, saw *bool) (int, error) {
	i = skipWS(d, i, saw)
	if i >= len(d) || d[i] != '"' {
		return 0, fmt.Errorf("invalid JSON: expected a member name at offset %d", i)
	}
	i, err := skipString(d, i)
	if err != nil {
		return 0, err
	}
	i = skipWS(d, i, saw)
	if i >= len(d) || d[i] != ':' {
		return 0, fmt.Errorf("invalid JSON: expected ':' at offset %d", i)
	}
	return i + 1, nil
}

func skipLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return 0, fmt.Errorf("invalid JSON: bad literal at offset %d", i)
	}
	return i + len(lit), nil
}

// skipString validates the string starting at d[i] == '"'.
func skipString(d []byte, i int) (int, error) {
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return 0, fmt.Errorf("invalid JSON: control character in string at offset %d", i)
		case c == '\\':
			i++
			if i >= len(d) {
				return 0, errJSONEnd
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d)-i < 5 || !isHex(d[i+1]) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) {
					return 0, fmt.Errorf("invalid JSON: bad \\u escape at offset %d", i)
				}
				i += 4
			default:
				return 0, fmt.Errorf("invalid JSON: bad escape at offset %d", i)
			}
		}
	}
	return 0, errJSONEnd
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipNumber validates the number starting at d[i].
func skipNumber(d []byte, i int) (int, error) {
	start := i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return 0, fmt.Errorf("invalid JSON: bad number at offset %d", start)
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return 0, fmt.Errorf("invalid JSON: bad number at offset %d", start)
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return 0, fmt.Errorf("invalid JSON: bad number at offset %d", start)
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, nil
}

// scanMode says whether a scan validates what it skips.
type scanMode bool

const (
	// validating checks every skipped value against the JSON grammar.
	validating scanMode = false
	// trusted only finds the extent of values already validated.
	trusted scanMode = true
)

// skip returns the index just past the value at or after d[i].
func (mode scanMode) skip(d []byte, i int) (int, error) {
	if mode == validating {
		return skipValue(d, i, nil)
	}
	return skipTrusted(d, i)
}

// skipTrusted finds the end of the value at or after d[i] without checking
// its grammar beyond what framing needs (strings and nesting).
func skipTrusted(d []byte, i int) (int, error) {
	i = skipWS(d, i, nil)
	if i >= len(d) {
		return 0, errJSONEnd
	}
	depth := 0
	for ; i < len(d); i++ {
		switch d[i] {
		case '"':
			for i++; i < len(d) && d[i] != '"'; i++ {
				if d[i] == '\\' {
					i++
				}
			}
			if i >= len(d) {
				return 0, errJSONEnd
			}
			if depth == 0 {
				return i + 1, nil
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				if depth < 0 {
					return i, nil // the container holding this scalar ends here
				}
				return i + 1, nil
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i, nil
			}
		}
	}
	if depth != 0 {
		return 0, errJSONEnd
	}
	return i, nil
}

// eachMember calls fn with the name and raw value of every member of the
// JSON object obj (which starts with '{'); obj must hold nothing but the
// object (whitespace aside). The values are subslices of obj. In trusted
// mode obj must already be valid JSON.
func eachMember(obj []byte, mode scanMode, fn func(key, val []byte)) error {
	i := skipWS(obj, 0, nil)
	if i >= len(obj) || obj[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipWS(obj, i+1, nil)
	if i < len(obj) && obj[i] == '}' {
		i++
	} else {
		for {
			i = skipWS(obj, i, nil)
			if i >= len(obj) || obj[i] != '"' {
				return fmt.Errorf("invalid JSON: expected a member name at offset %d", i)
			}
			ks := i
			var err error
			if i, err = skipString(obj, i); err != nil {
				return err
			}
			key := obj[ks+1 : i-1]
			if bytes.IndexByte(key, '\\') >= 0 {
				var k string
				if err := json.Unmarshal(obj[ks:i], &k); err != nil {
					return err
				}
				key = []byte(k)
			}
			i = skipWS(obj, i, nil)
			if i >= len(obj) || obj[i] != ':' {
				return fmt.Errorf("invalid JSON: expected ':' at offset %d", i)
			}
			vs := skipWS(obj, i+1, nil)
			if i, err = mode.skip(obj, vs); err != nil {
				return err
			}
			fn(key, obj[vs:i])
			i = skipWS(obj, i, nil)
			if i >= len(obj) {
				return errJSONEnd
			}
			if obj[i] == '}' {
				i++
				break
			}
			if obj[i] != ',' {
				return fmt.Errorf("invalid JSON: expected ',' or '}' at offset %d", i)
			}
			i++
		}
	}
	if skipWS(obj, i, nil) != len(obj) {
		return fmt.Errorf("invalid JSON: data after the object at offset %d", i)
	}
	return nil
}

// eachElement calls fn with every element of the JSON array arr (which
// starts with '['). The elements are subslices of arr. In trusted mode arr
// must already be valid JSON.
func eachElement(arr []byte, mode scanMode, fn func(val []byte)) error {
	i := skipWS(arr, 0, nil)
	if i >= len(arr) || arr[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipWS(arr, i+1, nil)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for {
		vs := skipWS(arr, i, nil)
		var err error
		if i, err = mode.skip(arr, vs); err != nil {
			return err
		}
		fn(arr[vs:i])
		i = skipWS(arr, i, nil)
		if i >= len(arr) {
			return errJSONEnd
		}
		if arr[i] == ']' {
			return nil
		}
		if arr[i] != ',' {
			return fmt.Errorf("invalid JSON: expected ',' or ']' at offset %d", i)
		}
		i++
	}
}

// jsonString returns the value of a raw JSON string; ok is false when raw
// is not a string.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	// The fast path only for escape-free UTF-8: invalid bytes decode to
	// U+FFFD, as encoding/json does, so a name decoded here is the name
	// tai sends back.
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
