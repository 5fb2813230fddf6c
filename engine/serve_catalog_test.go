package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp/server"
)

const servedKey = "served-test-key-0123456789"

// bearer adds the key to every request.
type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+servedKey)
	return b.next.RoundTrip(r)
}

// serveEngine serves e's catalogue on a loopback server and returns its
// URL.
func serveEngine(t testing.TB, e *Engine) string {
	t.Helper()
	srv, err := server.New(e.Served(nil), &server.Options{Key: servedKey, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return hs.URL + server.DefaultPath
}

// sdkSession connects the official go-sdk client to url with the key.
func sdkSession(t testing.TB, url string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{http.DefaultTransport.(*http.Transport).Clone()}}
	sess, err := client.Connect(turnCtx(t), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// callText calls a tool and returns its text and isError.
func callText(t testing.TB, sess *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(turnCtx(t), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestServedCatalogue lists the served tools through the go-sdk client:
// every native tool verbatim (a Lua-style one added at run time too) plus
// chat and completions, and never a bridged one.
func TestServedCatalogue(t *testing.T) {
	e := newEngine(t, nil, &Options{LuaRunner: func(context.Context, string) (string, []any, error) { return "", nil, nil }})
	addTool(t, e.Tools(), textTool("echo_back", "echoes", true, "back"))
	addTool(t, e.Tools(), tool.Tool{Name: "mcp_gh_search", Description: "bridged", Origin: "gh/search", Run: func(context.Context, map[string]any) (tool.Result, error) {
		return tool.TextResult("laundered"), nil
	}})
	e.Tools().SetFallback(func(name string) (tool.Tool, bool) {
		if name == "mcp_fs_read" || name == "echo_back_fb" {
			return tool.Tool{Name: name, Origin: "fs/read", Run: func(context.Context, map[string]any) (tool.Result, error) { return tool.TextResult("laundered"), nil }}, true
		}
		return tool.Tool{}, false
	})
	e.Tools().SetSpecSource(func(string) []llm.ToolSpec { return []llm.ToolSpec{{Name: "mcp_fs_read", Description: "bridged"}} })
	sess := sdkSession(t, serveEngine(t, e))
	list, err := sess.ListTools(turnCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, toolName := range list.Tools {
		got = append(got, toolName.Name)
		if strings.TrimSpace(toolName.Description) == "" {
			t.Errorf("%s has no description", toolName.Name)
		}
		schema, _ := json.Marshal(toolName.InputSchema)
		var m map[string]any
		if json.Unmarshal(schema, &m) != nil || m["type"] != "object" {
			t.Errorf("%s: inputSchema %s is not an object schema", toolName.Name, schema)
		}
	}
	var want []string
	for _, toolName := range e.Tools().NativeTools() {
		want = append(want, toolName.Name)
	}
	want = append(want, ServedChat, ServedCompletions)
	if !slices.Equal(got, want) {
		t.Fatalf("served %v\nwant %v", got, want)
	}
	if slices.Contains(got, "mcp_gh_search") || slices.Contains(got, "mcp_fs_read") || !slices.Contains(got, "echo_back") {
		t.Fatalf("served %v", got)
	}
	// The served schema of a native tool is its own, verbatim.
	for _, toolName := range list.Tools {
		if toolName.Name != "read_file" {
			continue
		}
		native, _ := e.Tools().Get("read_file")
		a, _ := json.Marshal(toolName.InputSchema)
		b, _ := json.Marshal(native.Parameters)
		var x, y any
		_ = json.Unmarshal(a, &x)
		_ = json.Unmarshal(b, &y)
		if fmt.Sprint(x) != fmt.Sprint(y) || toolName.Description != native.Description {
			t.Errorf("read_file served as %s / %q, native %s / %q", a, toolName.Description, b, native.Description)
		}
	}
	// Bridged tools cannot be called either, by either path.
	for _, name := range []string{"mcp_gh_search", "mcp_fs_read"} {
		_, err := sess.CallTool(turnCtx(t), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling bridged %s: %v", name, err)
		}
	}
	if text, isErr := callText(t, sess, "echo_back", nil); text != "back" || isErr {
		t.Fatalf("echo_back: %q %v", text, isErr)
	}
}

// TestServedCallsRunWithoutAskingAndAreAudited checks the served
// session's approver: non-safe tools run, ask_user and a model's profile
// change are refused, and every call is audited with its session.
func TestServedCallsRunWithoutAskingAndAreAudited(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("profile_switch", `{"name":"other"}`)),
		llmtest.Say("could not switch"),
	)
	e := fakeProfileEngine(t, llm.ProviderOpenAI, srv.BaseURL, nil)
	if err := e.SaveProfile(llm.Profile{Name: "other", Provider: llm.ProviderOpenAI, BaseURL: srv.BaseURL, Model: "other-model", KeySecret: "model-key"}); err != nil {
		t.Fatal(err)
	}
	var ran []string
	addTool(t, e.Tools(), tool.Tool{Name: "risky", Description: "not safe", Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
		s, _ := SessionFrom(ctx)
		ran = append(ran, s.Name())
		return tool.TextResult("did it"), nil
	}})
	sess := sdkSession(t, serveEngine(t, e))
	if text, isErr := callText(t, sess, "risky", nil); text != "did it" || isErr {
		t.Fatalf("risky: %q %v", text, isErr)
	}
	if len(ran) != 1 || !strings.HasPrefix(ran[0], "mcp:") || len(ran[0]) != 12 {
		t.Fatalf("the tool ran in sessions %v", ran)
	}
	if text, isErr := callText(t, sess, "ask_user", map[string]any{"question": "ok?"}); !isErr || !strings.Contains(text, "denied") {
		t.Fatalf("ask_user: %q %v", text, isErr)
	}
	if text, isErr := callText(t, sess, "profile_switch", map[string]any{"name": "other"}); !isErr || !strings.Contains(text, "not done") {
		t.Fatalf("profile_switch: %q %v", text, isErr)
	}
	if _, err := sess.CallTool(turnCtx(t), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("an unknown tool: %v", err)
	}
	text, isErr := callText(t, sess, ServedChat, map[string]any{"message": "switch yourself"})
	if isErr || !strings.Contains(text, "could not switch") {
		t.Fatalf("chat: %q %v", text, isErr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Model != "fake-model" || !strings.Contains(reqs[1].ToolResults()[0].Text, "not done") {
		t.Fatalf("the model's own switch went through: %+v", reqs)
	}
	tail, err := e.Store().AuditTail(10, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, a := range tail {
		if a.Session != ran[0] {
			t.Errorf("audit entry %s %s has session %q, want %q", a.Kind, a.Subject, a.Session, ran[0])
		}
		seen[a.Kind+" "+a.Subject] = a.Outcome
	}
	if seen["tool no_such_tool"] != "unknown" {
		t.Errorf("the unknown tool was audited as %q", seen["tool no_such_tool"])
	}
	for _, want := range []string{"tool risky", "tool ask_user", "tool profile_switch", "mcp-serve chat"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("no audit entry for %s in %v", want, seen)
		}
	}
	if _, err := e.Store().AuditVerify(); err != nil {
		t.Fatalf("the trail with sessions does not verify: %v", err)
	}
}

// TestServedChatAndCompletions runs chat (history kept, max_steps, named
// conversations, a profile for one conversation only) and completions
// (stateless, roles validated) through the go-sdk client.
func TestServedChatAndCompletions(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		var users []string
		for _, m := range r.Messages {
			if m.Role == "user" {
				users = append(users, m.Text)
			}
		}
		return llmtest.Say(r.Model + " heard " + strings.Join(users, "+"))
	})
	e := fakeProfileEngine(t, llm.ProviderOpenAI, srv.BaseURL, nil)
	if err := e.SaveProfile(llm.Profile{Name: "other", Provider: llm.ProviderOpenAI, BaseURL: srv.BaseURL, Model: "other-model", KeySecret: "model-key"}); err != nil {
		t.Fatal(err)
	}
	sess := sdkSession(t, serveEngine(t, e))
	steps := []struct {
		args    map[string]any
		want    string
		wantErr bool
	}{
		{map[string]any{"message": "one"}, "fake-model heard one", false},
		{map[string]any{"message": "two"}, "fake-model heard one+two", false},
		{map[string]any{"message": "side", "session": "b", "profile": "other"}, "other-model heard side", false},
		{map[string]any{"message": "three", "max_steps": 2}, "fake-model heard one+two+three", false},
		{map[string]any{"message": "again", "session": "b"}, "other-model heard side+again", false},
		{map[string]any{"message": ""}, "empty", true},
		{map[string]any{"message": "x", "max_steps": 0}, "out of range", true},
		{map[string]any{"message": "x", "profile": "missing"}, "missing", true},
		{map[string]any{"message": "x", "extra": 1}, "extra", true},
	}
	for i, st := range steps {
		text, isErr := callText(t, sess, ServedChat, st.args)
		if isErr != st.wantErr || !strings.Contains(text, st.want) {
			t.Fatalf("chat step %d %v: %q (isError %v), want %q", i, st.args, text, isErr, st.want)
		}
	}
	comp := []struct {
		msgs    []any
		want    string
		wantErr bool
	}{
		{[]any{map[string]any{"role": "system", "content": "terse"}, map[string]any{"role": "user", "content": "hi"}}, "fake-model heard hi", false},
		{[]any{map[string]any{"role": "user", "content": "alone"}}, "fake-model heard alone", false},
		{[]any{map[string]any{"role": "tool", "content": "x"}}, "role", true},
		{[]any{map[string]any{"role": "user", "content": 3}}, "content", true},
		{[]any{}, "non-empty", true},
	}
	for i, c := range comp {
		text, isErr := callText(t, sess, ServedCompletions, map[string]any{"messages": c.msgs})
		if isErr != c.wantErr || !strings.Contains(text, c.want) {
			t.Fatalf("completions %d: %q (isError %v), want %q", i, text, isErr, c.want)
		}
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if len(last.Tools) != 0 {
		t.Fatalf("completions offered tools: %v", last.ToolNames())
	}
}

// TestServedSessionsAreIsolated runs two MCP sessions on different
// profiles at once, each with several chat turns, and checks that every
// request reached its session's model with its session's history only.
func TestServedSessionsAreIsolated(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn { return llmtest.Say("ok from " + r.Model) })
	e := fakeProfileEngine(t, llm.ProviderOpenAI, srv.BaseURL, nil)
	if err := e.SaveProfile(llm.Profile{Name: "other", Provider: llm.ProviderOpenAI, BaseURL: srv.BaseURL, Model: "other-model", KeySecret: "model-key"}); err != nil {
		t.Fatal(err)
	}
	url := serveEngine(t, e)
	clients := []struct {
		label, profile, model string
	}{{"alice", "fake", "fake-model"}, {"bob", "other", "other-model"}}
	var wg sync.WaitGroup
	for _, c := range clients {
		sess := sdkSession(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				args := map[string]any{"message": fmt.Sprintf("%s-%d", c.label, i)}
				if i == 0 {
					args["profile"] = c.profile
				}
				res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: ServedChat, Arguments: args})
				if err != nil || res.IsError {
					t.Errorf("%s turn %d: %v %+v", c.label, i, err, res)
					return
				}
				if got := res.Content[0].(*sdk.TextContent).Text; got != "ok from "+c.model {
					t.Errorf("%s turn %d answered %q", c.label, i, got)
				}
			}
		}()
	}
	wg.Wait()
	reqs := srv.Requests()
	if len(reqs) != 10 {
		t.Fatalf("%d model requests, want 10", len(reqs))
	}
	for _, r := range reqs {
		owner := strings.SplitN(r.LastUser(), "-", 2)[0]
		want := map[string]string{"alice": "fake-model", "bob": "other-model"}[owner]
		if r.Model != want {
			t.Errorf("%s's turn reached model %s", owner, r.Model)
		}
		n := 0
		for _, m := range r.Messages {
			if m.Role != "user" {
				continue
			}
			n++
			if !strings.HasPrefix(m.Text, owner+"-") {
				t.Errorf("%s's request holds %q from another session", owner, m.Text)
			}
		}
		if want := r.LastUser()[len(owner)+1:]; fmt.Sprint(n-1) != want {
			t.Errorf("%s's request %s carries %d user messages", owner, r.LastUser(), n)
		}
	}
}
