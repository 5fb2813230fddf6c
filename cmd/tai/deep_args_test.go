package main

import (
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestDeeplyNestedArgumentsKeepTheConversation: a model that calls a tool
// with arguments nested hundreds of levels deep gets an error naming the
// bound, and tai -p ends normally with the conversation kept, rather than
// failing as it saves the conversation.
func TestDeeplyNestedArgumentsKeepTheConversation(t *testing.T) {
	e := newEnv(t)
	deep := strings.Repeat(`{"y":`, 300) + "null" + strings.Repeat("}", 300)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("list_dir", `{"path":".","deep":`+deep+`}`)))
	srv.SetRule(fromToolResults)
	r := e.runInput(t, e.modelVars(srv), "", "--clean", "-p", "look around")
	if r.status != 0 || strings.Contains(r.stderr, "not kept") || strings.Contains(r.stderr, "__len") {
		t.Fatalf("exit status %d; stderr:\n%s", r.status, r.stderr)
	}
	var answered bool
	for _, req := range srv.Requests() {
		for _, res := range req.ToolResults() {
			answered = answered || strings.Contains(res.Text, "levels deep, more than the 64 a tool takes")
		}
	}
	if !answered {
		t.Fatal("the model was not told the arguments nest too deep")
	}
	if r := e.run(t, "--clean", "-e", `print(#tai.conversations.list())`); strings.TrimSpace(r.stdout) != "1" {
		t.Fatalf("the conversation was not kept: %+v", r)
	}
}
