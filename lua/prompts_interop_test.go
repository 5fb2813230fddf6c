//go:build interop

package lua

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault"
)

// TestInteropPrompts runs server-everything's prompts through tai.mcp.prompt
// and tai.chat: simple-prompt (no arguments), args-prompt (a required and
// an optional argument), completable-prompt (completion/complete, the
// second argument narrowed by the first) and resource-prompt (an embedded
// resource: its text inline, a blob as a label). Each reaches the fake
// model as the user turn; the server's instructions reach its system
// prompt, fenced and naming the server.
func TestInteropPrompts(t *testing.T) {
	node, everything := npmPeer(t, "server-everything")
	srv := llmtest.NewOpenAI(t, llmtest.Say("one"), llmtest.Say("two"), llmtest.Say("three"), llmtest.Say("four"))
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Mode:  tool.Auto,
		Engine: &engine.Options{
			Dir:    t.TempDir(),
			Getenv: func(k string) string { return env[k] },
			Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}},
		},
	}, nil)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}},
	}})
	got := mustRun(t, h, fmt.Sprintf(`
		local rep = assert(tai.mcp.add{source = %q})
		assert(tai.mcp.enable{server = "everything"})
		local names = {}
		for _, p in ipairs(assert(tai.mcp.prompts())) do
			assert(p.offered, p.name .. " is not offered: " .. tostring(p.reason))
			names[#names + 1] = p.name
		end
		table.sort(names)
		local function send(name, args)
			local turn = assert(tai.mcp.prompt{server = "everything", name = name, args = args})
			return assert(tai.chat("", {messages = turn.messages})), turn
		end
		send("simple-prompt")
		local missing = select(2, tai.mcp.prompt{server = "everything", name = "args-prompt"})
		send("args-prompt", {city = "Lyon"})
		local dept = assert(tai.mcp.complete_argument{server = "everything", prompt = "completable-prompt", argument = "department", value = "Eng"})
		local who = assert(tai.mcp.complete_argument{server = "everything", prompt = "completable-prompt", argument = "name", value = "",
			context = {department = "Sales"}})
		local _, res = send("resource-prompt", {resourceType = "Text", resourceId = "2"})
		local _, blob = send("resource-prompt", {resourceType = "Blob", resourceId = "3"})
		return table.concat(names, ","), missing, table.concat(dept, ","), table.concat(who, ","),
			res.messages[2].content, blob.messages[2].content, rep.servers[1].instructions or ""`, string(cfg)))
	if got[0] != "args-prompt,completable-prompt,resource-prompt,simple-prompt" {
		t.Fatalf("prompts = %v", got[0])
	}
	if !strings.Contains(fmt.Sprint(got[1]), "needs argument city") {
		t.Errorf("args-prompt without city: %v", got[1])
	}
	if got[2] != "Engineering" || got[3] != "David,Eve,Frank" {
		t.Errorf("completions: %v / %v", got[2], got[3])
	}
	if !strings.Contains(fmt.Sprint(got[4]), "[resource ") || !strings.Contains(fmt.Sprint(got[5]), "[resource ") {
		t.Errorf("embedded resources: %q / %q", got[4], got[5])
	}
	if got[6] == "" {
		t.Errorf("server-everything's instructions were not pinned at registration")
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if body := string(reqs[0].Body); !strings.Contains(body, "This is a simple prompt without arguments.") ||
		!strings.Contains(body, `\u003cmcp-server-instructions server=\"everything\"\u003e`) && !strings.Contains(body, `<mcp-server-instructions server=\"everything\">`) {
		t.Fatalf("first request: %.3000s", body)
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "What's weather in Lyon?") && !strings.Contains(body, `What\u0027s weather in Lyon?`) {
		t.Fatalf("args-prompt request: %.2000s", body)
	}

	// The pin of simple-prompt no longer matches what the server lists
	// (as after the server redefined it): it is withheld, the others run.
	e, err := h.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store().PinPut(vault.ToolPin{Server: "everything", Kind: vault.KindPrompt, Tool: "simple-prompt", Hash: "granted-before", Description: "the definition granted"}); err != nil {
		t.Fatal(err)
	}
	got = mustRun(t, h, `
		local _, err = tai.mcp.prompt{server = "everything", name = "simple-prompt"}
		local state
		for _, p in ipairs(assert(tai.mcp.prompts())) do if p.name == "simple-prompt" then state = p.state end end
		local other = tai.mcp.prompt{server = "everything", name = "args-prompt", args = {city = "Oslo"}}
		return err, state, other ~= nil`)
	if !strings.Contains(fmt.Sprint(got[0]), "withheld: the server redefined this prompt") || got[1] != "withheld" || got[2] != true {
		t.Fatalf("after the pin changed: %v", got)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("a withheld prompt reached the model: %d requests", n)
	}
}
