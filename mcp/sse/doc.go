// Package sse reads text/event-stream bodies by the WHATWG rules: the
// parser the MCP HTTP transport uses for server streams and the model
// providers use for streamed answers.
//
// It is a leaf: it imports nothing of tai, so both mcp and engine/llm can
// use it without one depending on the other.
package sse
