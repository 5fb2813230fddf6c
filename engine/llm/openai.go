package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	cfg   ProviderConfig
	parts partGate
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
	Role string `json:"role"`
	// Content is *string (nil: null), or []oaPart in a user message
	// that carries images (a tool's, or a prompt's).
	Content    any          `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

// oaPart is a user message's content part: text or an image.
type oaPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *dataURL    `json:"image_url,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
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

// MaxOpenAITools is how many tools the chat-completions API takes in one
// request (its documented maxItems); more are left off, the last first.
const MaxOpenAITools = 128

// Values of ProviderConfig.TokenField and Profile.MaxTokensField: the
// request field that carries the answer's token cap.
const (
	FieldMaxTokens           = "max_tokens"
	FieldMaxCompletionTokens = "max_completion_tokens"
)

// openAITokenField returns the field that carries the token cap for
// model: field when set, else max_completion_tokens for OpenAI's own
// models that refuse max_tokens or have it deprecated (o-series, gpt-4.1,
// gpt-4o, gpt-5 and later, also behind a proxy or as "openai/o3") and on
// OpenAI's API itself, else max_tokens, which other servers mostly know.
func openAITokenField(field, baseURL, model string) string {
	if field != "" {
		return field
	}
	if strings.HasPrefix(baseURL, DefaultOpenAIBaseURL) {
		return FieldMaxCompletionTokens
	}
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9' {
		return FieldMaxCompletionTokens
	}
	for _, p := range []string{"gpt-4.1", "gpt-4o", "gpt-5", "gpt-6", "chatgpt-", "codex-"} {
		if strings.HasPrefix(m, p) {
			return FieldMaxCompletionTokens
		}
	}
	return FieldMaxTokens
}

// openAIRequest converts req to the chat-completions wire form: the token
// cap in the field openAITokenField names, tool-call ids unique in the
// request (see wireIDs), at most MaxOpenAITools tools.
func openAIRequest(cfg ProviderConfig, req Request, stream bool) oaRequest {
	out := oaRequest{Model: cfg.Model, Stream: stream}
	maxTokens := cfg.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	if openAITokenField(cfg.TokenField, cfg.BaseURL, cfg.Model) == FieldMaxCompletionTokens {
		out.MaxCompletion = maxTokens
	} else {
		out.MaxTokens = maxTokens
	}
	if stream {
		out.StreamOptions = &oaStreamOption{IncludeUsage: true}
	}
	ids := newWireIDs(false)
	// images holds the parts (images, and audio for an audio model) of
	// the tool messages just encoded: the API takes them in user messages
	// only, so they follow the last tool message of the run, in one user
	// message.
	var images []oaPart
	flush := func() {
		if len(images) > 0 {
			out.Messages = append(out.Messages, oaMessage{Role: "user", Content: images})
			images = nil
		}
	}
	for _, m := range req.Messages {
		if m.Role != "tool" {
			flush()
		}
		text := m.Content
		om := oaMessage{Role: m.Role, Content: &text}
		switch m.Role {
		case "assistant":
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: ids.call(tc.ID), Type: "function", Function: oaCallFunction{Name: tc.Name, Arguments: args}})
			}
			if text == "" && len(om.ToolCalls) > 0 {
				om.Content = nil
			}
		case "user":
			// A user message's images (a server's prompt) go in its own
			// content, after its text.
			var parts []oaPart
			for _, p := range m.Parts {
				if sendsImage(p) {
					parts = append(parts, oaPart{Type: "image_url", ImageURL: (*dataURL)(&p)})
				}
			}
			if len(parts) > 0 {
				om.Content = append([]oaPart{{Type: "text", Text: text}}, parts...)
			}
		case "tool":
			om.ToolCallID = ids.result(m.ToolCallID)
			if m.IsError && !strings.HasPrefix(text, "Error") {
				text = "Error: " + text
				om.Content = &text
			}
			for _, p := range m.Parts {
				switch {
				case sendsImage(p):
					images = append(images, oaPart{Type: "text", Text: "The image returned by tool call " + om.ToolCallID + " (" + m.Name + "):"},
						oaPart{Type: "image_url", ImageURL: (*dataURL)(&p)})
				case audioFormat(p) != "" && takesAudio(cfg.Model):
					images = append(images, oaPart{Type: "text", Text: "The audio returned by tool call " + om.ToolCallID + " (" + m.Name + "):"},
						oaPart{Type: "input_audio", InputAudio: (*inputAudio)(&p)})
				}
			}
		}
		out.Messages = append(out.Messages, om)
	}
	flush()
	for _, t := range req.Tools[:min(len(req.Tools), MaxOpenAITools)] {
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
	return c.parts.complete(&c.cfg, req, func(req Request) (Response, error) { return c.complete(ctx, req, onText) })
}

func (c *OpenAIClient) complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return c.cfg.complete(ctx, wireAPI{
		path:       "/chat/completions",
		auth:       func(h http.Header) { bearer(h, c.cfg.APIKey) },
		parseError: parseOpenAIError,
		readWhole:  c.readWhole,
		readStream: c.readStream,
	}, openAIRequest(c.cfg, req, onText != nil), onText)
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
				Refusal   *string      `json:"refusal"`
				ToolCalls []oaToolCall `json:"tool_calls"`
				// FunctionCall is the deprecated single call a server may
				// still answer with (finish reason function_call).
				FunctionCall *oaCallFunction `json:"function_call"`
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
	for _, tc := range ch.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: callID(tc.ID), Name: tc.Function.Name, Arguments: jsonArgs(tc.Function.Arguments)})
	}
	if fc := ch.Message.FunctionCall; fc != nil && fc.Name != "" {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: newCallID(), Name: fc.Name, Arguments: jsonArgs(fc.Arguments)})
	}
	if wire.Usage != nil {
		out.Usage = Usage{InputTokens: wire.Usage.PromptTokens, OutputTokens: wire.Usage.CompletionTokens}
	}
	out.FinishReason = normalizeFinish(out.FinishReason, len(out.Message.ToolCalls) > 0)
	if r := ch.Message.Refusal; r != nil && *r != "" {
		out.Message.Content = refusalText(out.Message.Content, *r)
		out.FinishReason = FinishRefusal
	}
	return out, nil
}

type oaChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
			Refusal string `json:"refusal"`
			// FunctionCall is the deprecated single call, streamed.
			FunctionCall *oaCallFunction `json:"function_call"`
			ToolCalls    []struct {
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
	var text, refusal strings.Builder
	var calls []*callBuilder
	var function *callBuilder // the deprecated function_call, when streamed
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
			if d := choice.Delta.Refusal; d != "" {
				if refusal.Len() == 0 && text.Len() > 0 {
					d = "\n\n" + d
				}
				refusal.WriteString(d)
				emitted = true
				onText(d)
			}
			if fc := choice.Delta.FunctionCall; fc != nil {
				if function == nil {
					function = &callBuilder{}
					calls = append(calls, function)
				}
				function.name += fc.Name
				function.args.WriteString(fc.Arguments)
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
	for _, b := range calls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: callID(b.id), Name: b.name, Arguments: jsonArgs(b.args.String())})
	}
	out.FinishReason = normalizeFinish(finish, len(out.Message.ToolCalls) > 0)
	if refusal.Len() > 0 {
		out.Message.Content = refusalText(out.Message.Content, strings.TrimPrefix(refusal.String(), "\n\n"))
		out.FinishReason = FinishRefusal
	}
	return out, nil
}

// refusalText is the text an answer with a refusal keeps: what the model
// said, then its refusal, so the refusal is shown and stays in the
// conversation.
func refusalText(content, refusal string) string {
	if content == "" {
		return refusal
	}
	return content + "\n\n" + refusal
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
