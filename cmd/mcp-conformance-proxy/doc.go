// Command mcp-conformance-proxy lets the official MCP conformance suite
// (@modelcontextprotocol/conformance), whose server scenarios cannot send an
// Authorization header, test tai's MCP server: it listens on a loopback
// port and forwards every request to the server with
// "Authorization: Bearer $TAI_MCP_KEY" added, keeping the incoming Host and
// Origin (so the server's DNS-rebinding checks see what the suite sent) and
// flushing every write at once (so streams pass as they come).
//
//	TAI_MCP_KEY=… mcp-conformance-proxy -target http://127.0.0.1:8765/mcp
//
// It prints its own endpoint URL (same path as the target) on stdout when
// it is ready, and runs until SIGINT or SIGTERM. Exit status 2 on bad
// usage, 1 when it cannot listen.
//
// It imports nothing of tai; nothing imports it.
package main
