package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// testCtx returns a context bounded well below the test timeout.
func turnCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkHistory fails when a tool call lacks exactly one result, a result
// answers no call, or the history does not end with an assistant message.
func checkHistory(t *testing.T, hist []llm.Message) {
	t.Helper()
	pending := map[string]bool{}
	for i, m := range hist {
		switch m.Role {
		case "assistant":
			if len(pending) > 0 {
				t.Fatalf("message %d: assistant message while calls %v have no result", i, pending)
			}
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
		case "tool":
			if !pending[m.ToolCallID] {
				t.Fatalf("message %d: result for %q, which no open call made", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		case "user":
			if len(pending) > 0 {
				t.Fatalf("message %d: user message while calls %v have no result", i, pending)
			}
		}
	}
	if len(pending) > 0 {
		t.Fatalf("calls %v never got a result", pending)
	}
	if n := len(hist); n == 0 || hist[n-1].Role != "assistant" || len(hist[n-1].ToolCalls) > 0 {
		t.Fatalf("history does not end with an assistant answer: %+v", hist[len(hist)-1])
	}
}

func TestAgentMultiStep(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("lookup", `{"key":"a"}`),
		calls("lookup", `{"key":"b"}`),
		say("a is 1 and b is 2"),
	}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	addTool(t, e.Tools(), tool.Tool{Name: "lookup", Description: "look a key up", Safe: true, Run: func(_ context.Context, args map[string]any) (tool.Result, error) {
		return tool.TextResult(map[string]string{"a": "1", "b": "2"}[args["key"].(string)]), nil
	}})
	var mu sync.Mutex
	var text strings.Builder
	var log []string
	ev := Events{
		OnText:      func(d string) { mu.Lock(); text.WriteString(d); mu.Unlock() },
		OnWaiting:   func(w bool) { mu.Lock(); log = append(log, fmt.Sprint("wait:", w)); mu.Unlock() },
		OnToolStart: func(ev ToolEvent) { mu.Lock(); log = append(log, "start:"+ev.Name+":"+ev.Digest); mu.Unlock() },
		OnToolEnd:   func(ev ToolEvent) { mu.Lock(); log = append(log, "end:"+ev.Name+":"+ev.Outcome); mu.Unlock() },
	}
	a := newSession(t, e).NewAgent(nil)
	turn, err := a.RunTurn(turnCtx(t), "what are a and b?", &TurnOptions{Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "a is 1 and b is 2" || turn.Steps != 3 || turn.Exhausted || turn.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 15}) {
		t.Fatalf("turn = %+v", turn)
	}
	if text.String() != "a is 1 and b is 2" {
		t.Fatalf("streamed text = %q", text.String())
	}
	da, db := tool.Digest(map[string]any{"key": "a"}), tool.Digest(map[string]any{"key": "b"})
	want := []string{"wait:true", "wait:false", "start:lookup:" + da, "end:lookup:ok",
		"wait:true", "wait:false", "start:lookup:" + db, "end:lookup:ok", "wait:true", "wait:false"}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("events = %v\nwant %v", log, want)
	}
	reqs := client.requests()
	if got := reqs[2].Messages[len(reqs[2].Messages)-1]; got.Role != "tool" || got.Content != "2" || got.Name != "lookup" {
		t.Fatalf("last request ends with %+v; want the second tool result", got)
	}
	hist := a.History()
	checkHistory(t, hist)
	if len(hist) != 6 || hist[0].Content != "what are a and b?" {
		t.Fatalf("history has %d messages: %+v", len(hist), hist)
	}
	a.Reset()
	if len(a.History()) != 0 {
		t.Fatal("Reset kept history")
	}
}

func TestAgentParallelCallsRunConcurrentlyInOrder(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("meet", `{"who":"first"}`, "meet", `{"who":"second"}`, "echo", `{"v":"third"}`),
		say("done"),
	}}
	p := &prompter{allow: true}
	e := newEngine(t, client, &Options{Prompter: p})
	// Both meet calls must be running at once for either to finish.
	arrived := make(chan string, 2)
	release := make(chan struct{})
	var once sync.Once
	addTool(t, e.Tools(), tool.Tool{Name: "meet", Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
		arrived <- args["who"].(string)
		if len(arrived) == 2 {
			once.Do(func() { close(release) })
		}
		select {
		case <-release:
			return tool.TextResult("met " + args["who"].(string)), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}})
	addTool(t, e.Tools(), tool.Tool{Name: "echo", Run: func(_ context.Context, args map[string]any) (tool.Result, error) {
		return tool.TextResult(args["v"].(string)), nil
	}})
	a := newSession(t, e).NewAgent(nil)
	if _, err := a.RunTurn(turnCtx(t), "go", nil); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range p.seen() {
		order = append(order, fmt.Sprint(c.Args))
	}
	if want := []string{"map[who:first]", "map[who:second]", "map[v:third]"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("approvals asked in order %v, want %v", order, want)
	}
	res := client.requests()[1].Messages
	res = res[len(res)-3:]
	for i, want := range []string{"met first", "met second", "third"} {
		if res[i].Role != "tool" || res[i].ToolCallID != fmt.Sprintf("c%d", i) || res[i].Content != want {
			t.Fatalf("result %d = %+v, want %q for c%d", i, res[i], want, i)
		}
	}
	checkHistory(t, a.History())
}

func TestAgentToolErrorsReachTheModel(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("fails", `{}`, "no_such_tool", `{}`, "fails", `not json`, "guarded", `{}`),
		say("I see the errors"),
	}}
	e := newEngine(t, client, nil) // interactive, nobody to ask: guarded is denied
	addTool(t, e.Tools(), tool.Tool{Name: "fails", Safe: true, Run: func(context.Context, map[string]any) (tool.Result, error) {
		return tool.ErrorResult("disk on fire"), nil
	}})
	addTool(t, e.Tools(), textTool("guarded", "", false, "should not run"))
	var outcomes []string
	ev := Events{OnToolEnd: func(ev ToolEvent) { outcomes = append(outcomes, ev.Outcome) }}
	a := newSession(t, e).NewAgent(nil)
	turn, err := a.RunTurn(turnCtx(t), "try", &TurnOptions{Events: ev})
	if err != nil || turn.Text != "I see the errors" {
		t.Fatalf("turn = %+v, %v", turn, err)
	}
	msgs := client.requests()[1].Messages
	results := msgs[len(msgs)-4:]
	want := []struct {
		text string
	}{{"disk on fire"}, {`unknown tool "no_such_tool"`}, {"not valid JSON"}, {"denied"}}
	for i, w := range want {
		if !results[i].IsError || !strings.Contains(results[i].Content, w.text) {
			t.Errorf("result %d = %+v; want isError containing %q", i, results[i], w.text)
		}
	}
	// Unknown, parse and denial outcomes are known before anything runs.
	if fmt.Sprint(outcomes) != "[unknown error denied error]" {
		t.Errorf("outcomes = %v", outcomes)
	}
	checkHistory(t, a.History())
}

func TestAgentStepExhaustion(t *testing.T) {
	loop := calls("echo", `{}`)
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){loop, loop, loop, say("never")}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	addTool(t, e.Tools(), textTool("echo", "", true, "again"))
	a := newSession(t, e).NewAgent(nil)
	turn, err := a.RunTurn(turnCtx(t), "loop forever", &TurnOptions{MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !turn.Exhausted || turn.Steps != 3 || !strings.Contains(turn.Text, "step limit of 3") {
		t.Fatalf("turn = %+v", turn)
	}
	if len(client.requests()) != 3 {
		t.Fatalf("model called %d times, want 3", len(client.requests()))
	}
	checkHistory(t, a.History())
	if turn, err := a.RunTurn(turnCtx(t), "ok, stop", nil); err != nil || turn.Text != "never" {
		t.Fatalf("next turn = %+v, %v", turn, err)
	}
}

func TestAgentCancellation(t *testing.T) {
	t.Run("during a tool call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(turnCtx(t))
		client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
			calls("slow", `{}`, "slow", `{}`),
			say("after"),
		}}
		e := newEngine(t, client, &Options{Mode: tool.Yolo})
		addTool(t, e.Tools(), tool.Tool{Name: "slow", Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
			cancel() // the person presses Ctrl-C while the tool runs
			<-ctx.Done()
			return tool.Result{}, ctx.Err()
		}})
		a := newSession(t, e).NewAgent(nil)
		_, err := a.RunTurn(ctx, "go", nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		hist := a.History()
		checkHistory(t, hist)
		if !strings.Contains(hist[len(hist)-1].Content, "interrupted") {
			t.Fatalf("last message = %+v", hist[len(hist)-1])
		}
		if turn, err := a.RunTurn(turnCtx(t), "again", nil); err != nil || turn.Text != "after" {
			t.Fatalf("the agent is not usable after a cancel: %+v, %v", turn, err)
		}
		checkHistory(t, a.History())
	})
	t.Run("while waiting for the model", func(t *testing.T) {
		ctx, cancel := context.WithCancel(turnCtx(t))
		client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
			func(ctx context.Context, _ llm.Request, _ func(string)) (llm.Response, error) {
				<-ctx.Done()
				return llm.Response{}, ctx.Err()
			},
			say("fine"),
		}}
		e := newEngine(t, client, nil)
		ev := Events{OnWaiting: func(w bool) {
			if w {
				cancel()
			}
		}}
		a := newSession(t, e).NewAgent(nil)
		if _, err := a.RunTurn(ctx, "hello", &TurnOptions{Events: ev}); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		checkHistory(t, a.History())
		if turn, err := a.RunTurn(turnCtx(t), "hello again", &TurnOptions{Events: ev}); err != nil || turn.Text != "fine" {
			t.Fatalf("next turn = %+v, %v", turn, err)
		}
	})
}

func TestAgentDuplicateCallIDs(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		func(context.Context, llm.Request, func(string)) (llm.Response, error) {
			return llm.Response{Message: llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{
				{ID: "x", Name: "echo", Arguments: json.RawMessage(`{}`)},
				{ID: "x", Name: "echo", Arguments: json.RawMessage(`{}`)},
			}}}, nil
		},
		say("ok"),
	}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	addTool(t, e.Tools(), textTool("echo", "", true, "e"))
	a := newSession(t, e).NewAgent(nil)
	if _, err := a.RunTurn(turnCtx(t), "go", nil); err != nil {
		t.Fatal(err)
	}
	checkHistory(t, a.History())
}

func TestAgentCaptureMode(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		func(context.Context, llm.Request, func(string)) (llm.Response, error) {
			return llm.Response{Message: llm.Message{Role: "assistant", Content: "Let me check.", ToolCalls: []llm.ToolCall{{ID: "1", Name: "echo", Arguments: json.RawMessage(`{}`)}}}}, nil
		},
		say("It is fine."),
	}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	addTool(t, e.Tools(), textTool("echo", "", true, "ok"))
	a := newSession(t, e).NewAgent(nil)
	turn, err := a.RunTurn(turnCtx(t), "check", &TurnOptions{Capture: true})
	if err != nil || turn.Text != "Let me check.\n\nIt is fine." {
		t.Fatalf("capture = %q, %v", turn.Text, err)
	}
}

func TestAgentSystemPromptAndProfileTools(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){say("hi")}}
	e := newEngine(t, client, nil)
	a := NewAgent(e.Tools(), func(context.Context) (Model, error) {
		return Model{Client: client, System: "be brief", Tools: []string{"read_*", "glob"}}, nil
	}, nil)
	if _, err := a.RunTurn(turnCtx(t), "read the file", nil); err != nil {
		t.Fatal(err)
	}
	req := client.requests()[0]
	if req.Messages[0].Role != "system" || req.Messages[0].Content != "be brief" {
		t.Fatalf("first message = %+v", req.Messages[0])
	}
	var got []string
	for _, s := range req.Tools {
		got = append(got, s.Name)
	}
	if fmt.Sprint(got) != "[glob read_file]" {
		t.Fatalf("offered %v; the profile allows read_* and glob", got)
	}
}

// fakeProfile stores a profile pointing at an llmtest server and returns
// an engine using it through the real provider client.
func fakeProfileEngine(t testing.TB, provider, baseURL string, o *Options) *Engine {
	t.Helper()
	store := vaulttest.Open(t)
	if err := store.SecretSet("model-key", "sk-fake-model-key-123", nil); err != nil {
		t.Fatal(err)
	}
	p := llm.Profile{Name: "fake", Provider: provider, BaseURL: baseURL, Model: "fake-model", KeySecret: "model-key"}
	if err := llm.SaveProfile(store, p); err != nil {
		t.Fatal(err)
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Profile = "fake"
	opts.Getenv = noEnv
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	e, err := New(store, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAgentEndToEndRedaction(t *testing.T) {
	const secret = "ghp_SuperSecretValue0123456789"
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			start := llmtest.NewOpenAI
			if provider == llm.ProviderAnthropic {
				start = llmtest.NewAnthropic
			}
			srv := start(t,
				llmtest.Calls(llmtest.Call("shell", `{"command":"printf 'token: %s\\n' \"$SHOWN\""}`), llmtest.Call("print_env", `{}`)),
				llmtest.Say("The token is redacted."),
			)
			srv.RequireKey("sk-fake-model-key-123")
			e := fakeProfileEngine(t, provider, srv.BaseURL, &Options{Mode: tool.Yolo})
			if err := e.Store().SecretSet("github-token", secret, nil); err != nil {
				t.Fatal(err)
			}
			addTool(t, e.Tools(), tool.Tool{Name: "print_env", Safe: true, Run: func(context.Context, map[string]any) (tool.Result, error) {
				return tool.TextResult("GITHUB_TOKEN=" + secret), nil
			}})
			t.Setenv("SHOWN", secret) // a name the shell keeps: the vault secret redacts it
			a := newSession(t, e).NewAgent(nil)
			var streamed strings.Builder
			turn, err := a.RunTurn(turnCtx(t), "show me the token", &TurnOptions{Events: Events{OnText: func(d string) { streamed.WriteString(d) }}})
			if err != nil {
				t.Fatal(err)
			}
			if turn.Text != "The token is redacted." || streamed.String() != turn.Text {
				t.Fatalf("turn %q, streamed %q", turn.Text, streamed.String())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the fake got %d requests, want 2", len(reqs))
			}
			for i, r := range reqs {
				if strings.Contains(string(r.Body), secret) {
					t.Fatalf("request %d body carries the secret:\n%s", i, r.Body)
				}
				if strings.Contains(string(r.Body), "sk-fake-model-key-123") {
					t.Fatalf("request %d body carries the API key", i)
				}
			}
			results := reqs[1].ToolResults()
			if len(results) != 2 || !strings.Contains(results[0].Text, "[REDACTED") || !strings.Contains(results[1].Text, "[REDACTED") {
				t.Fatalf("tool results the model saw: %+v", results)
			}
			checkHistory(t, a.History())
		})
	}
}

// BenchmarkAgentStep measures one agent step (select tools, build the
// request, one streamed completion against the in-process fake OpenAI
// server, record the answer) with the native tools registered.
func BenchmarkAgentStep(b *testing.B) {
	srv := llmtest.NewOpenAI(b)
	srv.SetRule(func(llmtest.Request) llmtest.Turn { return llmtest.Say("ok") })
	e := fakeProfileEngine(b, llm.ProviderOpenAI, srv.BaseURL, &Options{Mode: tool.Yolo})
	a := newSession(b, e).NewAgent(nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Reset()
		if _, err := a.RunTurn(ctx, "list the files in the current directory", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAgentStepOverhead measures the agent's own share of a step: the
// same loop with a client that answers at once.
func BenchmarkAgentStepOverhead(b *testing.B) {
	e := newEngine(b, nil, &Options{Mode: tool.Yolo})
	client := llm.ChatClient(instant{})
	a := NewAgent(e.Tools(), StaticModel(client, "system"), nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Reset()
		if _, err := a.RunTurn(ctx, "list the files in the current directory", nil); err != nil {
			b.Fatal(err)
		}
	}
}

type instant struct{}

func (instant) Complete(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return llm.Response{Message: llm.Message{Role: "assistant", Content: "ok"}, FinishReason: "stop"}, nil
}
