package llm

// Finish reasons a Response carries, normalized from both providers'
// documented values (Anthropic's stop_reason, OpenAI's finish_reason). A
// value neither provider documents is passed on as the server sent it.
const (
	// FinishStop: the model ended its answer (end_turn, stop_sequence,
	// stop).
	FinishStop = "stop"
	// FinishToolCalls: the model asks for tool calls (tool_use,
	// tool_calls, function_call).
	FinishToolCalls = "tool_calls"
	// FinishLength: the answer reached the output token limit
	// (max_tokens, length).
	FinishLength = "length"
	// FinishContextWindow: the conversation filled the model's context
	// window before the answer was done (model_context_window_exceeded).
	FinishContextWindow = "context_window"
	// FinishPaused: the provider paused a long turn before it was done
	// (pause_turn); sending the conversation back lets it go on.
	FinishPaused = "pause"
	// FinishFiltered: the provider withheld or cut the answer
	// (content_filter).
	FinishFiltered = "content_filter"
	// FinishRefusal: the model declined to answer (refusal; an OpenAI
	// answer with a refusal).
	FinishRefusal = "refusal"
)

// CutOff reports whether an answer finished for reason is incomplete
// because it was stopped mid-way: at the token limit, at the end of the
// context window, or paused. Its last tool call may be cut, so it is not
// to be run.
func CutOff(reason string) bool {
	return reason == FinishLength || reason == FinishContextWindow || reason == FinishPaused
}

// Withheld reports whether an answer finished for reason is not the
// model's answer: filtered by the provider or refused by the model.
func Withheld(reason string) bool {
	return reason == FinishFiltered || reason == FinishRefusal
}

// normalizeFinish maps a provider's finish reason onto the Finish*
// values. An answer with tool calls finishes with FinishToolCalls, except
// when it was cut off: then the reason is kept, since the last call may be
// incomplete.
func normalizeFinish(reason string, hasCalls bool) string {
	var out string
	switch reason {
	case "", "stop", "end_turn", "stop_sequence", "eos":
		out = FinishStop
	case "tool_use", "tool_calls", "function_call":
		out = FinishToolCalls
	case "max_tokens", "length", "model_length":
		out = FinishLength
	case "model_context_window_exceeded":
		out = FinishContextWindow
	case "pause_turn":
		out = FinishPaused
	case "content_filter":
		out = FinishFiltered
	case "refusal":
		out = FinishRefusal
	default:
		out = reason
	}
	if hasCalls && !CutOff(out) {
		return FinishToolCalls
	}
	return out
}
