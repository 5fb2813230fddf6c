// Package server is tai's MCP server: a Streamable HTTP handler for one
// endpoint (POST, GET, DELETE /mcp) in front of a Catalog of tools. It owns
// the protocol side only: Bearer authentication compared in constant time,
// Origin and Host validation (DNS-rebinding protection), the body cap, the
// JSON-RPC methods initialize, notifications/initialized, ping, tools/list,
// tools/call and logging/setLevel, the session table with its idle sweep,
// and the order of
// requests within a session. What the tools are and what a session holds
// is the Catalog's business (the engine implements it); nothing here knows
// about the engine, the Lua host or the vault.
//
//	srv, err := server.New(catalog, &server.Options{Key: key, Version: "1.0"})
//	if err != nil { ... } // a key shorter than MinKeyLength, say
//	ln, err := net.Listen("tcp", "127.0.0.1:8765")
//	if err != nil { ... }
//	err = srv.Serve(ctx, ln) // until ctx ends, then a graceful shutdown
//
// Every reply is one JSON object (application/json), except that of a
// tools/call whose client sent a _meta.progressToken and accepts
// text/event-stream: once the call reports progress (ProgressFrom), or
// fails while the session's log level (logging/setLevel) lets errors
// through, the reply becomes an event stream carrying those
// notifications and, last, the result. There are no server-initiated
// streams (GET) and no resumption. Requests of one session run one at a
// time, in the order they
// arrive; different sessions run concurrently, so a long tools/call in one
// never delays a ping in another.
package server
