package bridge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/server"
	"tai/vault"
)

const servedKey = "bridge-served-key-0123456789"

type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+servedKey)
	return b.next.RoundTrip(r)
}

// TestBridgedToolsAreNeverServed registers and enables a real MCP server
// through the bridge, then serves the engine: its mcp_srv_* tools are
// neither listed nor callable over MCP, while a served chat agent, a full
// agent, may still use them.
func TestBridgedToolsAreNeverServed(t *testing.T) {
	store, err := vault.Open(filepath.Join(t.TempDir(), "vault.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	model := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("mcp_srv_echo", `{"text":"via the bridge"}`)), llmtest.Say("the agent used it"))
	e, err := engine.New(store, &engine.Options{Getenv: func(string) string { return "" }, Dir: t.TempDir(),
		NewClient: func(p llm.Profile) (llm.ChatClient, error) {
			return llm.NewChatClient(llm.Profile{Name: "t", Provider: "openai", BaseURL: model.BaseURL, Model: "fake"}, store, &llm.ClientOptions{Getenv: func(string) string { return "" }})
		}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(e.Tools(), store, &Options{
		Normalize: jsonNormalize,
		Profile:   func() string { return "work" },
		Client:    &mcp.ClientOptions{ConnectTimeout: 20 * time.Second, CallTimeout: 20 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	local, err := e.NewSession(&engine.SessionOptions{Approver: tool.NewApprover(tool.Yolo, &prompter{answer: "y"})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := engine.WithSession(ctxT(t), local)
	rep, err := b.Add(ctx, AddRequest{Source: serverJSON(t, "srv", nil)})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	if _, err := b.SetEnabled(ctx, "srv", "", true); err != nil {
		t.Fatal(err)
	}
	if res, err := local.Dispatch(ctx, "mcp_srv_echo", map[string]any{"text": "local"}); err != nil || res.IsError {
		t.Fatalf("the bridged tool does not work locally: %+v, %v", res, err)
	}

	srv, err := server.New(e.Served(nil), &server.Options{Key: servedKey})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "bridge-served-test", Version: "1"}, nil)
	sess, err := client.Connect(ctxT(t), &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	list, err := sess.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, toolName := range list.Tools {
		served = append(served, toolName.Name)
		if strings.HasPrefix(toolName.Name, "mcp_srv_") {
			t.Errorf("the bridged tool %s is served", toolName.Name)
		}
	}
	if !strings.Contains(strings.Join(served, " "), "mcp_add") {
		t.Errorf("the registry's own mcp_* tools are native and should be served: %v", served)
	}
	// Nor are the tools that reach the servers tai uses: a served client
	// never sees another server's resources, and tai declares no
	// capability beyond tools, answering -32601 to what it does not serve.
	for _, name := range []string{ResourcesTool, ReadResourceTool} {
		if strings.Contains(" "+strings.Join(served, " ")+" ", " "+name+" ") {
			t.Errorf("%s is served", name)
		}
		_, err := sess.CallTool(ctxT(t), &sdk.CallToolParams{Name: name, Arguments: map[string]any{"server": "srv", "uri": "test://note"}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling %s over MCP: %v", name, err)
		}
	}
	if caps := sess.InitializeResult().Capabilities; caps.Resources != nil || caps.Prompts != nil || caps.Completions != nil || caps.Tools == nil {
		t.Errorf("served capabilities = %+v; want tools only", caps)
	}
	if _, err := sess.ListResources(ctxT(t), nil); err == nil || !strings.Contains(err.Error(), "-32601") && !strings.Contains(err.Error(), "not served") {
		t.Errorf("resources/list over MCP: %v", err)
	}
	if _, err := sess.ReadResource(ctxT(t), &sdk.ReadResourceParams{URI: "test://note"}); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("resources/read over MCP: %v", err)
	}
	for _, name := range []string{"mcp_srv_echo", "mcp_srv_fail"} {
		_, err := sess.CallTool(ctxT(t), &sdk.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling bridged %s over MCP: %v", name, err)
		}
	}
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "chat", Arguments: map[string]any{"message": "use the server"}})
	if err != nil || res.IsError {
		t.Fatalf("chat: %+v, %v", res, err)
	}
	if got := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(got, "the agent used it") {
		t.Fatalf("chat answered %q", got)
	}
	if r := model.Requests(); len(r) != 2 || len(r[1].ToolResults()) != 1 || !strings.Contains(r[1].ToolResults()[0].Text, "via the bridge") {
		t.Fatalf("the served agent could not use the bridged tool: %+v", r)
	}
}
