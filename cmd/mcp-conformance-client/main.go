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
//
// It exits 0 when the scenario ran as expected, 1 otherwise (the reason on
// stderr), 2 on bad usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"tai/mcp"
)

// scenarioTimeout stays under the suite's 30 s per scenario.
const scenarioTimeout = 25 * time.Second

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Stdout, os.Stderr))
}

// run plays one scenario against the server at the last argument.
func run(ctx context.Context, args []string, scenario string, stdout, stderr io.Writer) int {
	if len(args) == 0 || scenario == "" {
		fmt.Fprintln(stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME mcp-conformance-client [ARGS...] SERVER_URL")
		return 2
	}
	url := args[len(args)-1]
	ctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
	defer cancel()
	if err := play(ctx, scenario, url, stdout); err != nil {
		fmt.Fprintf(stderr, "scenario %s: %v\n", scenario, err)
		return 1
	}
	return 0
}

// errNoTools reports a server whose initialize answer lacked
// capabilities.tools, which the client refuses.
var errNoTools = errors.New("the server declares no tools capability")

func play(ctx context.Context, scenario, url string, stdout io.Writer) error {
	var tool string
	var args map[string]any
	switch scenario {
	case "initialize":
	case "tools_call":
		tool, args = "add_numbers", map[string]any{"a": 2, "b": 3}
	case "sse-retry":
		tool = "test_reconnection"
	default:
		return fmt.Errorf("unknown scenario; this client plays initialize, tools_call and sse-retry")
	}
	c, err := connect(ctx, url)
	if scenario == "initialize" {
		if errors.Is(err, errNoTools) {
			fmt.Fprintln(stdout, "initialize: handshake answered; tai refuses a server without tools, as designed")
			return nil
		}
		if err == nil {
			fmt.Fprintf(stdout, "initialize: %s %s, protocol %s\n", c.ServerInfo().Name, c.ServerInfo().Version, c.ProtocolVersion())
			return c.Close()
		}
		return err
	}
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, t := range tools {
		found = found || t.Name == tool
	}
	if !found {
		return fmt.Errorf("the server does not list the tool %q", tool)
	}
	res, err := c.Call(ctx, tool, args)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %s failed: %s", tool, res.Text())
	}
	fmt.Fprintf(stdout, "%s: %s\n", tool, res.Text())
	return nil
}

// connect opens a client session over Streamable HTTP. A handshake that
// fails only because the answer lacks capabilities.tools (mcp.ErrNoTools) is
// reported as errNoTools.
func connect(ctx context.Context, url string) (*mcp.Client, error) {
	entry := mcp.Entry{Name: "conformance", Transport: mcp.TransportHTTP, URL: url}
	c, err := mcp.Connect(ctx, entry, &mcp.ClientOptions{Version: "conformance"})
	if errors.Is(err, mcp.ErrNoTools) {
		return nil, fmt.Errorf("%w (%v)", errNoTools, err)
	}
	return c, err
}
