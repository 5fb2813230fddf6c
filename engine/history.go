package engine

import (
	"encoding/json"
	"fmt"

	"tai/engine/llm"
)

// SetHistory replaces the agent's conversation with msgs (a conversation
// kept from an earlier run, or a summary that stands for it), forgetting
// the tools enabled through tool_search. It refuses a history a provider
// would reject: a system message (the system prompt is not part of the
// history), an unknown role, or a tool result answering no call. Tool
// call arguments that are not a JSON object are kept as historyArgs keeps
// them.
func (a *Agent) SetHistory(msgs []llm.Message) error {
	calls := map[string]bool{}
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case "user", "assistant":
		case "tool":
			if !calls[m.ToolCallID] {
				return fmt.Errorf("message %d is a tool result for call %q, which no earlier assistant message made", i+1, m.ToolCallID)
			}
		case "system":
			return fmt.Errorf("message %d is a system message: the system prompt is not part of the history", i+1)
		default:
			return fmt.Errorf("message %d has role %q; use user, assistant or tool", i+1, m.Role)
		}
		m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
		for j := range m.ToolCalls {
			calls[m.ToolCalls[j].ID] = true
			m.ToolCalls[j].Arguments = historyArgs(m.ToolCalls[j].Arguments)
		}
		out[i] = m
	}
	a.mu.Lock()
	a.history = out
	a.enabled = nil
	a.mu.Unlock()
	return nil
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
