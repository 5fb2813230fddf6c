package engine

import (
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

func TestSetHistory(t *testing.T) {
	a := NewAgent(tool.NewRegistry(vaulttest.Open(t), nil), StaticModel(nil, ""), nil)
	good := []llm.Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: []byte(`not json`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "read_file", Content: "text"},
		{Role: "assistant", Content: "done"},
	}
	if err := a.SetHistory(good); err != nil {
		t.Fatal(err)
	}
	h := a.History()
	if len(h) != 4 || string(h[1].ToolCalls[0].Arguments) != `{"invalid_arguments":"not json"}` {
		t.Fatalf("history %+v", h)
	}
	for _, bad := range [][]llm.Message{
		{{Role: "system", Content: "x"}},
		{{Role: "tool", ToolCallID: "nope"}},
		{{Role: "robot"}},
		// A call without its result, at the end or before the next message.
		{{Role: "user", Content: "hi"}, {Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file"}}}},
		{{Role: "user", Content: "hi"}, {Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file"}}}, {Role: "user", Content: "and?"}},
		// One of two calls answered.
		{{Role: "user", Content: "hi"}, {Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b"}}},
			{Role: "tool", ToolCallID: "c1", Content: "x"}, {Role: "assistant", Content: "done"}},
	} {
		if err := a.SetHistory(bad); err == nil {
			t.Errorf("history %+v accepted", bad)
		}
	}
	if len(a.History()) != 4 {
		t.Fatal("a refused history replaced the conversation")
	}
}
