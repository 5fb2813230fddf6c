package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
)

func TestForkToolSubsetAndSteps(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("shell", `{"command":"echo hi"}`, "fork", `{"task":"nested"}`, "echo", `{}`),
		calls("echo", `{}`),
		say("never reached"),
	}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	addTool(t, e.Tools(), textTool("echo", "echo back", true, "echoed"))
	turn, err := newSession(t, e).Fork(turnCtx(t), ForkOptions{Task: "research", System: "brief", Tools: []string{"echo"}, MaxSteps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !turn.Exhausted || turn.Steps != 2 {
		t.Fatalf("fork turn = %+v; want exhausted after 2 steps", turn)
	}
	reqs := client.requests()
	if len(reqs) != 2 {
		t.Fatalf("model called %d times", len(reqs))
	}
	if reqs[0].Messages[0].Content != "brief" || reqs[0].Messages[1].Content != "research" {
		t.Fatalf("fork request starts %+v", reqs[0].Messages[:2])
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "echo" {
		t.Fatalf("fork offered %v; want only echo", names(reqs[0].Tools))
	}
	res := reqs[1].Messages[len(reqs[1].Messages)-3:]
	for i, want := range []string{"not available to this agent", "not available to this agent", "echoed"} {
		if !strings.Contains(res[i].Content, want) {
			t.Errorf("result %d = %q, want %q", i, res[i].Content, want)
		}
	}
}

func TestForkDeadline(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		func(ctx context.Context, _ llm.Request, _ func(string)) (llm.Response, error) {
			<-ctx.Done()
			return llm.Response{}, ctx.Err()
		},
	}}
	e := newEngine(t, client, nil)
	_, err := newSession(t, e).Fork(turnCtx(t), ForkOptions{Task: "hang", Timeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "deadline of 50ms") {
		t.Fatalf("err = %v; want the deadline named", err)
	}
	if _, err := newSession(t, e).Fork(turnCtx(t), ForkOptions{}); err == nil {
		t.Fatal("an empty task was accepted")
	}
}

func TestForkToolInAgent(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("fork", `{"task":"find the answer","tools":["echo"],"max_steps":3}`), // parent
		calls("echo", `{}`),                            // subagent step 1
		say("the answer is echoed"),                    // subagent step 2
		say("the subagent says: the answer is echoed"), // parent
	}}
	p := &prompter{allow: true}
	e := newEngine(t, client, &Options{Prompter: p})
	addTool(t, e.Tools(), textTool("echo", "echo back", false, "echoed"))
	a := newSession(t, e).NewAgent(nil)
	turn, err := a.RunTurn(turnCtx(t), "delegate it", nil)
	if err != nil || turn.Text != "the subagent says: the answer is echoed" {
		t.Fatalf("turn = %+v, %v", turn, err)
	}
	var asked []string
	for _, c := range p.seen() {
		asked = append(asked, c.Tool)
	}
	if strings.Join(asked, ",") != "fork,echo" {
		t.Fatalf("approvals = %v; the fork and its inner call are each gated", asked)
	}
	reqs := client.requests()
	if last := reqs[3].Messages[len(reqs[3].Messages)-1]; last.Content != "the answer is echoed" || last.IsError {
		t.Fatalf("fork result = %+v", last)
	}
	if len(reqs[1].Messages) != 1 || reqs[1].Messages[0].Content != "find the answer" {
		t.Fatalf("the subagent does not start fresh: %+v", reqs[1].Messages)
	}
	checkHistory(t, a.History())
	if bad := dispatch(t, e, "fork", map[string]any{"task": "x", "max_steps": 500.0}); !bad.IsError {
		t.Fatalf("max_steps over the bound accepted: %s", bad.Text())
	}
}

func TestForkUnmatchedTools(t *testing.T) {
	cases := []struct {
		name  string
		tools []string
		want  []string // "" in want: the fork runs
	}{
		{name: "typo", tools: []string{"echo", "reed_file", "mcp_nope_*"}, want: []string{`no tool matches "reed_file", "mcp_nope_*"`, "the tools are:", "read_file", "echo"}},
		{name: "fork itself", tools: []string{"fork"}, want: []string{`no tool matches "fork"`, "never available to a subagent"}},
		{name: "malformed", tools: []string{"read_[file"}, want: []string{`tool pattern "read_[file" is malformed`}},
		{name: "all match", tools: []string{"echo", "read_*"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){say("done")}}
			e := newEngine(t, client, &Options{Mode: tool.Yolo})
			addTool(t, e.Tools(), textTool("echo", "echo back", true, "echoed"))
			turn, err := newSession(t, e).Fork(turnCtx(t), ForkOptions{Task: "research", Tools: tc.tools})
			if len(tc.want) == 0 {
				if err != nil || turn.Text != "done" {
					t.Fatalf("fork: %+v, %v", turn, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("fork ran with tools %v: %+v", tc.tools, turn)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if n := len(client.requests()); n != 0 {
				t.Errorf("the model was asked %d times", n)
			}
		})
	}
}

func TestForkToolReportsHowTheSubagentEnded(t *testing.T) {
	answer := func(text, reason string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
		return func(context.Context, llm.Request, func(string)) (llm.Response, error) {
			return llm.Response{Message: llm.Message{Role: "assistant", Content: text}, FinishReason: reason}, nil
		}
	}
	cases := []struct {
		name    string
		step    func(context.Context, llm.Request, func(string)) (llm.Response, error)
		want    string
		isError bool
	}{
		{name: "answer", step: answer("found it", "stop"), want: "found it"},
		{name: "empty", step: answer("", "stop"), want: "[the subagent returned an empty answer]", isError: true},
		{name: "filtered", step: answer("partial", "content_filter"), want: "partial\n[the subagent's answer was withheld", isError: true},
		{name: "truncated", step: answer("long", "length"), want: "long\n[the subagent's answer was cut off"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){tc.step}}, &Options{Mode: tool.Yolo})
			res := dispatch(t, e, "fork", map[string]any{"task": "look"})
			if !strings.HasPrefix(res.Text(), tc.want) || res.IsError != tc.isError {
				t.Errorf("fork result %q (error %v), want %q (error %v)", res.Text(), res.IsError, tc.want, tc.isError)
			}
		})
	}
}

// TestForkOwnTools gives a fork tools of its own: they are the only ones
// offered, they run and are audited, and the registry's tools (write_file)
// are not available to it.
func TestForkOwnTools(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("repo_read", `{"path":"README.md"}`, "write_file", `{"path":"x","content":"y"}`),
		say("done"),
	}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	own := textTool("repo_read", "read a repository file", true, "# readme")
	turn, err := newSession(t, e).Fork(turnCtx(t), ForkOptions{Task: "read", System: "brief", Own: []tool.Tool{own}, Tools: []string{"write_file"}, MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "done" {
		t.Fatalf("turn = %+v", turn)
	}
	reqs := client.requests()
	if got := names(reqs[0].Tools); len(got) != 1 || got[0] != "repo_read" {
		t.Fatalf("offered %v; want only repo_read", got)
	}
	res := reqs[1].Messages[len(reqs[1].Messages)-2:]
	if !strings.Contains(res[0].Content, "# readme") || !strings.Contains(res[1].Content, "not available to this agent") {
		t.Fatalf("results = %q, %q", res[0].Content, res[1].Content)
	}
	entries, err := e.Store().AuditTail(5, "tool")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range entries {
		found = found || a.Subject == "repo_read"
	}
	if !found {
		t.Fatalf("the own tool's call is not audited: %+v", entries)
	}
	if _, ok := e.Tools().Get("repo_read"); ok {
		t.Fatal("the fork's own tool leaked into the registry")
	}
}
