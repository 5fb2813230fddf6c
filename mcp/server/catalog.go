package server

import (
	"context"
	"encoding/json"
	"errors"
)

// Tool is one served tool as tools/list shows it.
type Tool struct {
	// Name is what tools/call takes.
	Name string `json:"name"`
	// Description says what the tool does; never empty.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments, root type object.
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Catalog is what the server serves: the tool list and, for each MCP
// session, a Session holding that session's state. Implementations must be
// safe for concurrent use.
type Catalog interface {
	// Tools lists the served tools. It is called for every tools/list, so
	// the list may change at run time.
	Tools() []Tool
	// Open makes the state of a new MCP session; id is its Mcp-Session-Id
	// (random, 64 hex digits). An error refuses the initialize.
	Open(ctx context.Context, id string) (Session, error)
}

// Session is the state of one MCP session. The server makes at most one
// Call at a time per session, in the order requests arrive, and calls
// Close once, after the last Call returned, when the session ends (DELETE,
// idle expiry, shutdown).
type Session interface {
	// Call runs the named tool with args (a JSON object; nil when the
	// request had none) and returns the tools/call result object
	// ({content, isError?}): a tool that ran and failed is a result with
	// isError. An error wrapping ErrUnknownTool or ErrInvalidParams is
	// answered -32602; any other error -32603. ctx ends when the client
	// goes away, cancels the request, or the session or server closes.
	Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	// Close releases the session.
	Close()
}

// Errors a Session's Call returns for the protocol failures of a
// tools/call; the server answers both with -32602 and the error's message.
var (
	// ErrUnknownTool reports a tool name the catalog does not serve.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalidParams reports arguments that are not a JSON object.
	ErrInvalidParams = errors.New("invalid params")
)
