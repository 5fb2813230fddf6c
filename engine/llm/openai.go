package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"tai/mcp/sse"
)

// OpenAIClient is a ChatClient for OpenAI-compatible chat-completions APIs
// (POST {BaseURL}/chat/completions): OpenAI, OpenRouter, Ollama, llama.cpp,
// vLLM, LM Studio. It offers tools as functions, streams with usage
// (stream_options.include_usage) when Complete is given an onText, and
// retries 429 and 5xx as its RetryPolicy allows. It is safe for concurrent
// use.
type OpenAIClient struct {
	cfg ProviderConfig
}

// NewOpenAI returns an OpenAI-compatible client for cfg. An empty
// cfg.Provider becomes "openai", an empty BaseURL DefaultOpenAIBaseURL.
func NewOpenAI(cfg ProviderConfig) *OpenAIClient {
	if cfg.Provider == "" {
		cfg.Provider = ProviderOpenAI
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &OpenAIClient{cfg: cfg}
}

// Model returns the model the client asks for.
func (c *OpenAIClient) Model() string { return c.cfg.Model }

type oaFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

type oaTool struct {
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function oaCallFunction `json:"function"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaRequest struct {
	Model         string          `json:"model"`
	Messages      []oaMessage     `json:"messages"`
	Tools         []oaTool        `json:"tools,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	MaxCompletion int             `json:"max_completion_tokens,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	StreamOptions *oaStreamOption `json:"stream_options,omitempty"`
}

type oaStreamOption struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type oaErrorBody struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// openAIRequest converts req to the chat-completions wire form. The answer
// cap goes in max_completion_tokens for OpenAI itself (its newer models
// refuse max_tokens) and in max_tokens for every other server (which mostly
// know only that).
func openAIRequest(baseURL, model string, maxTokens int, req Request, stream bool) oaRequest {
	out := oaRequest{Model: model, Stream: stream}
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	if strings.HasPrefix(baseURL, DefaultOpenAIBaseURL) {
		out.MaxCompletion = maxTokens
	} else {
		out.MaxTokens = maxTokens
	}
	if stream {
		out.StreamOptions = &oaStreamOption{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		text := m.Content
		om := oaMessage{Role: m.Role, Content: &text}
		switch m.Role {
		case "assistant":
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: tc.ID, Type: "function", Function: oaCallFunction{Name: tc.Name, Arguments: args}})
			}
			if text == "" && len(om.ToolCalls) > 0 {
				om.Content = nil
			}
		case "tool":
			om.ToolCallID = m.ToolCallID
			if m.IsError && !strings.HasPrefix(text, "Error") {
				text = "Error: " + text
				om.Content = &text
			}
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, oaTool{Type: "function", Function: oaFunction{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Parameters)}})
	}
	return out
}

func schemaOrEmpty(s map[string]any) map[string]any {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// Complete implements ChatClient.
func (c *OpenAIClient) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return c.cfg.complete(ctx, wireAPI{
		path: "/chat/completions",
		auth: func(h http.Header) {
			if c.cfg.APIKey != "" {
				h.Set("Authorization", "Bearer "+c.cfg.APIKey)
			}
		},
		parseError: parseOpenAIError,
		readWhole:  c.readWhole,
		readStream: c.readStream,
	}, openAIRequest(c.cfg.BaseURL, c.cfg.Model, c.cfg.MaxTokens, req, onText != nil), onText)
}

func parseOpenAIError(status int, body []byte) (string, string) {
	var e oaErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error != nil {
		typ := e.Error.Type
		if code, ok := e.Error.Code.(string); ok && code != "" && code != typ {
			if typ != "" {
				typ += "/"
			}
			typ += code
		}
		return typ, e.Error.Message
	}
	return "", strings.TrimSpace(string(body))
}

func (c *OpenAIClient) readWhole(body io.Reader) (Response, error) {
	var wire struct {
		Choices []struct {
			Message struct {
				Content   *string      `json:"content"`
				ToolCalls []oaToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *oaUsage `json:"usage"`
	}
	data, err := io.ReadAll(io.LimitReader(body, maxAnswerBody))
	if err != nil {
		return Response{}, &streamError{err: fmt.Errorf("%s model %q: reading the answer: %v", c.cfg.Provider, c.cfg.Model, err), retry: true}
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return Response{}, &streamError{err: fmt.Errorf("%s model %q: undecodable answer: %v", c.cfg.Provider, c.cfg.Model, err)}
	}
	if len(wire.Choices) == 0 {
		typ, msg := parseOpenAIError(200, data)
		if msg == "" {
			msg = "the answer has no choices"
		}
		return Response{}, &streamError{err: &APIError{Provider: c.cfg.Provider, Model: c.cfg.Model, Status: 200, Type: typ, Message: c.cfg.redact(msg), Attempts: 1}}
	}
	ch := wire.Choices[0]
	out := Response{Message: Message{Role: "assistant"}, FinishReason: ch.FinishReason}
	if ch.Message.Content != nil {
		out.Message.Content = *ch.Message.Content
	}
	for i, tc := range ch.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: callID(tc.ID, i), Name: tc.Function.Name, Arguments: jsonArgs(tc.Function.Arguments)})
	}
	if wire.Usage != nil {
		out.Usage = Usage{InputTokens: wire.Usage.PromptTokens, OutputTokens: wire.Usage.CompletionTokens}
	}
	out.FinishReason = normalizeFinish(out.FinishReason, len(out.Message.ToolCalls) > 0)
	return out, nil
}

type oaChunk struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

type callBuilder struct {
	id, name string
	args     strings.Builder
}

func (c *OpenAIClient) readStream(body io.Reader, onText func(string)) (Response, error) {
	events := sse.NewParser(body, maxSSEEvent, nil)
	var text strings.Builder
	var calls []*callBuilder
	byIndex := map[int]*callBuilder{}
	finish := ""
	var usage Usage
	emitted := false
	fail := func(err error) (Response, error) {
		return Response{}, &streamError{err: err, retry: !emitted}
	}
	done := false
	for !done {
		ev, err := events.Next()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if finish != "" {
				break // some servers close without [DONE]
			}
			return fail(fmt.Errorf("%s model %q: the stream ended before the answer was complete", c.cfg.Provider, c.cfg.Model))
		}
		if err != nil {
			return fail(fmt.Errorf("%s model %q: reading the stream: %v", c.cfg.Provider, c.cfg.Model, err))
		}
		if string(ev.Data) == "[DONE]" {
			done = true
			continue
		}
		var ch oaChunk
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			return fail(fmt.Errorf("%s model %q: undecodable stream chunk: %v", c.cfg.Provider, c.cfg.Model, err))
		}
		if ch.Error != nil {
			return fail(&APIError{Provider: c.cfg.Provider, Model: c.cfg.Model, Type: ch.Error.Type, Message: c.cfg.redact(ch.Error.Message), Attempts: 1})
		}
		if ch.Usage != nil {
			usage = Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
		}
		for _, choice := range ch.Choices {
			if d := choice.Delta.Content; d != "" {
				text.WriteString(d)
				emitted = true
				onText(d)
			}
			for _, tc := range choice.Delta.ToolCalls {
				idx := len(calls)
				if tc.Index != nil {
					idx = *tc.Index
				}
				b := byIndex[idx]
				// A new id at a known index is a new call (servers that
				// send each whole call at index 0).
				if b == nil || (tc.ID != "" && b.id != "" && tc.ID != b.id) {
					b = &callBuilder{}
					byIndex[idx] = b
					calls = append(calls, b)
				}
				if tc.ID != "" {
					b.id = tc.ID
				}
				if tc.Function.Name != "" {
					b.name += tc.Function.Name
				}
				b.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != nil && *choice.FinishReason != "" {
				finish = *choice.FinishReason
			}
		}
	}
	out := Response{Message: Message{Role: "assistant", Content: text.String()}, Usage: usage}
	for i, b := range calls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: callID(b.id, i), Name: b.name, Arguments: jsonArgs(b.args.String())})
	}
	out.FinishReason = normalizeFinish(finish, len(out.Message.ToolCalls) > 0)
	return out, nil
}

// callID keeps a provider's call id, or makes one for servers that send
// none.
func callID(id string, i int) string {
	if id != "" {
		return id
	}
	return "call_" + strconv.Itoa(i)
}

// jsonArgs turns a tool call's argument text into Arguments: empty becomes
// {}, anything else is kept as sent, so that text which is not JSON reaches
// the agent unchanged and the model is told where its syntax breaks.
func jsonArgs(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// normalizeFinish maps provider finish reasons onto "stop", "tool_calls",
// "length" and "content_filter". An answer with tool calls finishes with
// "tool_calls", except when the token limit cut it: "length" is kept, since
// the last call's arguments may be incomplete.
func normalizeFinish(reason string, hasCalls bool) string {
	switch reason {
	case "max_tokens", "length", "model_length":
		return "length"
	}
	if hasCalls {
		return "tool_calls"
	}
	switch reason {
	case "", "stop", "end_turn", "stop_sequence", "eos":
		return "stop"
	case "tool_use", "function_call", "tool_calls":
		return "tool_calls"
	case "refusal", "content_filter":
		return "content_filter"
	}
	return reason
}
