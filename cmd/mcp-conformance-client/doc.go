// Command mcp-conformance-client runs tai's MCP client (package mcp) against
// the client scenarios of the official MCP conformance suite
// (@modelcontextprotocol/conformance). The suite starts a mock server per
// scenario, then runs this command with the server URL as the last argument
// and the scenario name in $MCP_CONFORMANCE_SCENARIO:
//
//	npx conformance client --command "mcp-conformance-client" --scenario tools_call
//
// Scenarios:
//
//	initialize  the handshake only; the mock declares no tools capability,
//	            which tai refuses by design, so that refusal (and only it)
//	            ends the scenario successfully
//	tools_call  list the tools, call add_numbers with numeric a and b
//	sse-retry   list the tools, call test_reconnection, whose answer comes
//	            only after the client resumes the dropped stream
//	elicitation-sep1034-client-defaults
//	            list the tools, call test_client_elicitation_defaults and
//	            answer its form as a person pressing Enter at every field:
//	            accepted, with each field's default (package mcp/elicit).
//	            The suite's mock (0.1.16) sends its elicitation/create on
//	            the standalone GET stream while the call runs; tai's
//	            client opens that stream and gives the request to the one
//	            call in flight (see mcp/README.md, Streamable HTTP)
//	auth/...    log in with package mcp/oauth (the "browser" follows the
//	            mock's redirects; pre-registered credentials come from
//	            $MCP_CONFORMANCE_CONTEXT; the client metadata document URL is
//	            the suite's), then list the tools and call the first
//
// It exits 0 when the scenario ran as expected, 1 otherwise (the reason on
// stderr), 2 on bad usage.
//
// It imports mcp, mcp/elicit and mcp/oauth only; nothing imports it.
package main
