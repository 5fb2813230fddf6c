package main

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
)

// addWaitTools adds wait (reports one step of progress, then runs until
// the client cancels it) and cancels (what the server saw of the
// cancelled waits: it waits up to 20 s for one).
func addWaitTools(s *sdk.Server) {
	cancelled := make(chan string, 4)
	sdk.AddTool(s, &sdk.Tool{Name: "wait", Description: "reports progress, then waits until cancelled"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 3, Message: "waiting"})
			<-ctx.Done()
			cancelled <- "a cancelled wait"
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "cancels", Description: "says what the server saw cancelled"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			saw := "nothing cancelled"
			select {
			case saw = <-cancelled:
			case <-time.After(20 * time.Second):
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the server saw " + saw}}}, nil, nil
		})
}

// TestEscAndCtrlCCancelAnMCPCall: while a server's tool runs, showing its
// progress, Esc stops the turn and the server is told
// (notifications/cancelled ends its handler); so does Ctrl-C.
func TestEscAndCtrlCCancelAnMCPCall(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	s.typeKeys("\x1b[200~" + serverConfig(t, "waiter", map[string]string{mcpServerEnv: "1+wait"}) + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added waiter (stdio), enabled for profile default")
	s.expect("tai:default> ")
	for _, key := range []string{"\x1b", "\x03"} {
		srv.Push(llmtest.Calls(llmtest.Call("mcp_waiter_wait", `{}`)))
		s.typeKeys("wait for it\r")
		s.expect("[s]how everything: ")
		s.typeKeys("y")
		s.expect("███░░░░░░░ 1/3 waiting")
		s.typeKeys(key)
		s.expect("interrupted")
		s.expect("tai:default> ")
		srv.Push(llmtest.Calls(llmtest.Call("mcp_waiter_cancels", `{}`)))
		s.typeKeys("did it stop\r")
		s.expect("[s]how everything: ")
		s.typeKeys("y")
		s.expect("the tool said: the server saw a cancelled wait")
		s.expect("tai:default> ")
	}
	s.typeKeys("\x04")
	s.wait()
}
