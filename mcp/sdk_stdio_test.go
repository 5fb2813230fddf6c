package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkPageSize makes the go-sdk server page its tool list, so the client has
// to follow nextCursor.
const sdkPageSize = 2

type sdkEchoIn struct {
	Text string `json:"text"`
}

type sdkAddIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// newSDKServer builds the go-sdk server the tests and benchmarks talk to:
// echo, add, fail (a tool error), image, and filler tools for pagination;
// resources as addSDKResources makes them.
func newSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-peer", Version: "1.8.0"}, &sdk.ServerOptions{PageSize: sdkPageSize})
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *sdk.CallToolRequest, in sdkEchoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "adds a and b"},
		func(_ context.Context, _ *sdk.CallToolRequest, in sdkAddIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "always fails"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("the tool ran and failed")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "returns a PNG"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"}}}, nil, nil
		})
	addSDKResources(s)
	s.AddPrompt(&sdk.Prompt{Name: "look", Description: "looks at a picture", Arguments: []*sdk.PromptArgument{{Name: "what", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Look at the " + req.Params.Arguments["what"]}},
				{Role: "user", Content: &sdk.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"}},
			}}, nil
		})
	for i := range 5 {
		sdk.AddTool(s, &sdk.Tool{Name: fmt.Sprintf("filler_%d", i), Description: "pads the list"},
			func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
			})
	}
	return s
}

// runSDKServer serves the go-sdk server over this process's stdio.
func runSDKServer() int {
	if err := newSDKServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "sdk server:", err)
		return 1
	}
	return 0
}

func TestSDKStdioServer(t *testing.T) {
	c := connectFake(t, "sdk", &ClientOptions{Version: "test"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if got := c.ProtocolVersion(); got != MCP_PROTOCOL_VERSION {
		t.Errorf("ProtocolVersion = %q, want %q", got, MCP_PROTOCOL_VERSION)
	}
	if got := c.ServerInfo().Name; got != "go-sdk-peer" {
		t.Errorf("ServerInfo().Name = %q", got)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}

	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if len(tl.InputSchema) == 0 || len(tl.Raw) == 0 {
			t.Errorf("tool %s lost its schema or raw form", tl.Name)
		}
	}
	if len(tools) != 10 {
		t.Fatalf("Tools over pages of %d: got %d (%v), want 10", sdkPageSize, len(tools), names)
	}

	tests := []struct {
		name     string
		tool     string
		args     any
		wantText string
		isError  bool
		wantCode int // JSON-RPC error code; 0 means a result
	}{
		{name: "echo map args", tool: "echo", args: map[string]any{"text": "héllo\nworld"}, wantText: "héllo\nworld"},
		{name: "add raw args", tool: "add", args: json.RawMessage(`{"a": 2, "b": 40}`), wantText: "42"},
		{name: "tool error is a result", tool: "fail", args: nil, isError: true, wantText: "the tool ran and failed"},
		{name: "unknown tool is a protocol error", tool: "nope", args: map[string]any{}, wantCode: CodeInvalidParams},
		{name: "bad arguments", tool: "add", args: map[string]any{"a": "two"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Call(ctx, tc.tool, tc.args)
			if tc.wantCode != 0 {
				var me *WireError
				if !errors.As(err, &me) || me.Code != tc.wantCode {
					t.Fatalf("Call err = %v, want WireError %d", err, tc.wantCode)
				}
				if !strings.Contains(err.Error(), `"fake-sdk"`) {
					t.Errorf("error %q does not name the server", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v (%s)", res.IsError, tc.isError, res.Raw)
			}
			if tc.wantText != "" && !strings.Contains(res.Text(), tc.wantText) {
				t.Errorf("Text() = %q, want %q", res.Text(), tc.wantText)
			}
		})
	}

	res, err := c.Call(ctx, "image", nil)
	if err != nil {
		t.Fatal(err)
	}
	var img struct{ Type, Data, MimeType string }
	if len(res.Content) != 1 || json.Unmarshal(res.Content[0], &img) != nil ||
		img.Type != "image" || img.MimeType != "image/png" || img.Data != "iVBORw==" {
		t.Errorf("image content = %s", res.Content)
	}
}
