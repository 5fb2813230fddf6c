package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type oaWireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parseOpenAI decodes and validates a chat-completions request as the API
// does: a model, messages with known roles, every assistant tool call
// answered by a tool message before the next user or assistant message, and
// no tool message without its call.
func parseOpenAI(body []byte) (Request, error) {
	var wire struct {
		Model     string `json:"model"`
		Stream    bool   `json:"stream"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCalls  []oaWireCall    `json:"tool_calls"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return Request{}, fmt.Errorf("we could not parse the JSON body of your request: %v", err)
	}
	req := Request{Model: wire.Model, Stream: wire.Stream, MaxTokens: wire.MaxTokens}
	for _, t := range wire.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	pending := map[string]bool{}
	for i, m := range wire.Messages {
		var text string
		var imgs, audio []Image
		if len(m.Content) > 0 && string(m.Content) != "null" {
			if err := json.Unmarshal(m.Content, &text); err != nil {
				var parts []struct {
					Type     string `json:"type"`
					Text     string `json:"text"`
					ImageURL struct {
						URL string `json:"url"`
					} `json:"image_url"`
					InputAudio struct {
						Data   []byte `json:"data"`
						Format string `json:"format"`
					} `json:"input_audio"`
				}
				if err := json.Unmarshal(m.Content, &parts); err != nil {
					return req, fmt.Errorf("messages[%d].content: expected a string or an array of parts", i)
				}
				for j, p := range parts {
					text += p.Text
					if p.Type == "input_audio" {
						if m.Role != "user" {
							return req, fmt.Errorf("messages[%d].content[%d]: input_audio parts are only allowed in user messages", i, j)
						}
						audio = append(audio, Image{MIME: p.InputAudio.Format, Data: p.InputAudio.Data})
					}
					if p.Type != "image_url" {
						continue
					}
					if m.Role != "user" {
						return req, fmt.Errorf("messages[%d].content[%d]: image_url parts are only allowed in user messages", i, j)
					}
					img, err := dataImage(p.ImageURL.URL)
					if err != nil {
						return req, fmt.Errorf("messages[%d].content[%d].image_url: %v", i, j, err)
					}
					imgs = append(imgs, img)
				}
			}
		}
		msg := Message{Role: m.Role, Text: text, ToolCallID: m.ToolCallID, Images: imgs, Audio: audio}
		switch m.Role {
		case "system", "developer", "user":
			if len(pending) > 0 {
				return req, fmt.Errorf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message; messages[%d] is %q)", i, m.Role)
			}
		case "assistant":
			if len(pending) > 0 {
				return req, fmt.Errorf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (messages[%d])", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Function.Name == "" {
					return req, fmt.Errorf("messages[%d].tool_calls: id and function.name are required", i)
				}
				if !json.Valid([]byte(c.Function.Arguments)) {
					return req, fmt.Errorf("messages[%d].tool_calls[%s].function.arguments is not valid JSON", i, c.ID)
				}
				pending[c.ID] = true
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			if len(m.Content) == 0 || string(m.Content) == "null" {
				if len(m.ToolCalls) == 0 {
					return req, fmt.Errorf("messages[%d]: an assistant message needs content or tool_calls", i)
				}
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return req, fmt.Errorf("invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[%d] tool_call_id %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		default:
			return req, fmt.Errorf("invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'. (messages[%d].role)", m.Role, i)
		}
		req.Messages = append(req.Messages, msg)
	}
	switch {
	case req.Model == "":
		return req, errors.New("you must provide a model parameter")
	case len(req.Messages) == 0:
		return req, errors.New("[] is too short - 'messages'")
	case len(pending) > 0:
		return req, errors.New("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (the conversation ends with unanswered tool calls)")
	}
	return req, nil
}

// dataImage decodes a base64 data URL, the only image URL the fakes take
// (they fetch nothing).
func dataImage(url string) (Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	mime, data, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		return Image{}, errors.New("expected a data:MIME;base64, URL")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, fmt.Errorf("invalid base64 image data: %v", err)
	}
	return Image{MIME: mime, Data: b}, nil
}

func (s *Server) openAIFinish(t Turn) string {
	switch {
	case t.Finish != "":
		return t.Finish
	case len(t.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (s *Server) wholeOpenAI(w http.ResponseWriter, req Request, t Turn) {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if t.Text != "" || len(t.ToolCalls) == 0 && t.Refusal == "" {
		msg["content"] = t.Text
	}
	if t.Refusal != "" {
		msg["refusal"] = t.Refusal
	}
	if len(t.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range t.ToolCalls {
			call := map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
			if t.NoIDs {
				delete(call, "id")
			}
			calls = append(calls, call)
		}
		msg["tool_calls"] = calls
	}
	body := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": s.openAIFinish(t)}},
	}
	if !t.NoUsage {
		body["usage"] = map[string]any{"prompt_tokens": t.InputTokens, "completion_tokens": t.OutputTokens, "total_tokens": t.InputTokens + t.OutputTokens}
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) streamOpenAI(w http.ResponseWriter, r *http.Request, req Request, t Turn) {
	var includeUsage struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(req.Body, &includeUsage)
	e := newSSE(w, t.CutAfter)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	if !e.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	if t.Text == "" && t.Hang {
		s.hang(r)
		return
	}
	if t.Text == "" && t.StreamError != "" {
		e.send("", map[string]any{"error": map[string]any{"message": t.StreamError, "type": "server_error"}})
		return
	}
	for i, p := range pieces(t.Text) {
		if !e.send("", chunk(map[string]any{"content": p}, nil)) {
			return
		}
		if i == 0 && t.Hang {
			s.hang(r)
			return
		}
		if i == 0 && t.StreamError != "" {
			e.send("", map[string]any{"error": map[string]any{"message": t.StreamError, "type": "server_error"}})
			return
		}
	}
	for _, p := range pieces(t.Refusal) {
		if !e.send("", chunk(map[string]any{"refusal": p}, nil)) {
			return
		}
	}
	for idx, c := range t.ToolCalls {
		first := map[string]any{"index": idx, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}
		if t.NoIDs {
			delete(first, "id")
		}
		if !e.send("", chunk(map[string]any{"tool_calls": []any{first}}, nil)) {
			return
		}
		for _, p := range argPieces(c.Arguments) {
			d := map[string]any{"index": idx, "function": map[string]any{"arguments": p}}
			if !e.send("", chunk(map[string]any{"tool_calls": []any{d}}, nil)) {
				return
			}
		}
	}
	if !e.send("", chunk(map[string]any{}, s.openAIFinish(t))) {
		return
	}
	if includeUsage.StreamOptions.IncludeUsage && !t.NoUsage {
		if !e.send("", map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": t.InputTokens, "completion_tokens": t.OutputTokens, "total_tokens": t.InputTokens + t.OutputTokens},
		}) {
			return
		}
	}
	e.send("", "[DONE]")
}
