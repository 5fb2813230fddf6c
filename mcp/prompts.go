package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// Wire methods of a server's prompts and of argument completion.
const (
	// MethodPromptsList lists a server's prompts, one page per call.
	MethodPromptsList = "prompts/list"
	// MethodPromptsGet renders one prompt with its arguments.
	MethodPromptsGet = "prompts/get"
	// MethodPromptsListChanged says the prompt list changed.
	MethodPromptsListChanged = "notifications/prompts/list_changed"
	// MethodCompletionComplete asks for the values an argument may take.
	MethodCompletionComplete = "completion/complete"
)

// MaxCompletions caps the values one completion/complete answer yields
// (the spec's own limit is 100 a response).
const MaxCompletions = 100

// Prompt is one prompt a server lists. Raw keeps the whole object as sent.
type Prompt struct {
	// Name is what prompts/get takes.
	Name string `json:"name"`
	// Title is the display name, when given.
	Title string `json:"title,omitempty"`
	// Description is the server's (untrusted) description.
	Description string `json:"description,omitempty"`
	// Arguments are the prompt's arguments, in the order listed.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// Raw is the whole prompt object as sent.
	Raw json.RawMessage `json:"-"`
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a rendered prompt: its role ("user" or
// "assistant") and one content block, exactly as sent (text, image, audio,
// an embedded resource or a resource link).
type PromptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// PromptResult is a prompts/get result.
type PromptResult struct {
	// Description is the server's description of the rendered prompt.
	Description string `json:"description,omitempty"`
	// Messages are the prompt's messages, in order.
	Messages []PromptMessage `json:"messages"`
}

// Offers reports whether the server declared capability (a member of its
// capabilities object: "prompts", "resources", "completions", …).
func (c *Client) Offers(capability string) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.Capabilities(), &caps) != nil {
		return false
	}
	v, ok := caps[capability]
	return ok && !isNull(v)
}

// Prompts lists the server's prompts, following nextCursor as Tools does.
// A server that did not declare prompts has none: nothing is asked.
func (c *Client) Prompts(ctx context.Context) ([]Prompt, error) {
	if !c.Offers("prompts") {
		return nil, nil
	}
	var prompts []Prompt
	err := c.listAll(ctx, MethodPromptsList, "prompts", func(raw []byte) error {
		var p Prompt
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("mcp server %q: malformed prompt in %s: %v", c.name, MethodPromptsList, err)
		}
		if p.Name == "" {
			return fmt.Errorf("mcp server %q: %s lists a prompt with no name", c.name, MethodPromptsList)
		}
		p.Raw = bytes.Clone(raw)
		prompts = append(prompts, p)
		return nil
	})
	if err != nil {
		return nil, c.scrub(err)
	}
	return prompts, nil
}

// GetPrompt renders the prompt name with args (prompts/get), bounded by
// CallTimeout. A message whose role is neither user nor assistant, or
// whose content is missing, is an error: it cannot become a turn.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	params := map[string]any{"name": name}
	if len(args) > 0 {
		params["arguments"] = args
	}
	raw, err := c.request(ctx, MethodPromptsGet, params)
	if err != nil {
		return nil, c.scrub(err)
	}
	var res PromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, c.scrub(fmt.Errorf("mcp server %q: malformed %s result for prompt %s: %v", c.name, MethodPromptsGet, Clip(name), err))
	}
	for i, m := range res.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, c.scrub(fmt.Errorf("mcp server %q: prompt %s: message %d has role %s; only user and assistant can be sent", c.name, Clip(name), i+1, Clip(m.Role)))
		}
		if len(m.Content) == 0 || isNull(m.Content) {
			return nil, c.scrub(fmt.Errorf("mcp server %q: prompt %s: message %d has no content", c.name, Clip(name), i+1))
		}
	}
	return &res, nil
}

// CompletePrompt asks the server (completion/complete) for the values
// argument arg of prompt may take, given what is typed so far (value)
// and the arguments already chosen. A server that did not
// declare completions yields nothing, and nothing is asked. At most
// MaxCompletions values come back, in the server's order.
func (c *Client) CompletePrompt(ctx context.Context, prompt, arg, value string, chosen map[string]string) ([]string, error) {
	if !c.Offers("completions") {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	params := map[string]any{
		"ref":      map[string]string{"type": "ref/prompt", "name": prompt},
		"argument": map[string]string{"name": arg, "value": value},
	}
	if len(chosen) > 0 {
		params["context"] = map[string]any{"arguments": chosen}
	}
	raw, err := c.request(ctx, MethodCompletionComplete, params)
	if err != nil {
		return nil, c.scrub(err)
	}
	var res struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, c.scrub(fmt.Errorf("mcp server %q: malformed %s result: %v", c.name, MethodCompletionComplete, err))
	}
	vals := res.Completion.Values
	if len(vals) > MaxCompletions {
		vals = vals[:MaxCompletions]
	}
	return vals, nil
}
