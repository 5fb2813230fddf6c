package llm

import (
	"context"
	"encoding/json"
)

// Message is one chat message in a provider-neutral form.
type Message struct {
	Role       string     `json:"role"` // "system", "user", "assistant", "tool"
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant messages
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool messages
	Name       string     `json:"name,omitempty"`         // tool messages: the tool's name
	IsError    bool       `json:"is_error,omitempty"`     // tool messages: the tool ran and failed
	// Parts holds the images and audio a tool returned (tool messages),
	// or the images of a server's prompt (user messages), as bytes;
	// Content carries a label for each, which is all a model that cannot
	// take one sees.
	Parts []Part `json:"parts,omitempty"`
}

// Part is an image or audio item of a tool result.
type Part struct {
	Type string `json:"type"` // "image" or "audio"
	MIME string `json:"mime"` // its media type: image/png, audio/wav, …
	Data []byte `json:"data"`
}

// ToolCall is a model's request to run one tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON object, or, when the model sent text that is not
	// valid JSON, that text as sent (then encoded as a JSON string by
	// MarshalJSON).
	Arguments json.RawMessage `json:"arguments"`
}

// MarshalJSON encodes tc, with arguments that are not valid JSON as a JSON
// string of their text, so a call the model garbled never makes encoding
// fail.
func (tc ToolCall) MarshalJSON() ([]byte, error) {
	args := tc.Arguments
	if len(args) == 0 {
		args = json.RawMessage("null")
	} else if !json.Valid(args) {
		q, err := json.Marshal(string(args))
		if err != nil {
			return nil, err
		}
		args = q
	}
	type plain ToolCall
	return json.Marshal(plain{ID: tc.ID, Name: tc.Name, Arguments: args})
}

// ToolSpec is a tool as offered to a model.
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"` // JSON Schema, root type object
}

// Request is one completion request.
type Request struct {
	Messages  []Message  // the system prompt, when any, is Messages[0] with Role "system"
	Tools     []ToolSpec // nil: no tools offered
	MaxTokens int        // 0: the provider's default
}

// Usage counts tokens of one completion.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is the answer to one Request: an assistant message, possibly with
// tool calls.
type Response struct {
	Message      Message // Role "assistant"
	FinishReason string  // "stop", "tool_calls", "length", … as normalized by the provider
	Usage        Usage
}

// ChatClient completes a conversation with one model. Implementations stream
// text deltas to onText as they arrive (onText may be nil) and return the
// whole answer. They retry 429 and 5xx answers, honour ctx for cancellation
// and deadlines, and never put the API key in an error.
type ChatClient interface {
	Complete(ctx context.Context, req Request, onText func(delta string)) (Response, error)
}
