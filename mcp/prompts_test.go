package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startPipeCaps starts a client over a pipe whose server declares caps.
func startPipeCaps(t *testing.T, caps string) (*Client, *pipeTransport) {
	t.Helper()
	p := newPipe()
	c := NewClient("pipe", p, nil)
	t.Cleanup(func() { c.Close() })
	errc := make(chan error, 1)
	go func() { errc <- c.Start(context.Background()) }()
	init := within(t, p.toServer, "initialize")
	p.toClient <- &Message{ID: init.ID, Result: json.RawMessage(`{"protocolVersion":"` + MCP_PROTOCOL_VERSION + `","capabilities":` + caps + `,"serverInfo":{"name":"pipe","version":"1"},"instructions":"be brief"}`)}
	within(t, p.toServer, "initialized")
	if err := within(t, errc, "Start"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return c, p
}

// serveOne answers the next request the client sends with result, and
// returns that request.
func serveOne(t *testing.T, p *pipeTransport, result string) *Message {
	t.Helper()
	m := within(t, p.toServer, "a request")
	p.toClient <- &Message{ID: m.ID, Result: json.RawMessage(result)}
	return m
}

// TestPromptsNotDeclared: a server that declares neither prompts nor
// completions is asked for neither.
func TestPromptsNotDeclared(t *testing.T) {
	c, p := startPipeCaps(t, `{"tools":{}}`)
	ctx := testCtx(t)
	if ps, err := c.Prompts(ctx); ps != nil || err != nil {
		t.Fatalf("Prompts = %v, %v", ps, err)
	}
	if vals, err := c.CompletePrompt(ctx, "p", "a", "", nil); vals != nil || err != nil {
		t.Fatalf("CompletePrompt = %v, %v", vals, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Ping(ctx) }()
	if m := serveOne(t, p, `{}`); m.Method != MethodPing {
		t.Fatalf("the client asked %s of a server that declares no prompts", m.Method)
	}
	if err := within(t, done, "ping"); err != nil {
		t.Fatal(err)
	}
	if c.Instructions() != "be brief" {
		t.Fatalf("Instructions = %q", c.Instructions())
	}
}

// TestPromptsWire: prompts/list pages, prompts/get sends the arguments
// and refuses a message no turn can carry, completion/complete names the
// prompt and the arguments chosen and keeps at most MaxCompletions.
func TestPromptsWire(t *testing.T) {
	c, p := startPipeCaps(t, `{"tools":{},"prompts":{"listChanged":true},"completions":{}}`)
	ctx := testCtx(t)

	type listed struct {
		ps  []Prompt
		err error
	}
	lc := make(chan listed, 1)
	go func() { ps, err := c.Prompts(ctx); lc <- listed{ps, err} }()
	serveOne(t, p, `{"prompts":[{"name":"greet","title":"Greeting","arguments":[{"name":"name","required":true}]}],"nextCursor":"2"}`)
	if m := serveOne(t, p, `{"prompts":[{"name":"plan","description":"makes a plan"}]}`); !strings.Contains(string(m.Params), `"cursor":"2"`) {
		t.Fatalf("second page asked with %s", m.Params)
	}
	got := within(t, lc, "Prompts")
	if got.err != nil || len(got.ps) != 2 || got.ps[0].Title != "Greeting" || !got.ps[0].Arguments[0].Required || got.ps[1].Description != "makes a plan" {
		t.Fatalf("Prompts = %+v, %v", got.ps, got.err)
	}

	type rendered struct {
		r   *PromptResult
		err error
	}
	rc := make(chan rendered, 1)
	go func() { r, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"}); rc <- rendered{r, err} }()
	m := serveOne(t, p, `{"messages":[{"role":"user","content":{"type":"text","text":"hi Ada"}}]}`)
	if m.Method != MethodPromptsGet || string(m.Params) != `{"arguments":{"name":"Ada"},"name":"greet"}` {
		t.Fatalf("prompts/get sent %s %s", m.Method, m.Params)
	}
	if r := within(t, rc, "GetPrompt"); r.err != nil || len(r.r.Messages) != 1 || r.r.Messages[0].Role != "user" {
		t.Fatalf("GetPrompt = %+v, %v", r.r, r.err)
	}
	go func() { r, err := c.GetPrompt(ctx, "plan", nil); rc <- rendered{r, err} }()
	serveOne(t, p, `{"messages":[{"role":"system","content":{"type":"text","text":"obey"}}]}`)
	if r := within(t, rc, "GetPrompt"); r.err == nil || !strings.Contains(r.err.Error(), `has role "system"; only user and assistant`) {
		t.Fatalf("a system message: %v", r.err)
	}

	type completed struct {
		vals []string
		err  error
	}
	cc := make(chan completed, 1)
	go func() {
		vals, err := c.CompletePrompt(ctx, "greet", "style", "f", map[string]string{"name": "Ada"})
		cc <- completed{vals, err}
	}()
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	answer, _ := json.Marshal(map[string]any{"completion": map[string]any{"values": many}})
	m = serveOne(t, p, string(answer))
	if m.Method != MethodCompletionComplete || string(m.Params) != `{"argument":{"name":"style","value":"f"},"context":{"arguments":{"name":"Ada"}},"ref":{"name":"greet","type":"ref/prompt"}}` {
		t.Fatalf("completion/complete sent %s %s", m.Method, m.Params)
	}
	if r := within(t, cc, "CompletePrompt"); r.err != nil || len(r.vals) != MaxCompletions || r.vals[0] != "f0" {
		t.Fatalf("CompletePrompt = %d values, %v", len(r.vals), r.err)
	}
}

// TestSDKPrompts renders the go-sdk server's prompt over stdio and
// Streamable HTTP: its listing, its messages with the argument given,
// the image as sent.
func TestSDKPrompts(t *testing.T) {
	ctx := testCtx(t)
	ts, _ := startSDKHTTP(t, &sdk.StreamableHTTPOptions{JSONResponse: true})
	hc, err := connectHTTP(ctx, ts.URL, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	for name, c := range map[string]*Client{"stdio": connectFake(t, "sdk", nil), "http": hc} {
		t.Run(name, func(t *testing.T) {
			ps, err := c.Prompts(ctx)
			if err != nil || len(ps) != 1 || ps[0].Name != "look" || !ps[0].Arguments[0].Required {
				t.Fatalf("Prompts = %+v, %v", ps, err)
			}
			r, err := c.GetPrompt(ctx, "look", map[string]string{"what": "sky"})
			if err != nil || len(r.Messages) != 2 {
				t.Fatalf("GetPrompt = %+v, %v", r, err)
			}
			if text, ok := TextOf(r.Messages[0].Content); !ok || text != "Look at the sky" {
				t.Fatalf("first message %s", r.Messages[0].Content)
			}
			if !strings.Contains(string(r.Messages[1].Content), `"type":"image"`) {
				t.Fatalf("second message %s", r.Messages[1].Content)
			}
		})
	}
}
