package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"tai/mcp"
	"tai/mcp/elicit"
	"tai/mcp/oauth"
)

// conformanceClientMetadata is the client ID metadata document URL the
// suite's basic-cimd scenario expects.
const conformanceClientMetadata = "https://conformance-test.local/client-metadata.json"

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
	case "elicitation-sep1034-client-defaults":
		tool = "test_client_elicitation_defaults"
	default:
		if !strings.HasPrefix(scenario, "auth/") {
			return fmt.Errorf("unknown scenario; this client plays initialize, tools_call, sse-retry, elicitation-sep1034-client-defaults and auth/*")
		}
	}
	c, err := connect(ctx, url, authorizer(url, stdout))
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
	if tool == "" && len(tools) > 0 {
		tool = tools[0].Name
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
func connect(ctx context.Context, url string, a mcp.Authorizer) (*mcp.Client, error) {
	entry := mcp.Entry{Name: "conformance", Transport: mcp.TransportHTTP, URL: url}
	c, err := mcp.Connect(ctx, entry, &mcp.ClientOptions{Version: "conformance", HTTP: &mcp.HTTPOptions{Authorizer: a},
		Requests: map[string]mcp.RequestHandler{mcp.MethodElicitationCreate: acceptDefaults}})
	if errors.Is(err, mcp.ErrNoTools) {
		return nil, fmt.Errorf("%w (%v)", errNoTools, err)
	}
	return c, err
}

// acceptDefaults answers a form as a person pressing Enter at every
// question does in the REPL: accepted, each field its default (SEP-1034),
// read and checked by package mcp/elicit as tai's own answers are. A form
// with a required field and no default, or a URL, is declined.
func acceptDefaults(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	req, err := elicit.ParseRequest(params)
	if err != nil {
		return nil, &mcp.WireError{Code: mcp.CodeInvalidParams, Message: err.Error()}
	}
	res := elicit.Result{Action: elicit.Decline}
	if req.Mode == elicit.ModeForm {
		if form, err := elicit.ParseForm(req.RequestedSchema); err == nil {
			if content, err := form.Content(nil); err == nil {
				res = elicit.Result{Action: elicit.Accept, Content: content}
			}
		}
	}
	return json.Marshal(res)
}

// authorizer logs in to the server at url as a person would, with a
// "browser" that follows the mock authorization server's redirects.
func authorizer(url string, say io.Writer) mcp.Authorizer {
	var creds struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &creds)
	return oauth.NewAuthorizer(oauth.Config{
		Server: "conformance", URL: url, Store: &oauth.MemoryStore{},
		ClientID: creds.ClientID, ClientSecret: creds.ClientSecret,
		ClientMetadataURL: conformanceClientMetadata,
		Timeout:           scenarioTimeout,
		Person: &oauth.Person{
			Say:  func(line string) { fmt.Fprintln(say, line) },
			Open: followRedirects,
		},
	})
}

// followRedirects is the headless browser: GET, following every redirect.
func followRedirects(rawURL string) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(rawURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
