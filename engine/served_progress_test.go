//lint:file-ignore SA1019 logging, deprecated after 2025-11-25, is the server feature tai serves at that version and this peer exercises

package engine

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
)

// The go-sdk client, asking a served chat for progress, receives it over
// the call's event stream while the agent works: each model call and
// each tool it runs, by name only (never its arguments, which hold a
// secret here), then the answer. With logging/setLevel at error, a chat
// that fails also logs its failure there.
func TestServedChatStreamsProgressToGoSDK(t *testing.T) {
	const secret = "sk-fake-model-key-123" // fakeProfileEngine's model key
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("echo_back", `{"text":"`+secret+`"}`)),
		llmtest.Say("echoed"),
		llmtest.Fail(400, "the model refuses"),
	)
	e := fakeProfileEngine(t, llm.ProviderOpenAI, srv.BaseURL, nil)
	addTool(t, e.Tools(), textTool("echo_back", "echoes", true, "back"))
	url := serveEngine(t, e)

	var mu sync.Mutex
	var progress []*sdk.ProgressNotificationParams
	var logs []*sdk.LoggingMessageParams
	logged := make(chan struct{}, 1)
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, r.Params)
			mu.Unlock()
			logged <- struct{}{}
		},
	})
	hc := &http.Client{Transport: bearer{http.DefaultTransport.(*http.Transport).Clone()}}
	sess, err := client.Connect(turnCtx(t), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	defer sess.Close()
	if sess.InitializeResult().Capabilities.Logging == nil {
		t.Error("the server does not declare logging")
	}
	params := &sdk.CallToolParams{Name: ServedChat, Arguments: map[string]any{"message": "echo the key"}}
	params.SetProgressToken("chat-1")
	res, err := sess.CallTool(turnCtx(t), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "echoed" {
		t.Fatalf("chat answered %+v", res)
	}
	mu.Lock()
	var got []string
	for _, p := range progress {
		if p.ProgressToken != "chat-1" {
			t.Errorf("progress for token %v", p.ProgressToken)
		}
		got = append(got, p.Message)
	}
	mu.Unlock()
	if want := "step 1: thinking|step 1: running echo_back|step 2: thinking"; strings.Join(got, "|") != want {
		t.Errorf("progress messages = %q, want %q", strings.Join(got, "|"), want)
	}

	// Failure, logged at the level set: the model refuses.
	if err := sess.SetLoggingLevel(turnCtx(t), &sdk.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	params.SetProgressToken("chat-2")
	params.Arguments = map[string]any{"message": "again"}
	res, err = sess.CallTool(turnCtx(t), params)
	if err != nil || !res.IsError {
		t.Fatalf("a chat the model refuses: %+v, %v", res, err)
	}
	// The client may hand notifications to its handlers after the result.
	select {
	case <-logged:
	case <-turnCtx(t).Done():
		t.Fatal("no log message came")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 1 || logs[0].Level != "error" || !strings.Contains(logs[0].Data.(map[string]any)["failure"].(string), "chat failed") {
		t.Errorf("logs = %+v, want the chat's failure", logs)
	}
}
