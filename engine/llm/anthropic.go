package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"tai/mcp/sse"
)

// AnthropicVersion is the anthropic-version header sent with every request.
const AnthropicVersion = "2023-06-01"

// defaultAnthropicMaxTokens is sent when neither the request nor the
// profile caps the answer: the Messages API requires max_tokens.
const defaultAnthropicMaxTokens = 8192

// AnthropicClient is a ChatClient for Anthropic's Messages API (POST
// {BaseURL}/v1/messages): system prompt at the top level, tools as
// tool_use/tool_result blocks, and the event stream (message_start,
// content_block_start/delta/stop with text_delta and input_json_delta,
// message_delta, message_stop, ping, error) when Complete is given an
// onText. It retries 429, 5xx and overload as its RetryPolicy allows. It is
// safe for concurrent use.
type AnthropicClient struct {
	cfg   ProviderConfig
	parts partGate
}

// NewAnthropic returns a Messages API client for cfg. An empty cfg.Provider
// becomes "anthropic", an empty BaseURL DefaultAnthropicBaseURL.
func NewAnthropic(cfg ProviderConfig) *AnthropicClient {
	if cfg.Provider == "" {
		cfg.Provider = ProviderAnthropic
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultAnthropicBaseURL
	}
	// The SDKs' ANTHROPIC_BASE_URL has no /v1; accept one anyway.
	cfg.BaseURL = strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	return &AnthropicClient{cfg: cfg}
}

// Model returns the model the client asks for.
func (c *AnthropicClient) Model() string { return c.cfg.Model }

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content is a tool_result's: its text, or blocks (text and
	// images) when the tool returned images.
	Content any       `json:"content,omitempty"`
	IsError bool      `json:"is_error,omitempty"`
	Source  *anSource `json:"source,omitempty"`
}

// anSource is an image block's source: the bytes, which encoding/json
// writes as base64 straight into the request.
type anSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	Stream    bool        `json:"stream,omitempty"`
}

type anUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u anUsage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// anthropicRequest converts req to the Messages wire form: system messages
// join the top-level system prompt, tool results become tool_result blocks
// in a user message, and consecutive messages of one role merge into one
// (so several tool results answer one assistant turn together, as the API
// requires). Text that is empty or only white space is left out wherever
// it stands (the API refuses such text blocks, and a history holding one,
// resent each turn, would fail every turn), and tool-call ids are made
// ones the API accepts (see wireIDs).
func anthropicRequest(model string, maxTokens int, req Request, stream bool) anRequest {
	out := anRequest{Model: model, MaxTokens: maxTokens, Stream: stream}
	if req.MaxTokens > 0 {
		out.MaxTokens = req.MaxTokens
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = defaultAnthropicMaxTokens
	}
	ids := newWireIDs(true)
	var system []string
	for _, m := range req.Messages {
		var role string
		var blocks []anBlock
		text := m.Content
		if blank(text) {
			text = ""
		}
		switch m.Role {
		case "system":
			if text != "" {
				system = append(system, text)
			}
			continue
		case "assistant":
			role = "assistant"
			if text != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: text})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anBlock{Type: "tool_use", ID: ids.call(tc.ID), Name: tc.Name, Input: objectArgs(tc.Arguments)})
			}
		case "tool":
			role = "user"
			if text == "" {
				text = "(no output)"
			}
			blocks = append(blocks, anBlock{Type: "tool_result", ToolUseID: ids.result(m.ToolCallID), Content: toolResultContent(text, m.Parts), IsError: m.IsError})
		default:
			role = "user"
			if text != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: text})
			}
			for _, p := range m.Parts {
				if sendsImage(p) {
					blocks = append(blocks, anBlock{Type: "image", Source: &anSource{Type: "base64", MediaType: p.MIME, Data: p.Data}})
				}
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			last := &out.Messages[n-1]
			if role == "user" && blocks[0].Type == "tool_result" && last.Content[0].Type != "tool_result" {
				// tool_result blocks must come first in their message.
				last.Content = append(blocks, last.Content...)
			} else {
				last.Content = append(last.Content, blocks...)
			}
			continue
		}
		out.Messages = append(out.Messages, anMessage{Role: role, Content: blocks})
	}
	out.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Parameters)})
	}
	return out
}

// toolResultContent is a tool_result's content: its text alone, or, when
// the tool returned images the API takes, a text block and an image block
// for each.
func toolResultContent(text string, parts []Part) any {
	var blocks []anBlock
	for _, p := range parts {
		if sendsImage(p) {
			blocks = append(blocks, anBlock{Type: "image", Source: &anSource{Type: "base64", MediaType: p.MIME, Data: p.Data}})
		}
	}
	if len(blocks) == 0 {
		return text
	}
	return append([]anBlock{{Type: "text", Text: text}}, blocks...)
}

// blank reports whether text has nothing but white space.
func blank(text string) bool { return strings.TrimSpace(text) == "" }

// anthropicPrefills reports whether model continues an answer the request
// ends with (a prefill): Claude models before 4.6 do; 4.6 and later refuse
// the request. A name that is not a Claude model's (a proxy's alias) is
// given the benefit of the doubt.
func anthropicPrefills(model string) bool {
	parts := strings.Split(strings.ToLower(model), "-")
	if len(parts) == 0 || parts[0] != "claude" {
		return true
	}
	major, minor := -1, 0
	for _, p := range parts[1:] {
		n, err := strconv.Atoi(p)
		if err != nil || len(p) > 2 {
			if major >= 0 {
				break // the version ends at the family name or the date
			}
			continue
		}
		if major < 0 {
			major = n
			continue
		}
		minor = n
		break
	}
	if major < 0 {
		return true
	}
	return major < 4 || major == 4 && minor < 6
}

// ErrPrefill reports a request ending with an assistant message (a
// prefill) for a model that does not continue one.
var ErrPrefill = errors.New("the model does not continue a prefilled answer")

// objectArgs returns args when it is a JSON object, else {} (tool_use input
// must be an object).
func objectArgs(args json.RawMessage) json.RawMessage {
	t := strings.TrimSpace(string(args))
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return json.RawMessage("{}")
}

// Complete implements ChatClient. A request ending with an assistant
// message (a prefill) for a model that refuses one fails with an error
// wrapping ErrPrefill before anything is sent.
func (c *AnthropicClient) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return c.parts.complete(&c.cfg, req, func(req Request) (Response, error) { return c.complete(ctx, req, onText) })
}

func (c *AnthropicClient) complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	wire := anthropicRequest(c.cfg.Model, c.cfg.MaxTokens, req, onText != nil)
	if n := len(wire.Messages); n > 0 && wire.Messages[n-1].Role == "assistant" && !anthropicPrefills(c.cfg.Model) {
		return Response{}, fmt.Errorf("%s model %q: %w: end the messages with a user message (or pick a model before Claude 4.6)", c.cfg.Provider, c.cfg.Model, ErrPrefill)
	}
	return c.cfg.complete(ctx, wireAPI{
		path:       "/v1/messages",
		auth:       func(h http.Header) { providerOf(ProviderAnthropic).auth(h, c.cfg.APIKey) },
		parseError: parseAnthropicError,
		readWhole:  c.readWhole,
		readStream: c.readStream,
	}, wire, onText)
}

type anErrorBody struct {
	Type  string `json:"type"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func parseAnthropicError(status int, body []byte) (string, string) {
	var e anErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error != nil {
		return e.Error.Type, e.Error.Message
	}
	return "", strings.TrimSpace(string(body))
}

type anAnswer struct {
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      anUsage   `json:"usage"`
}

func (c *AnthropicClient) readWhole(body io.Reader) (Response, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxAnswerBody))
	if err != nil {
		return Response{}, &streamError{err: fmt.Errorf("%s model %q: reading the answer: %v", c.cfg.Provider, c.cfg.Model, err), retry: true}
	}
	var wire anAnswer
	if err := json.Unmarshal(data, &wire); err != nil {
		return Response{}, &streamError{err: fmt.Errorf("%s model %q: undecodable answer: %v", c.cfg.Provider, c.cfg.Model, err)}
	}
	var text strings.Builder
	out := Response{Message: Message{Role: "assistant"}, Usage: Usage{InputTokens: wire.Usage.input(), OutputTokens: wire.Usage.OutputTokens}}
	for _, b := range wire.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: objectArgs(b.Input)})
		}
	}
	out.Message.Content = text.String()
	out.FinishReason = normalizeFinish(wire.StopReason, len(out.Message.ToolCalls) > 0)
	return out, nil
}

type anEvent struct {
	Type         string    `json:"type"`
	Index        int       `json:"index"`
	Message      *anAnswer `json:"message"`
	ContentBlock *anBlock  `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anBlockBuilder struct {
	typ, id, name string
	input         json.RawMessage
	json          strings.Builder
}

func (c *AnthropicClient) readStream(body io.Reader, onText func(string)) (Response, error) {
	events := sse.NewParser(body, maxSSEEvent, nil)
	var text strings.Builder
	var blocks []*anBlockBuilder
	byIndex := map[int]*anBlockBuilder{}
	var usage Usage
	stop := ""
	emitted := false
	fail := func(err error) (Response, error) {
		return Response{}, &streamError{err: err, retry: !emitted}
	}
	started, done := false, false
	for !done {
		ev, err := events.Next()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fail(fmt.Errorf("%s model %q: the stream ended before message_stop", c.cfg.Provider, c.cfg.Model))
		}
		if err != nil {
			return fail(fmt.Errorf("%s model %q: reading the stream: %v", c.cfg.Provider, c.cfg.Model, err))
		}
		evType := ev.Type
		if evType == "message" { // the stream named no type
			evType = ""
		}
		var e anEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return fail(fmt.Errorf("%s model %q: undecodable %s event: %v", c.cfg.Provider, c.cfg.Model, evType, err))
		}
		if e.Type == "" {
			e.Type = evType
		}
		switch e.Type {
		case "ping":
		case "error":
			typ, msg := "", "unspecified error"
			if e.Error != nil {
				typ, msg = e.Error.Type, e.Error.Message
			}
			return fail(&APIError{Provider: c.cfg.Provider, Model: c.cfg.Model, Type: typ, Message: c.cfg.redact(msg), Attempts: 1})
		case "message_start":
			started = true
			if e.Message != nil {
				usage.InputTokens = e.Message.Usage.input()
				usage.OutputTokens = e.Message.Usage.OutputTokens
			}
		case "content_block_start":
			if e.ContentBlock == nil {
				return fail(fmt.Errorf("%s model %q: content_block_start without content_block", c.cfg.Provider, c.cfg.Model))
			}
			b := &anBlockBuilder{typ: e.ContentBlock.Type, id: e.ContentBlock.ID, name: e.ContentBlock.Name, input: e.ContentBlock.Input}
			byIndex[e.Index] = b
			blocks = append(blocks, b)
			if b.typ == "text" && e.ContentBlock.Text != "" {
				text.WriteString(e.ContentBlock.Text)
				emitted = true
				onText(e.ContentBlock.Text)
			}
		case "content_block_delta":
			b := byIndex[e.Index]
			if b == nil || e.Delta == nil {
				return fail(fmt.Errorf("%s model %q: content_block_delta for unknown block %d", c.cfg.Provider, c.cfg.Model, e.Index))
			}
			switch e.Delta.Type {
			case "text_delta":
				if e.Delta.Text != "" {
					text.WriteString(e.Delta.Text)
					emitted = true
					onText(e.Delta.Text)
				}
			case "input_json_delta":
				b.json.WriteString(e.Delta.PartialJSON)
			}
		case "content_block_stop":
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				stop = e.Delta.StopReason
			}
			if e.Usage != nil {
				usage.OutputTokens = e.Usage.OutputTokens
				if in := e.Usage.input(); in > 0 {
					usage.InputTokens = in
				}
			}
		case "message_stop":
			done = true
		}
	}
	if !started {
		return fail(fmt.Errorf("%s model %q: the stream has no message_start", c.cfg.Provider, c.cfg.Model))
	}
	out := Response{Message: Message{Role: "assistant", Content: text.String()}, Usage: usage}
	for _, b := range blocks {
		if b.typ != "tool_use" {
			continue
		}
		args := json.RawMessage(b.json.String())
		if b.json.Len() == 0 {
			args = b.input
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: jsonArgs(string(args))})
	}
	out.FinishReason = normalizeFinish(stop, len(out.Message.ToolCalls) > 0)
	return out, nil
}
