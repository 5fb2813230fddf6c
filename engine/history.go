package engine

import (
	"encoding/json"
	"fmt"
	"slices"

	"tai/engine/llm"
)

// SetHistory replaces the agent's conversation with msgs (a conversation
// kept from an earlier run, or a summary that stands for it), forgetting
// the tools enabled through tool_search. It refuses a history a provider
// would reject: a system message (the system prompt is not part of the
// history), an unknown role, a tool result answering no call, or a tool
// call without its result before the next user or assistant message.
// Tool call arguments that are not a JSON object are kept as historyArgs
// keeps them.
func (a *Agent) SetHistory(msgs []llm.Message) error {
	calls := map[string]bool{}
	var open []string // calls of the last assistant message not yet answered
	opened := 0       // the message that made them
	unanswered := func() error {
		if len(open) == 0 {
			return nil
		}
		return fmt.Errorf("message %d calls tool %q (id %q) and no tool result answers it: add a tool message with that tool_call_id after it, or drop the call",
			opened, callName(msgs[opened-1], open[0]), open[0])
	}
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case "user", "assistant":
			if err := unanswered(); err != nil {
				return err
			}
			open = nil
		case "tool":
			if !calls[m.ToolCallID] {
				return fmt.Errorf("message %d is a tool result for call %q, which no earlier assistant message made", i+1, m.ToolCallID)
			}
			open = slices.DeleteFunc(open, func(id string) bool { return id == m.ToolCallID })
		case "system":
			return fmt.Errorf("message %d is a system message: the system prompt is not part of the history", i+1)
		default:
			return fmt.Errorf("message %d has role %q; use user, assistant or tool", i+1, m.Role)
		}
		m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
		for j := range m.ToolCalls {
			calls[m.ToolCalls[j].ID] = true
			open = append(open, m.ToolCalls[j].ID)
			opened = i + 1
			m.ToolCalls[j].Arguments = historyArgs(m.ToolCalls[j].Arguments)
		}
		out[i] = m
	}
	if err := unanswered(); err != nil {
		return err
	}
	a.mu.Lock()
	a.history = out
	a.enabled = nil
	a.mu.Unlock()
	return nil
}

// callName returns the name of m's call id, for an error message.
func callName(m llm.Message, id string) string {
	for _, tc := range m.ToolCalls {
		if tc.ID == id {
			return tc.Name
		}
	}
	return ""
}

// EstimateTokens is a rough count of the tokens msgs take (about four
// bytes of text per token, as the providers' own rules of thumb say), for
// showing what a conversation costs before the API reports it.
func EstimateTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += 4 + len(m.Content)/4
		for _, tc := range m.ToolCalls {
			b, _ := json.Marshal(tc)
			n += len(b) / 4
		}
	}
	return n
}
