package mcp

import (
	"context"
	"encoding/json"
)

// ID is a JSON-RPC request id: a string or an integer. The zero ID (IsZero)
// means "no id" (a notification); the integer 0 is a real id.
type ID struct {
	// Str is the value of a string id.
	Str string
	// Num is the value of an integer id.
	Num int64
	// IsStr says the id is a string (Str), not an integer (Num).
	IsStr bool
	// Set says there is an id at all.
	Set bool
}

// Message is one JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method, no ID) or a response (ID and Result or Error).
type Message struct {
	// ID identifies a request and its response; unset for notifications.
	ID ID
	// Method names a request or notification; empty for responses.
	Method string
	// Params are a request's or notification's parameters, as sent.
	Params json.RawMessage
	// Result is a successful response's result, as sent.
	Result json.RawMessage
	// Error is a failed response's error.
	Error *WireError

	// related is the request whose reply stream carried this request or
	// notification, when the transport knows it (Streamable HTTP); never
	// on the wire. A pointer keeps Message in its allocation size class.
	related *ID
}

// WireError is the error object of a JSON-RPC response, and the Go error
// the client returns (wrapped) when a server answers one. Its Is compares
// codes: errors.Is(err, &WireError{Code: CodeMethodNotFound}).
type WireError struct {
	// Code is the JSON-RPC error code.
	Code int `json:"code"`
	// Message is a short description of the error.
	Message string `json:"message"`
	// Data is optional extra information, as sent.
	Data json.RawMessage `json:"data,omitempty"`
}

// Transport carries JSON-RPC messages between a Client and one server.
//
// Send may be called from several goroutines at once; Recv is called from
// one goroutine (the client's reader). Close may be called more than once and
// concurrently with Send and Recv, which then return ErrClosed (or the
// server's failure, such as *ProcessError for a dead stdio server).
type Transport interface {
	// Connect starts the leg: spawns the process, or prepares the HTTP client.
	Connect(ctx context.Context) error
	// Send delivers one message to the server.
	Send(ctx context.Context, msg *Message) error
	// Recv returns the next message from the server, blocking until one
	// arrives, ctx ends or the transport fails. For a reply it cannot
	// decode but whose id it can read, Recv returns a *MalformedReplyError
	// and the transport stays usable.
	Recv(ctx context.Context) (*Message, error)
	// Close ends the leg and releases every resource (processes, streams).
	Close() error
}

// ProtocolVersionSetter is implemented by transports that need the
// negotiated protocol version (Streamable HTTP sends it as the
// MCP-Protocol-Version header). The Client calls it after the handshake.
type ProtocolVersionSetter interface {
	SetProtocolVersion(v string)
}

// StderrSource is implemented by transports that keep a server's stderr
// (stdio); Client.Stderr reads it.
type StderrSource interface {
	Stderr() string
}
