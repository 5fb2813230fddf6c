package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/mcp/oauth/oauthtest"
)

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// sdkServer serves a go-sdk server over Streamable HTTP on 127.0.0.1;
// withAdd gives it the add_numbers tool (without tools it declares no tools
// capability, as the suite's initialize mock).
func sdkServer(t *testing.T, withAdd bool) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1"}, nil)
	if withAdd {
		sdk.AddTool(s, &sdk.Tool{Name: "add_numbers", Description: "adds"},
			func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("sum ", in.A+in.B)}}}, nil, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// defaultsServer is the suite's elicitation-sep1034-client-defaults mock
// on the go-sdk: its tool elicits a form whose every field has a default,
// and says what came back.
func defaultsServer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "defaults", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "test_client_elicitation_defaults", Description: "elicits with defaults"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "accept with defaults", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
				"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},
				"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}},"required":[]}`)})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(b)}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestRun(t *testing.T) {
	withAdd := sdkServer(t, true)
	defaults := defaultsServer(t)
	bare := sdkServer(t, false)
	protected := oauthtest.New(t, oauthtest.Options{PRM: oauthtest.PRMPath}).URL()
	tests := []struct {
		name       string
		args       []string
		scenario   string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "tools_call", args: []string{withAdd}, scenario: "tools_call", wantStdout: "add_numbers: sum 5"},
		{name: "initialize without tools", args: []string{"--flag", bare}, scenario: "initialize", wantStdout: "refuses a server without tools"},
		{name: "initialize with tools", args: []string{withAdd}, scenario: "initialize", wantStdout: "initialize: peer 1, protocol 2025-11-25"},
		{name: "tools_call on a server without the tool", args: []string{bare}, scenario: "tools_call", wantCode: 1, wantStderr: "capabilities.tools"},
		{name: "sse-retry tool missing", args: []string{withAdd}, scenario: "sse-retry", wantCode: 1, wantStderr: `does not list the tool "test_reconnection"`},
		{name: "unknown scenario", args: []string{withAdd}, scenario: "other/basic", wantCode: 1, wantStderr: "unknown scenario"},
		{name: "auth logs in and calls", args: []string{protected}, scenario: "auth/metadata-var1", wantStdout: "whoami: scope: "},
		{name: "auth against a server without tools", args: []string{bare}, scenario: "auth/basic-cimd", wantCode: 1, wantStderr: "capabilities.tools"},
		{name: "elicitation defaults", args: []string{defaults}, scenario: "elicitation-sep1034-client-defaults",
			wantStdout: `accept {"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}`},
		{name: "no url", scenario: "initialize", wantCode: 2, wantStderr: "usage"},
		{name: "no scenario", args: []string{withAdd}, wantCode: 2, wantStderr: "usage"},
		{name: "bad url", args: []string{"localhost:1"}, scenario: "tools_call", wantCode: 1, wantStderr: "not an http"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, tc.args, tc.scenario, &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, tc.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
			}
		})
	}
}
