package mcp

import (
	"context"
	"encoding/json"
)

// ID is a JSON-RPC request id: a string or an integer. The zero ID (IsZero)
// means "no id" (a notification); the integer 0 is a real id.
type ID struct {
	Str   string
	Num   int64
	IsStr bool
	Set   bool
}

// Message is one JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method, no ID) or a response (ID and Result or Error).
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *WireError
}

// WireError is the error object of a JSON-RPC response.
type WireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
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
	// arrives, ctx ends or the transport fails.
	Recv(ctx context.Context) (*Message, error)
	// Close ends the leg and releases every resource (processes, streams).
	Close() error
}
