package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callKey carries a test's mark on the context of a call, for a handler
// to find.
type callKey struct{}

// markOf returns the mark a handler's context carries ("" when none).
func markOf(ctx context.Context) string {
	s, _ := ctx.Value(callKey{}).(string)
	return s
}

// within receives one value from ch, failing the test after 10 seconds.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
		panic("unreachable")
	}
}

// pipeTransport is an in-memory Transport: the test plays the server,
// reading what the client sends from toServer and writing to toClient.
type pipeTransport struct {
	toServer chan *Message
	toClient chan *Message
	done     chan struct{}
	once     sync.Once
}

func newPipe() *pipeTransport {
	return &pipeTransport{toServer: make(chan *Message, 64), toClient: make(chan *Message, 64), done: make(chan struct{})}
}

func (p *pipeTransport) Connect(context.Context) error { return nil }

func (p *pipeTransport) Send(ctx context.Context, m *Message) error {
	select {
	case p.toServer <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return ErrClosed
	}
}

func (p *pipeTransport) Recv(ctx context.Context) (*Message, error) {
	select {
	case m := <-p.toClient:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, ErrClosed
	}
}

func (p *pipeTransport) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// startPipe starts a client over a pipe, answering its handshake, and
// returns the client and the initialize request it sent.
func startPipe(t *testing.T, opts *ClientOptions) (*Client, *pipeTransport, *Message) {
	t.Helper()
	p := newPipe()
	c := NewClient("pipe", p, opts)
	t.Cleanup(func() { c.Close() })
	errc := make(chan error, 1)
	go func() { errc <- c.Start(context.Background()) }()
	init := within(t, p.toServer, "initialize")
	p.toClient <- &Message{ID: init.ID, Result: json.RawMessage(`{"protocolVersion":"` + MCP_PROTOCOL_VERSION + `","capabilities":{"tools":{}},"serverInfo":{"name":"pipe","version":"1"}}`)}
	if m := within(t, p.toServer, "initialized"); m.Method != MethodInitialized {
		t.Fatalf("after initialize the client sent %q", m.Method)
	}
	if err := within(t, errc, "Start"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return c, p, init
}

// TestInitializeCapabilities: the capabilities tai declares follow from the
// handlers in the method table; with none, initialize's params are the
// bytes they always were.
func TestInitializeCapabilities(t *testing.T) {
	answer := func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	tests := []struct {
		name     string
		requests map[string]RequestHandler
		want     string
	}{
		{name: "no handlers", want: `{"capabilities":{},"clientInfo":{"name":"tai","version":"dev"},"protocolVersion":"2025-11-25"}`},
		{name: "a handler of no client feature", requests: map[string]RequestHandler{"x/y": answer},
			want: `{"capabilities":{},"clientInfo":{"name":"tai","version":"dev"},"protocolVersion":"2025-11-25"}`},
		{name: "elicitation", requests: map[string]RequestHandler{MethodElicitationCreate: answer},
			want: `{"capabilities":{"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"tai","version":"dev"},"protocolVersion":"2025-11-25"}`},
		{name: "all three", requests: map[string]RequestHandler{MethodElicitationCreate: answer, MethodRootsList: answer, MethodSamplingCreateMessage: answer},
			want: `{"capabilities":{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{"tools":{}}},"clientInfo":{"name":"tai","version":"dev"},"protocolVersion":"2025-11-25"}`},
		{name: "a nil handler declares nothing", requests: map[string]RequestHandler{MethodRootsList: nil},
			want: `{"capabilities":{},"clientInfo":{"name":"tai","version":"dev"},"protocolVersion":"2025-11-25"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, init := startPipe(t, &ClientOptions{Requests: tc.requests})
			if string(init.Params) != tc.want {
				t.Fatalf("initialize params = %s\nwant %s", init.Params, tc.want)
			}
		})
	}
}

// TestMethodTableCallContext plays a server over an in-memory pipe: what it
// sends reaches the handler of its method with the context of the call in
// flight it belongs to, and that context ends with the call or when the
// server cancels its request.
func TestMethodTableCallContext(t *testing.T) {
	type seen struct {
		method, mark string
		err          error
	}
	handled := make(chan seen, 16)
	record := func(method string) RequestHandler {
		return func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			handled <- seen{method: method, mark: markOf(ctx)}
			return json.RawMessage(`{"roots":[]}`), nil
		}
	}
	block := func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		handled <- seen{method: MethodElicitationCreate, mark: markOf(ctx), err: ctx.Err()}
		return nil, ctx.Err()
	}
	c, p, _ := startPipe(t, &ClientOptions{
		Requests: map[string]RequestHandler{MethodRootsList: record(MethodRootsList), MethodElicitationCreate: block},
		Notifications: map[string]NotificationHandler{MethodProgress: func(ctx context.Context, _ json.RawMessage) {
			handled <- seen{method: MethodProgress, mark: markOf(ctx)}
		}},
	})

	// Two calls in flight, each with its mark.
	type outcome struct {
		text string
		err  error
	}
	results := map[string]chan outcome{"A": make(chan outcome, 1), "B": make(chan outcome, 1)}
	for mark, ch := range results {
		go func() {
			ctx := context.WithValue(context.Background(), callKey{}, mark)
			res, err := c.Call(ctx, "tool"+mark, nil)
			if err != nil {
				ch <- outcome{err: err}
				return
			}
			ch <- outcome{text: res.Text()}
		}()
	}
	ids := map[string]ID{}
	for range 2 {
		m := within(t, p.toServer, "tools/call")
		name, _, err := ParseToolCall(m.Params)
		if m.Method != MethodToolsCall || err != nil {
			t.Fatalf("got %s %s, want tools/call", m.Method, m.Params)
		}
		if !strings.Contains(string(m.Params), `"progressToken":`+m.ID.String()) {
			t.Errorf("tools/call with a progress handler does not ask for progress: %s", m.Params)
		}
		ids[strings.TrimPrefix(name, "tool")] = m.ID
	}
	serverAsks := func(id, method string) {
		p.toClient <- &Message{ID: StringID(id), Method: method, Params: json.RawMessage(`{}`)}
	}
	answerOf := func(id string) *Message {
		t.Helper()
		for {
			m := within(t, p.toServer, "the answer to "+id)
			if m.ID == StringID(id) && m.IsResponse() {
				return m
			}
		}
	}
	reply := func(mark string) {
		t.Helper()
		p.toClient <- &Message{ID: ids[mark], Result: json.RawMessage(`{"content":[{"type":"text","text":"done ` + mark + `"}]}`)}
		if o := within(t, results[mark], "call "+mark); o.err != nil || o.text != "done "+mark {
			t.Fatalf("call %s = %q, %v", mark, o.text, o.err)
		}
	}

	// With two tools/call in flight on a pipe, a request belongs to neither.
	serverAsks("s1", MethodRootsList)
	if got := within(t, handled, "roots/list handled"); got.mark != "" {
		t.Errorf("with two calls in flight the request went to call %q", got.mark)
	}
	if m := answerOf("s1"); m.Error != nil || string(m.Result) != `{"roots":[]}` {
		t.Errorf("answer to s1 = %+v", m)
	}
	// Progress belongs to the call its token names.
	p.toClient <- &Message{Method: MethodProgress, Params: json.RawMessage(`{"progressToken":` + ids["B"].String() + `,"progress":1}`)}
	if got := within(t, handled, "progress"); got.mark != "B" {
		t.Errorf("progress for call B went to %q", got.mark)
	}
	reply("A")
	// Now one call is in flight: a request belongs to it.
	serverAsks("s2", MethodRootsList)
	if got := within(t, handled, "roots/list handled"); got.mark != "B" {
		t.Errorf("with call B alone in flight the request went to %q", got.mark)
	}
	answerOf("s2")
	// The server cancelling its request ends the handler's context.
	serverAsks("s3", MethodElicitationCreate)
	p.toClient <- &Message{Method: MethodCancelled, Params: json.RawMessage(`{"requestId":"s3","reason":"changed its mind"}`)}
	if got := within(t, handled, "elicitation ended"); got.mark != "B" || !errors.Is(got.err, context.Canceled) {
		t.Errorf("cancelled request: handler saw mark %q, err %v", got.mark, got.err)
	}
	if m := answerOf("s3"); m.Error == nil || m.Error.Code != CodeInternalError {
		t.Errorf("answer to the cancelled s3 = %+v, want a -32603 error", m)
	}
	// The call's end ends the context of a request that belongs to it.
	serverAsks("s4", MethodElicitationCreate)
	reply("B")
	if got := within(t, handled, "elicitation ended"); got.mark != "B" || !errors.Is(got.err, context.Canceled) {
		t.Errorf("after its call ended: handler saw mark %q, err %v", got.mark, got.err)
	}
	answerOf("s4")
	// With no call in flight, a request belongs to none, and ping and
	// unknown methods are answered as ever.
	serverAsks("s5", MethodRootsList)
	if got := within(t, handled, "roots/list handled"); got.mark != "" {
		t.Errorf("with no call in flight the request went to %q", got.mark)
	}
	answerOf("s5")
	serverAsks("s6", MethodPing)
	if m := answerOf("s6"); string(m.Result) != `{}` {
		t.Errorf("ping answered %+v", m)
	}
	serverAsks("s7", MethodSamplingCreateMessage)
	if m := answerOf("s7"); m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Errorf("a method with no handler answered %+v, want -32601", m)
	}
}

// TestMethodTableStdio: the fake stdio server's sampling tool asks the
// client for sampling/createMessage while its tools/call is in flight and
// returns the client's answer: the handler sees the call's context, and
// what it returns (or fails with) reaches the server.
func TestMethodTableStdio(t *testing.T) {
	tests := []struct {
		name    string
		handler RequestHandler
		want    string
	}{
		{name: "result", handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(fmt.Sprintf(`{"seen":%q}`, markOf(ctx))), nil
		}, want: `"result":{"seen":"call-1"}`},
		{name: "wire error", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, fmt.Errorf("asking: %w", &WireError{Code: CodeInvalidParams, Message: "no model"})
		}, want: `"error":{"code":-32602,"message":"no model"}`},
		{name: "other error, redacted", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("token s3cret-value refused")
		}, want: `"error":{"code":-32603,"message":"token [redacted] refused"}`},
		{name: "result too large to send", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"` + strings.Repeat("x", MCP_HTTP_MAX_BODY) + `"`), nil
		}, want: `"error":{"code":-32603,"message":"tai's answer to sampling/createMessage is larger than 10485760 bytes, the most one message may carry"}`},
		{name: "invalid result", handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"half":`), nil
		}, want: `"error":{"code":-32603,"message":"tai's answer to sampling/createMessage is not valid JSON"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := connectFake(t, "default", &ClientOptions{
				Requests: map[string]RequestHandler{MethodSamplingCreateMessage: tc.handler},
				Redact:   func(s string) string { return strings.ReplaceAll(s, "s3cret-value", "[redacted]") },
			})
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callKey{}, "call-1"), 20*time.Second)
			defer cancel()
			res, err := c.Call(ctx, "sampling", nil)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !strings.Contains(res.Text(), tc.want) {
				t.Fatalf("the server got %s\nwant it to hold %s", res.Text(), tc.want)
			}
		})
	}
}

// TestMethodTableHTTPStreams: over Streamable HTTP a request the server
// sends on a tools/call's event stream belongs to that call, even with
// another call in flight; and its handler's context ends with the call.
func TestMethodTableHTTPStreams(t *testing.T) {
	f := newFakeHTTP(t)
	both := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	n := 0
	f.onCall = func(w http.ResponseWriter, r *http.Request, id any, name string, args map[string]any) bool {
		tag, _ := args["tag"].(string)
		mu.Lock()
		if n++; n == 2 {
			once.Do(func() { close(both) })
		}
		mu.Unlock()
		select { // both calls are in flight before either stream speaks
		case <-both:
		case <-r.Context().Done():
			return true
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "data: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "id": "srv-" + tag, "method": name, "params": map[string]any{"tag": tag}}))
		sseWrite(w, "data: %s\n\n", rpcJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": textResult("done " + tag)}))
		return true
	}
	ts := f.start()
	type seen struct {
		tag, mark string
		ended     bool
	}
	handled := make(chan seen, 4)
	tagOf := func(params json.RawMessage) string {
		var p struct{ Tag string }
		json.Unmarshal(params, &p)
		return p.Tag
	}
	c := fakeClient(t, ts, nil, &ClientOptions{Requests: map[string]RequestHandler{
		MethodRootsList: func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			handled <- seen{tag: tagOf(params), mark: markOf(ctx)}
			return json.RawMessage(`{"roots":[]}`), nil
		},
		MethodElicitationCreate: func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done() // the call's answer follows the request at once
			handled <- seen{tag: tagOf(params), mark: markOf(ctx), ended: true}
			return nil, ctx.Err()
		},
	}})
	errs := make(chan error, 2)
	for _, call := range []struct{ tag, method string }{{"A", MethodRootsList}, {"B", MethodElicitationCreate}} {
		go func() {
			ctx := context.WithValue(httpCtx(t), callKey{}, "call-"+call.tag)
			res, err := c.Call(ctx, call.method, map[string]any{"tag": call.tag})
			if err == nil && res.Text() != "done "+call.tag {
				err = fmt.Errorf("call %s answered %q", call.tag, res.Text())
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := within(t, errs, "call's end"); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]seen{}
	for range 2 {
		s := within(t, handled, "handled request")
		got[s.tag] = s
	}
	if got["A"].mark != "call-A" || got["B"].mark != "call-B" || !got["B"].ended {
		t.Fatalf("handlers saw %+v; want each request with its own call's context, B's ended with its call", got)
	}
}

// TestSDKServerAsksThroughMethodTable: the go-sdk server, a real peer,
// elicits from tai and lists its roots in the middle of a tools/call over
// Streamable HTTP. It elicits only from a client that declares the
// capability, so the answer proves the declaration; each handler sees the
// context of the call.
func TestSDKServerAsksThroughMethodTable(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-asker", Version: "1.8.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "elicits a name"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + fmt.Sprint(res.Content["name"])}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "lists the client's roots"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			//lint:ignore SA1019 roots/list is the client feature whose answer this test reads
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(uris, ",")}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)

	handlers := map[string]RequestHandler{
		MethodElicitationCreate: func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			var p struct{ Message string }
			if err := json.Unmarshal(params, &p); err != nil || p.Message != "your name?" {
				return nil, fmt.Errorf("unexpected params %s", params)
			}
			return json.RawMessage(fmt.Sprintf(`{"action":"accept","content":{"name":%q}}`, markOf(ctx))), nil
		},
		MethodRootsList: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(fmt.Sprintf(`{"roots":[{"uri":"file:///%s"}]}`, markOf(ctx))), nil
		},
	}
	tests := []struct {
		name     string
		requests map[string]RequestHandler
		tool     string
		want     string
		isError  bool
	}{
		{name: "elicitation answered", requests: handlers, tool: "ask", want: "accept ada"},
		{name: "roots answered", requests: handlers, tool: "roots", want: "file:///ada"},
		{name: "no handler, no capability", tool: "ask", want: "client does not support elicitation", isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeClient(t, ts, nil, &ClientOptions{Requests: tc.requests})
			res, err := c.Call(context.WithValue(httpCtx(t), callKey{}, "ada"), tc.tool, nil)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.IsError != tc.isError || !strings.Contains(res.Text(), tc.want) {
				t.Fatalf("result %s (isError %v), want %q (isError %v)", res.Text(), res.IsError, tc.want, tc.isError)
			}
		})
	}
}

// TestRequestOfNoOneCall: a request that comes while two tools/call are
// in flight on a pipe carries both calls' contexts (CallsInFlight), and
// its handler's context ends only once both calls have ended.
func TestRequestOfNoOneCall(t *testing.T) {
	type seen struct {
		calls []string
		err   error
	}
	handled := make(chan seen, 4)
	block := func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		var marks []string
		for _, call := range CallsInFlight(ctx) {
			marks = append(marks, markOf(call))
		}
		handled <- seen{calls: marks}
		<-ctx.Done()
		handled <- seen{err: ctx.Err()}
		return nil, ctx.Err()
	}
	c, p, _ := startPipe(t, &ClientOptions{Requests: map[string]RequestHandler{MethodElicitationCreate: block}})
	done := map[string]chan error{"A": make(chan error, 1), "B": make(chan error, 1)}
	for mark, ch := range done {
		go func() {
			_, err := c.Call(context.WithValue(context.Background(), callKey{}, mark), "tool"+mark, nil)
			ch <- err
		}()
	}
	ids := map[string]ID{}
	for range 2 {
		m := within(t, p.toServer, "tools/call")
		name, _, _ := ParseToolCall(m.Params)
		ids[strings.TrimPrefix(name, "tool")] = m.ID
	}
	p.toClient <- &Message{ID: StringID("e1"), Method: MethodElicitationCreate, Params: json.RawMessage(`{}`)}
	got := within(t, handled, "the elicitation handled")
	slices.Sort(got.calls)
	if !slices.Equal(got.calls, []string{"A", "B"}) {
		t.Fatalf("the request carried the calls %q, want A and B", got.calls)
	}
	reply := func(mark string) {
		p.toClient <- &Message{ID: ids[mark], Result: json.RawMessage(`{"content":[]}`)}
		if err := within(t, done[mark], "call "+mark); err != nil {
			t.Fatalf("call %s: %v", mark, err)
		}
	}
	reply("A")
	select {
	case s := <-handled:
		t.Fatalf("the request ended with one call still in flight: %v", s.err)
	default:
	}
	reply("B")
	if s := within(t, handled, "the elicitation ended"); !errors.Is(s.err, context.Canceled) {
		t.Fatalf("after both calls ended: %v", s.err)
	}
}
