package lua

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp/github/githubtest"
)

const slackAnswer = "Found it in the docs.\n```json\n" +
	`{"command": "npx", "args": ["-y", "slack-mcp-server@latest", "--transport", "stdio"], "env": {"SLACK_MCP_XOXP_TOKEN": "${SLACK_MCP_XOXP_TOKEN}"}, "file": "docs/03-configuration-and-usage.md", "line": 56}` +
	"\n```\n"

// TestResolveAgentPass resolves a repository whose files name no server
// (the README only links to its docs) through the subagent pass driven by
// a scripted model: it is offered only the read-only repository tools,
// its calls are audited, and its one fenced JSON entry is the answer.
func TestResolveAgentPass(t *testing.T) {
	fakeGitHub(t)
	h, srv, _ := modelHost(t, tool.Interactive,
		llmtest.Calls(llmtest.Call("repo_readme", `{}`)),
		llmtest.Calls(llmtest.Call("repo_file", `{"path":"docs/03-configuration-and-usage.md"}`), llmtest.Call("repo_list", `{"path":""}`)),
		llmtest.Say(slackAnswer),
	)
	got := mustRun(t, h, `
		local r = assert(tai.mcp.resolve("https://github.com/korotovsky/slack-mcp-server"))
		return r.pass, r.entry.command, table.concat(r.entry.args, " "), r.entry.env.SLACK_MCP_XOXP_TOKEN, r.file, r.line, r.entry.source`)
	want := []any{"subagent", "npx", "-y slack-mcp-server@latest --transport stdio", "${SLACK_MCP_XOXP_TOKEN}", "docs/03-configuration-and-usage.md", int64(56), "github:korotovsky/slack-mcp-server"}
	for i := range want {
		if got[i] != want[i] && !(i == 5 && got[i] == float64(56)) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	// the same repository again (the add after /mcp add's preview) reuses
	// the resolution: the subagent does not run twice
	again := mustRun(t, h, `return assert(tai.mcp.resolve("github.com/korotovsky/slack-mcp-server/")).pass`)
	reqs := srv.Requests()
	if len(reqs) != 3 || again[0] != "subagent" {
		t.Fatalf("%d model requests, then %v", len(reqs), again)
	}
	if names := strings.Join(reqs[0].ToolNames(), ","); names != "repo_readme,repo_list,repo_file" {
		t.Fatalf("offered %s; want only the read-only repository tools", names)
	}
	if !strings.Contains(reqs[0].Messages[0].Text, "exactly one fenced") || !strings.Contains(reqs[0].LastUser(), "korotovsky/slack-mcp-server") {
		t.Fatalf("brief/task: %q / %q", reqs[0].Messages[0].Text, reqs[0].LastUser())
	}
	results := reqs[1].ToolResults()
	if len(results) != 1 || !strings.Contains(results[0].Text, "slack-mcp-server") {
		t.Fatalf("repo_readme result: %+v", results)
	}
	store, err := h.Vault()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := store.AuditTail(10, "tool")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Subject] = true
	}
	for _, n := range []string{"repo_readme", "repo_file", "repo_list"} {
		if !seen[n] {
			t.Errorf("the subagent's %s call is not audited: %+v", n, entries)
		}
	}
}

// TestResolveAgentFailures: each way the subagent pass can fail is a loud
// error naming both passes, and mcp_add stores nothing.
func TestResolveAgentFailures(t *testing.T) {
	for _, c := range []struct {
		name    string
		turns   []llmtest.Turn
		rule    func(llmtest.Request) llmtest.Turn
		files   map[string]string
		steps   int
		timeout time.Duration
		// slowReadme makes the API answer every README read after the
		// deterministic pass's only when the reader has gone.
		slowReadme bool
		says       string
	}{
		{name: "prose", turns: []llmtest.Turn{llmtest.Say("Run npx slack-mcp-server and you are set.")}, says: "answered in prose"},
		{name: "two blocks", turns: []llmtest.Turn{llmtest.Say(slackAnswer + "\nor\n```json\n{\"url\": \"https://mcp.slack.example/mcp\"}\n```")}, says: "2 fenced blocks"},
		{name: "error object", turns: []llmtest.Turn{llmtest.Say("```json\n{\"error\": \"no install instructions\", \"evidence\": \"README.md links to docs/ only\"}\n```")}, says: "found no server: no install instructions (evidence: README.md links to docs/ only)"},
		{name: "a shell command", turns: []llmtest.Turn{llmtest.Say("```json\n{\"command\": \"sh\", \"args\": [\"-c\", \"curl x | sh\"]}\n```")}, says: "runs sh"},
		{name: "out of steps", rule: func(llmtest.Request) llmtest.Turn {
			return llmtest.Calls(llmtest.Call("repo_readme", `{}`))
		}, steps: 3, says: "ran out of its 3 steps"},
		{name: "deadline", rule: func(llmtest.Request) llmtest.Turn {
			return llmtest.Calls(llmtest.Call("repo_readme", `{}`))
		}, slowReadme: true, timeout: 300 * time.Millisecond, says: "deadline"},
		{name: "a brief asking for a write tool", files: map[string]string{"lua/resolve.lua": `
			local base = require("builtin.resolve")
			local M = setmetatable({}, { __index = base })
			M.agent_tools = { "repo_readme", "write_file" }
			return M`}, says: `asks for the tool "write_file"`},
		{name: "an answer reader that fails", turns: []llmtest.Turn{llmtest.Say(slackAnswer)}, files: map[string]string{"lua/resolve.lua": `
			local base = require("builtin.resolve")
			local M = setmetatable({}, { __index = base })
			function M:agent_answer(text, gh) local t = nil; return t.x end
			return M`}, says: "failed reading it (an internal error: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fakeGitHub(t)
			if c.slowReadme {
				var readmes atomic.Int32
				api := githubtest.Handler(root, nil)
				slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.Contains(r.URL.Path, "/readme") && readmes.Add(1) > 1 {
						<-r.Context().Done()
						return
					}
					api.ServeHTTP(w, r)
				}))
				t.Cleanup(slow.Close)
				t.Setenv("TAI_GITHUB_API", slow.URL)
			}
			srv := llmtest.NewOpenAI(t, c.turns...)
			if c.rule != nil {
				srv.SetRule(c.rule)
			}
			env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
			h := newHost(t, Options{
				Vault: openTestVault(t, "pw"),
				Mode:  tool.Yolo,
				Engine: &engine.Options{
					Dir:    t.TempDir(),
					Getenv: func(k string) string { return env[k] },
					Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}},
				},
			}, c.files)
			h.Resolver()
			h.modules.resolve.steps, h.modules.resolve.timeout = c.steps, c.timeout
			got := mustRun(t, h, `
				local rep, err = tai.mcp.add({ source = "github.com/korotovsky/slack-mcp-server" })
				return rep == nil, tostring(err), #assert(tai.mcp.list())`)
			msg, _ := got[1].(string)
			if got[0] != true || got[2] != int64(0) && got[2] != float64(0) {
				t.Fatalf("add = %v", got)
			}
			for _, w := range []string{c.says, "no server entry found: the README shows no config block or run line", "the model pass"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "stack traceback") {
				t.Errorf("a Lua stack reached the person: %q", msg)
			}
			if c.name == "a brief asking for a write tool" && len(srv.Requests()) != 0 {
				t.Errorf("the model was asked %d times", len(srv.Requests()))
			}
		})
	}
}
