package bridge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/tool"
	"tai/mcp/elicit"
)

// TestHTTPServer registers a Streamable HTTP server (the go-sdk's handler
// on loopback) whose Authorization header comes from a vault secret: the
// consent shows the URL and the header's name only, the call works, and
// the token is redacted from what comes back.
func TestHTTPServer(t *testing.T) {
	const token = "web-token-5f3a9c1e"
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer("v1") }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	f := newFixture(t, tool.Interactive, "")
	if err := f.store.SecretSet("WEB_TOKEN", token, nil); err != nil {
		t.Fatal(err)
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"web": map[string]any{
		"url": ts.URL, "headers": map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"},
	}}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: src})
	if err != nil || rep.Servers[0].Outcome != Added || rep.Servers[0].Transport != "http" {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	qs := f.p.questions()
	if len(qs) != 1 {
		t.Fatalf("questions %q", qs)
	}
	mustContain(t, "consent", qs[0], "url:     "+ts.URL, "headers: Authorization (from ${WEB_TOKEN})  (values not shown)")
	if strings.Contains(qs[0], token) {
		t.Fatalf("the consent shows the token: %q", qs[0])
	}
	row, err := f.store.ServerGet("web")
	if err != nil || row.Headers["Authorization"] != "Bearer ${WEB_TOKEN}" {
		t.Fatalf("stored headers %v, %v (want the reference, not the value)", row.Headers, err)
	}
	if _, err := f.b.SetEnabled(ctxT(t), "web", "", true); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_web_echo", map[string]any{"text": "the token is " + token})
	if err != nil || res.IsError {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if got := text(res); got != "the token is [REDACTED:WEB_TOKEN]" {
		t.Fatalf("result %q", got)
	}
}

// TestElicitOnStandaloneStream: a Streamable HTTP server that sends its
// form on the standalone GET stream while a tool runs (the go-sdk does in
// JSON mode, the TypeScript SDK through server.request) reaches the
// person of that call, whose answer goes back; under --auto the same form
// is declined at once, on the call's line, and nobody is asked.
func TestElicitOnStandaloneStream(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "form", Description: "asks a name"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + fmt.Sprint(res.Content["name"])}}}, nil, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	var mu sync.Mutex
	gets := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	for _, mode := range []tool.Mode{tool.Interactive, tool.Auto} {
		person := &elicitor{answer: func(elicit.Question) (elicit.Result, error) {
			return elicit.Result{Action: elicit.Accept, Content: map[string]any{"name": "Ada"}}, nil
		}}
		f := newFixture(t, mode, "")
		src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"asker": map[string]any{"url": ts.URL}}})
		if rep, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil || rep.Servers[0].Outcome != Added {
			t.Fatalf("add: %+v, %v", rep, err)
		}
		if _, err := f.b.SetEnabled(ctxT(t), "asker", "", true); err != nil {
			t.Fatal(err)
		}
		f.reg.Approver().SetPrompter(person)
		var notes []string
		ctx := tool.WithCaller(ctxT(t), tool.Caller{Note: func(s string) { notes = append(notes, s) }})
		res, err := f.reg.Dispatch(ctx, "mcp_asker_form", nil)
		if err != nil || res.IsError {
			t.Fatalf("%v: call: %+v, %v", mode, res, err)
		}
		switch mode {
		case tool.Interactive:
			if got := text(res); got != "accept Ada" || len(person.asked) != 1 {
				t.Fatalf("the server got %q; the person was asked %d times", got, len(person.asked))
			}
		default:
			if got := text(res); got != "decline <nil>" || len(person.asked) != 0 {
				t.Fatalf("under --auto the server got %q; the person was asked %d times", got, len(person.asked))
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "declined: --auto answers no server's questions") {
				t.Fatalf("notes %q", notes)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if gets == 0 {
		t.Fatal("no standalone GET stream was opened")
	}
}
