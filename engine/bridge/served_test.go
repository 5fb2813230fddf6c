package bridge

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault"
)

// TestServedSessions: over --serve-mcp, a direct tools/call of mcp_add is
// the key holder's act and registers the server; an mcp_add the model
// makes inside a served chat turn is refused (nobody is there to consent);
// bridged tools are never served, and are not reachable through mcp_call
// either.
func TestServedSessions(t *testing.T) {
	store, err := vault.Open(filepath.Join(t.TempDir(), "vault.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	model := llmtest.NewOpenAI(t)
	eng, err := engine.New(store, &engine.Options{
		Dir: t.TempDir(),
		NewClient: func(p llm.Profile) (llm.ChatClient, error) {
			p.Provider, p.BaseURL, p.Model = "openai", model.BaseURL, "fake"
			return llm.NewChatClient(p, store, &llm.ClientOptions{Getenv: func(string) string { return "" }})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(eng.Tools(), store, &Options{Normalize: jsonNormalize, Profile: func() string { return eng.Profile().Name }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	sess, err := eng.Served(nil).Open(ctxT(t), "client-1")
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args any) tool.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		out, err := sess.Call(ctxT(t), name, raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var res tool.Result
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}

	// The model, in a served chat turn, tries to add a server.
	src, _ := jsonString(map[string]any{"source": serverJSON(t, "bymodel", nil)})
	model.Push(llmtest.Calls(llmtest.Call("mcp_add", src)), llmtest.Say("tried"))
	call("chat", map[string]any{"message": "add that server"})
	reqs := model.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || !strings.Contains(results[0].Text, "nobody is present to consent") {
		t.Fatalf("the model's mcp_add answered %+v", results)
	}

	// The key holder's own call runs.
	res := call("mcp_add", map[string]any{"source": serverJSON(t, "direct", nil)})
	if res.IsError || !strings.Contains(res.Text(), "added direct") {
		t.Fatalf("direct mcp_add: %s", res.Text())
	}
	if names := func() []string {
		list, _ := store.ServerList()
		var out []string
		for _, s := range list {
			out = append(out, s.Name)
		}
		return out
	}(); len(names) != 1 || names[0] != "direct" {
		t.Fatalf("stored %v", names)
	}
	call("mcp_enable", map[string]any{"server": "direct"})

	// Bridged tools are not served, by name or through mcp_call.
	for _, st := range eng.Served(nil).Tools() {
		if strings.HasPrefix(st.Name, "mcp_direct_") {
			t.Fatalf("bridged tool served: %s", st.Name)
		}
	}
	if _, err := sess.Call(ctxT(t), "mcp_direct_echo", json.RawMessage(`{"text":"x"}`)); err == nil {
		t.Fatal("a bridged tool was callable over the server")
	}
	if res := call("mcp_call", map[string]any{"server": "direct", "tool": "echo", "args": map[string]any{"text": "x"}}); !res.IsError {
		t.Fatalf("mcp_call reached a bridged tool over the server: %s", res.Text())
	}

	// Nor can the model remove one.
	model.Push(llmtest.Calls(llmtest.Call("mcp_remove", `{"server":"direct"}`)), llmtest.Say("tried"))
	call("chat", map[string]any{"message": "remove it"})
	reqs = model.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "nobody is present to consent") {
		t.Fatalf("the model's mcp_remove answered %+v", res)
	}
	if _, err := store.ServerGet("direct"); err != nil {
		t.Fatalf("the model removed the server: %v", err)
	}
}
