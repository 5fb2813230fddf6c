// Package mcp is tai's client side of the Model Context Protocol
// (2025-11-25) and the pieces its server, its registry and its screens
// share: the JSON-RPC 2.0 wire (ID, Message, the Method… names and the
// Code… error codes), the MCP_* caps, the canonical server Entry, the two
// client transports (a stdio child process and Streamable HTTP), and the
// Client that runs the handshake, lists and calls tools and cancels what it
// gives up on. Beside them: tool-name checks and the helpers that show
// names and words from a server safely on a terminal.
//
//	c, err := mcp.Connect(ctx, mcp.Entry{Name: "everything", Transport: mcp.TransportStdio,
//		Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}},
//		&mcp.ClientOptions{Version: version})
//	if err != nil { ... } // names the server, and for stdio its last stderr lines
//	defer c.Close()
//	tools, err := c.Tools(ctx) // every page
//	res, err := c.Call(ctx, "echo", map[string]any{"message": "hi"})
//	// err: the server answered a JSON-RPC error (*WireError) or is gone;
//	// res.IsError: the tool ran and failed
//
// The Client is two layers. The connection (conn.go) sends requests,
// matches their responses, enforces deadlines, and answers what a server
// sends through a method table of handlers from ClientOptions, each
// handler given the context of the call in flight the message belongs to.
// The protocol over it (client.go) runs the handshake and declares the
// capabilities those handlers make; each feature has a file of its own
// (tools.go, prompts.go, …), and every paginated list goes through one
// helper (list.go).
//
// A server's JSON-RPC error comes back wrapping *WireError, an HTTP status
// other than success wrapping *MCPHTTPError. Authorization plugs in through
// an Authorizer (package mcp/oauth is one). The subpackages build on this
// one: mcp/config turns pasted configuration into entries, mcp/github reads
// server recipes from repositories, mcp/oauth logs in, mcp/server serves,
// mcp/sampling reads a server's sampling request and writes its answer.
// A server's log messages are kept by a ServerLog (logging.go).
//
// Nothing under mcp imports the engine, the Lua host or the vault. Package
// mcp imports the standard library, golang.org/x/net and golang.org/x/sys,
// leaves of its own that import nothing of tai: mcp/sse (the event-stream
// parser), mcp/httppolicy (the same-origin redirect policy, URL
// redaction, media types) and mcp/screen (text made visible, folded and
// laid out for a person), and the leaf vault/secret, which holds the
// rules about secrets every side shares.
package mcp
