package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

type anWireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      []byte `json:"data"`
	} `json:"source"`
}

// images returns the image blocks of bs, decoded.
func images(bs []anWireBlock) []Image {
	var out []Image
	for _, b := range bs {
		if b.Type == "image" {
			out = append(out, Image{MIME: b.Source.MediaType, Data: b.Source.Data})
		}
	}
	return out
}

// blocks decodes content that is either a string or an array of blocks.
func blocks(raw json.RawMessage) ([]anWireBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []anWireBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anWireBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, errors.New("content: expected a string or an array of content blocks")
	}
	return bs, nil
}

func blockText(raw json.RawMessage) (string, error) {
	bs, err := blocks(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, x := range bs {
		b.WriteString(x.Text)
	}
	return b.String(), nil
}

// parseAnthropic decodes and validates a Messages request as the API does:
// model and max_tokens present, only user and assistant roles, alternating
// and starting with user, non-empty content, and every tool_use answered by
// a tool_result in the very next message (and no tool_result without its
// tool_use), tool_use ids unique.
func parseAnthropic(body []byte) (Request, error) {
	var wire struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return Request{}, fmt.Errorf("invalid JSON body: %v", err)
	}
	req := Request{Model: wire.Model, Stream: wire.Stream, MaxTokens: wire.MaxTokens}
	for i, t := range wire.Tools {
		if t.Name == "" || len(t.InputSchema) == 0 {
			return req, fmt.Errorf("tools.%d: name and input_schema are required", i)
		}
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	switch {
	case req.Model == "":
		return req, errors.New("model: Field required")
	case req.MaxTokens <= 0:
		return req, errors.New("max_tokens: Field required (a positive integer)")
	case len(wire.Messages) == 0:
		return req, errors.New("messages: at least one message is required")
	}
	if sys, err := blockText(wire.System); err != nil {
		return req, fmt.Errorf("system: %v", err)
	} else if sys != "" {
		req.Messages = append(req.Messages, Message{Role: "system", Text: sys})
	}
	var pending map[string]bool
	used := map[string]bool{} // tool_use ids, unique in a request
	for i, m := range wire.Messages {
		switch {
		case m.Role != "user" && m.Role != "assistant":
			return req, fmt.Errorf("messages.%d: Unexpected role %q. The Messages API accepts a top-level `system` parameter, not %q as an input message role", i, m.Role, m.Role)
		case i == 0 && m.Role != "user":
			return req, errors.New("messages.0: the first message must use the \"user\" role")
		case i > 0 && m.Role == wire.Messages[i-1].Role:
			return req, fmt.Errorf("messages.%d: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", i, m.Role)
		}
		bs, err := blocks(m.Content)
		if err != nil {
			return req, fmt.Errorf("messages.%d.%v", i, err)
		}
		last := i == len(wire.Messages)-1
		if len(bs) == 0 && !(last && m.Role == "assistant") {
			return req, fmt.Errorf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		answered := map[string]bool{}
		var text strings.Builder
		var calls []ToolCall
		var results []Message
		var userImages []Image
		for j, b := range bs {
			switch b.Type {
			case "image":
				if m.Role != "user" {
					return req, fmt.Errorf("messages.%d.content.%d: image blocks are only allowed in user messages", i, j)
				}
				userImages = append(userImages, images(bs[j:j+1])...)
			case "text":
				if b.Text == "" {
					return req, fmt.Errorf("messages.%d.content.%d: text content blocks must be non-empty", i, j)
				}
				text.WriteString(b.Text)
			case "tool_use":
				if m.Role != "assistant" {
					return req, fmt.Errorf("messages.%d.content.%d: tool_use blocks are only allowed in assistant messages", i, j)
				}
				if b.ID == "" || b.Name == "" || !strings.HasPrefix(strings.TrimSpace(string(b.Input)), "{") {
					return req, fmt.Errorf("messages.%d.content.%d.tool_use: id, name and an object input are required", i, j)
				}
				if used[b.ID] {
					return req, fmt.Errorf("messages.%d.content.%d: `tool_use` ids must be unique: %s is used twice", i, j, b.ID)
				}
				used[b.ID] = true
				calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				if m.Role != "user" {
					return req, fmt.Errorf("messages.%d.content.%d: tool_result blocks are only allowed in user messages", i, j)
				}
				if !pending[b.ToolUseID] {
					return req, fmt.Errorf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message", i, j, b.ToolUseID)
				}
				if text.Len() > 0 {
					return req, fmt.Errorf("messages.%d.content.%d: tool_result blocks must come before any text in a user message", i, j)
				}
				answered[b.ToolUseID] = true
				inner, err := blocks(b.Content)
				if err != nil {
					return req, fmt.Errorf("messages.%d.content.%d.%v", i, j, err)
				}
				var content strings.Builder
				for _, x := range inner {
					content.WriteString(x.Text)
				}
				results = append(results, Message{Role: "tool", Text: content.String(), ToolCallID: b.ToolUseID, IsError: b.IsError, Images: images(inner)})
			default:
				return req, fmt.Errorf("messages.%d.content.%d: unsupported block type %q", i, j, b.Type)
			}
		}
		if m.Role == "user" && len(pending) > 0 {
			var missing []string
			for id := range pending {
				if !answered[id] {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				return req, fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message", i-1, strings.Join(missing, ", "))
			}
		}
		pending = nil
		if m.Role == "assistant" {
			pending = map[string]bool{}
			for _, c := range calls {
				pending[c.ID] = true
			}
			req.Messages = append(req.Messages, Message{Role: "assistant", Text: text.String(), ToolCalls: calls})
		} else {
			req.Messages = append(req.Messages, results...)
			if text.Len() > 0 || len(userImages) > 0 {
				req.Messages = append(req.Messages, Message{Role: "user", Text: text.String(), Images: userImages})
			}
		}
	}
	if len(pending) > 0 {
		return req, fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after. Each `tool_use` block must have a corresponding `tool_result` block in the next message", len(wire.Messages)-1)
	}
	return req, nil
}

func (s *Server) anthropicStop(t Turn) string {
	switch {
	case t.Finish != "":
		return t.Finish
	case len(t.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func (s *Server) wholeAnthropic(w http.ResponseWriter, req Request, t Turn) {
	content := []any{}
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, c := range t.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Arguments)})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": s.anthropicStop(t), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": t.InputTokens, "output_tokens": t.OutputTokens},
	})
}

func (s *Server) streamAnthropic(w http.ResponseWriter, r *http.Request, req Request, t Turn) {
	e := newSSE(w, t.CutAfter)
	send := func(event string, data map[string]any) bool {
		data["type"] = event
		return e.send(event, data)
	}
	streamErr := func() {
		send("error", map[string]any{"error": map[string]any{"type": "overloaded_error", "message": t.StreamError}})
	}
	if !send("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": t.InputTokens, "output_tokens": 1},
	}}) {
		return
	}
	if t.Text == "" && t.Hang {
		s.hang(r)
		return
	}
	if t.Text == "" && t.StreamError != "" {
		streamErr()
		return
	}
	index := 0
	if t.Text != "" {
		if !send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}}) {
			return
		}
		if !send("ping", map[string]any{}) {
			return
		}
		for i, p := range pieces(t.Text) {
			if !send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": p}}) {
				return
			}
			if i == 0 && t.Hang {
				s.hang(r)
				return
			}
			if i == 0 && t.StreamError != "" {
				streamErr()
				return
			}
		}
		if !send("content_block_stop", map[string]any{"index": index}) {
			return
		}
		index++
	}
	for _, c := range t.ToolCalls {
		if !send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}) {
			return
		}
		for _, p := range argPieces(c.Arguments) {
			if !send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"index": index}) {
			return
		}
		index++
	}
	if !send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": s.anthropicStop(t), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": t.OutputTokens}}) {
		return
	}
	send("message_stop", map[string]any{})
}
