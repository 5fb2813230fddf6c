package sampling

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Bounds of a request tai reads: a server asking for more is refused
// before anyone is asked.
const (
	// MaxRequestBytes bounds the text of a request: its messages, system
	// prompt and tool definitions together.
	MaxRequestBytes = 256 * 1024
	// MaxMessages bounds its messages.
	MaxMessages = 100
	// MaxTools bounds the tools it offers the model.
	MaxTools = 64
	// MaxTokens is the most tokens tai lets a server ask for; a larger
	// maxTokens is lowered to it.
	MaxTokens = 16384
)

// Stop reasons a result gives.
const (
	// EndTurn: the model finished.
	EndTurn = "endTurn"
	// MaxTokensReached: the model stopped at maxTokens.
	MaxTokensReached = "maxTokens"
	// ToolUse: the model asks for tools, which the server runs.
	ToolUse = "toolUse"
)

// Content is one item of a message: text, an image or audio (kept as
// their type and size: tai's model is sent a label), a model's request
// to use a tool, or the result of one.
type Content struct {
	// Type is "text", "image", "audio", "tool_use" or "tool_result".
	Type string `json:"type"`
	// Text is a text item's text, or a tool_result's text content joined.
	Text string `json:"text,omitempty"`
	// MIME is an image's or audio's media type.
	MIME string `json:"mimeType,omitempty"`
	// Size is the length of an image's or audio's base64 data.
	Size int `json:"size,omitempty"`
	// ID is a tool_use's id, or the id a tool_result answers.
	ID string `json:"id,omitempty"`
	// Name is a tool_use's tool.
	Name string `json:"name,omitempty"`
	// Input is a tool_use's arguments, as sent.
	Input json.RawMessage `json:"input,omitempty"`
	// IsError marks a tool_result of a tool that failed.
	IsError bool `json:"isError,omitempty"`
}

// Message is one message of the conversation the server sends.
type Message struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content holds its items (one object on the wire is one item here).
	Content []Content `json:"content"`
}

// Tool is a tool the server offers the model for this request; the
// server, not tai, runs it when the model asks.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"inputSchema"`
}

// ModelPreferences are the server's hints about the model (advisory:
// tai answers with the person's current model).
type ModelPreferences struct {
	Hints                []string `json:"hints,omitempty"`
	CostPriority         *float64 `json:"costPriority,omitempty"`
	SpeedPriority        *float64 `json:"speedPriority,omitempty"`
	IntelligencePriority *float64 `json:"intelligencePriority,omitempty"`
}

// Request is a sampling/createMessage request, read and bounded.
type Request struct {
	Messages         []Message         `json:"messages"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	Tools            []Tool            `json:"tools,omitempty"`
	// ToolChoice is toolChoice.mode: "auto", "required" or "none".
	ToolChoice string `json:"toolChoice,omitempty"`
	// Bytes is the size of the request's text (see MaxRequestBytes).
	Bytes int `json:"bytes"`
	// Lowered is the maxTokens asked for when it was over MaxTokens.
	Lowered int `json:"lowered,omitempty"`
}

// TooLargeError is Parse's error for a request past a bound.
type TooLargeError struct{ What string }

func (e *TooLargeError) Error() string {
	return "tai refuses this sampling request: " + e.What
}

// wire is a request as sent.
type wire struct {
	Messages     []wireMessage   `json:"messages"`
	SystemPrompt string          `json:"systemPrompt"`
	MaxTokens    *int            `json:"maxTokens"`
	Temperature  *float64        `json:"temperature"`
	Stop         []string        `json:"stopSequences"`
	Include      string          `json:"includeContext"`
	Prefs        *wirePrefs      `json:"modelPreferences"`
	Tools        []Tool          `json:"tools"`
	ToolChoice   json.RawMessage `json:"toolChoice"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePrefs struct {
	Hints []struct {
		Name string `json:"name"`
	} `json:"hints"`
	Cost         *float64 `json:"costPriority"`
	Speed        *float64 `json:"speedPriority"`
	Intelligence *float64 `json:"intelligencePriority"`
}

type wireContent struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Data     string          `json:"data"`
	MIME     string          `json:"mimeType"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	UseID    string          `json:"toolUseId"`
	Content  json.RawMessage `json:"content"`
	IsError  bool            `json:"isError"`
	Resource *struct {
		Text string `json:"text"`
	} `json:"resource"`
}

// Parse reads a sampling/createMessage request's params. A request that
// is malformed, or past MaxRequestBytes, MaxMessages or MaxTools, is an
// error (a *TooLargeError for the bounds) naming what is wrong.
func Parse(params json.RawMessage) (Request, error) {
	var w wire
	if err := json.Unmarshal(params, &w); err != nil {
		return Request{}, fmt.Errorf("malformed sampling/createMessage params: %v", err)
	}
	if len(w.Messages) == 0 {
		return Request{}, errors.New("sampling/createMessage has no messages")
	}
	if len(w.Messages) > MaxMessages {
		return Request{}, &TooLargeError{fmt.Sprintf("it holds %d messages, over the %d tai reads", len(w.Messages), MaxMessages)}
	}
	if len(w.Tools) > MaxTools {
		return Request{}, &TooLargeError{fmt.Sprintf("it offers %d tools, over the %d tai reads", len(w.Tools), MaxTools)}
	}
	if w.MaxTokens == nil || *w.MaxTokens <= 0 {
		return Request{}, errors.New("sampling/createMessage needs a positive maxTokens")
	}
	r := Request{SystemPrompt: w.SystemPrompt, MaxTokens: *w.MaxTokens, Temperature: w.Temperature,
		StopSequences: w.Stop, IncludeContext: w.Include, Tools: w.Tools}
	if r.MaxTokens > MaxTokens {
		r.Lowered, r.MaxTokens = r.MaxTokens, MaxTokens
	}
	r.Bytes = len(w.SystemPrompt)
	for _, s := range w.Stop {
		r.Bytes += len(s)
	}
	for _, t := range w.Tools {
		if t.Name == "" {
			return Request{}, errors.New("sampling/createMessage offers a tool with no name")
		}
		schema, _ := json.Marshal(t.InputSchema)
		r.Bytes += len(t.Name) + len(t.Description) + len(schema)
	}
	if w.Prefs != nil {
		p := &ModelPreferences{CostPriority: w.Prefs.Cost, SpeedPriority: w.Prefs.Speed, IntelligencePriority: w.Prefs.Intelligence}
		for _, h := range w.Prefs.Hints {
			p.Hints = append(p.Hints, h.Name)
			r.Bytes += len(h.Name)
		}
		r.ModelPreferences = p
	}
	if len(w.ToolChoice) > 0 {
		var tc struct {
			Mode string `json:"mode"`
		}
		if json.Unmarshal(w.ToolChoice, &tc) == nil {
			r.ToolChoice = tc.Mode
		}
	}
	for i, m := range w.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return Request{}, fmt.Errorf("sampling/createMessage message %d has role %q; want user or assistant", i+1, m.Role)
		}
		items, err := contents(m.Content)
		if err != nil {
			return Request{}, fmt.Errorf("sampling/createMessage message %d: %v", i+1, err)
		}
		for _, c := range items {
			r.Bytes += len(c.Text) + len(c.Input)
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: items})
	}
	if r.Bytes > MaxRequestBytes {
		return Request{}, &TooLargeError{fmt.Sprintf("its text is %d bytes, over the %d tai shows a person", r.Bytes, MaxRequestBytes)}
	}
	return r, nil
}

// contents reads a message's content: one item or an array of them.
func contents(raw json.RawMessage) ([]Content, error) {
	var list []wireContent
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("malformed content: %v", err)
		}
	} else {
		var one wireContent
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("malformed content: %v", err)
		}
		list = []wireContent{one}
	}
	out := make([]Content, 0, len(list))
	for _, w := range list {
		c := Content{Type: w.Type}
		switch w.Type {
		case "text":
			c.Text = w.Text
		case "image", "audio":
			c.MIME, c.Size = w.MIME, len(w.Data)
		case "tool_use":
			if w.ID == "" || w.Name == "" {
				return nil, errors.New("a tool_use item needs an id and a name")
			}
			c.ID, c.Name, c.Input = w.ID, w.Name, w.Input
		case "tool_result":
			if w.UseID == "" {
				return nil, errors.New("a tool_result item needs a toolUseId")
			}
			c.ID, c.IsError = w.UseID, w.IsError
			inner, err := contents(w.Content)
			if len(w.Content) > 0 && err != nil {
				return nil, err
			}
			var texts []string
			for _, ic := range inner {
				texts = append(texts, ic.Label())
			}
			c.Text = strings.Join(texts, "\n")
		default:
			return nil, fmt.Errorf("content type %q is not one sampling takes (text, image, audio, tool_use, tool_result)", w.Type)
		}
		out = append(out, c)
	}
	return out, nil
}

// Label is the item as text: a text's text, a label for an image or
// audio ("[image image/png, 12 KB of base64]"), a tool_use as its name
// and arguments, a tool_result as its text.
func (c Content) Label() string {
	switch c.Type {
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %s of base64; not sent to the model]", c.Type, c.MIME, size(c.Size))
	case "tool_use":
		return fmt.Sprintf("[tool_use %s %s]", c.Name, c.Input)
	}
	return c.Text
}

func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// Offers reports whether the request offers the model a tool called name.
func (r *Request) Offers(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Prompt returns the text of the last user message's text items, the
// prompt a person may edit ("" when it has none).
func (r *Request) Prompt() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		var texts []string
		for _, c := range m.Content {
			if c.Type == "text" {
				texts = append(texts, c.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

// SetPrompt replaces the last user message's text items with one holding
// text (its other items stay); a request with no user message gets one.
func (r *Request) SetPrompt(text string) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := &r.Messages[i]
		if m.Role != "user" {
			continue
		}
		kept := []Content{{Type: "text", Text: text}}
		for _, c := range m.Content {
			if c.Type != "text" {
				kept = append(kept, c)
			}
		}
		m.Content = kept
		return
	}
	r.Messages = append(r.Messages, Message{Role: "user", Content: []Content{{Type: "text", Text: text}}})
}

// Action is the person's decision on a request or on its answer.
type Action string

// The decisions.
const (
	// Approve: send the request to the model (as edited), or return the
	// answer to the server.
	Approve Action = "approve"
	// Deny: send nothing; the server gets an error.
	Deny Action = "deny"
)

// Decision is the person's answer to a request.
type Decision struct {
	Action Action `json:"action"`
	// Prompt, when set, replaces the request's prompt (see SetPrompt).
	Prompt *string `json:"prompt,omitempty"`
	// Tools says the model may be offered the request's tools.
	Tools bool `json:"tools,omitempty"`
}

// ToolCall is a model's request, in the answer, to use one of the
// request's tools.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Result is the answer returned to the server.
type Result struct {
	// Model names the model that answered.
	Model string
	// Text is the model's text.
	Text string
	// ToolCalls are the tools the model asks the server to run.
	ToolCalls []ToolCall
	// StopReason is EndTurn, MaxTokensReached or ToolUse.
	StopReason string
}

// MarshalJSON writes the CreateMessageResult: role assistant, the text
// as one item (or the text and tool_use items as an array), the model
// and the stop reason.
func (r Result) MarshalJSON() ([]byte, error) {
	type item struct {
		Type  string          `json:"type"`
		Text  *string         `json:"text,omitempty"`
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
	}
	text := r.Text
	var content any = item{Type: "text", Text: &text}
	if len(r.ToolCalls) > 0 {
		var items []item
		if r.Text != "" {
			items = append(items, item{Type: "text", Text: &text})
		}
		for _, tc := range r.ToolCalls {
			in := tc.Input
			if len(in) == 0 || !json.Valid(in) {
				in = json.RawMessage(`{}`)
			}
			items = append(items, item{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: in})
		}
		content = items
	}
	return json.Marshal(struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
	}{"assistant", content, r.Model, r.StopReason})
}
