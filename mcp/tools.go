package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Tool is one tool a server lists. Raw keeps the whole object as sent, so
// fields this type does not name (icons, _meta, execution) pass through.
type Tool struct {
	// Name is what tools/call takes.
	Name string `json:"name"`
	// Title is the display name, when given.
	Title string `json:"title,omitempty"`
	// Description is the server's (untrusted) description.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments, as sent.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the JSON Schema of structuredContent, when given.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the server's (untrusted) behaviour hints.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Raw is the whole tool object as sent.
	Raw json.RawMessage `json:"-"`
}

// TaskRequired reports whether the tool runs only as a task: its
// execution.taskSupport is "required" (2025-11-25, experimental), so a
// plain tools/call of it fails. "optional" and "forbidden" tools are
// called as any other.
func (t Tool) TaskRequired() bool {
	var def struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	return json.Unmarshal(t.Raw, &def) == nil && def.Execution.TaskSupport == "required"
}

// CallResult is a tools/call result. Content items stay as the server sent
// them (text, image, audio, resources and annotations unchanged). IsError
// marks a tool that ran and failed, which is a result, not a Go error.
type CallResult struct {
	// Content holds each content item exactly as sent.
	Content []json.RawMessage `json:"content"`
	// StructuredContent is the structured result, when given.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError says the tool ran and failed.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta, when given.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// Raw is the whole result object as sent.
	Raw json.RawMessage `json:"-"`
}

// Text joins the text of the result's text content items with newlines.
func (r *CallResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		var item struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &item) == nil && item.Type == "text" {
			parts = append(parts, item.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TextOf returns the text of a text content item of a result (one
// element of CallResult.Content): {"type": "text", "text": …} with no
// other member, which is most of what servers send. ok is false for any
// other item (an image, a resource, a text item with annotations), which
// a caller keeps as its JSON. It does not re-validate item, which Client
// results already are.
func TextOf(item json.RawMessage) (text string, ok bool) {
	var typ, txt []byte
	n := 0
	if eachMember(item, trusted, func(key, val []byte) {
		n++
		switch string(key) {
		case "type":
			typ = val
		case "text":
			txt = val
		}
	}) != nil || n != 2 || string(typ) != `"text"` || txt == nil {
		return "", false
	}
	return jsonString(txt)
}

// Tools lists the server's tools, following nextCursor until the last page.
// A server that repeats a cursor, or pages past MaxPages, gets an error
// instead of an endless loop.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	tools, err := c.tools(ctx)
	return tools, c.scrub(err)
}

func (c *Client) tools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	err := c.listAll(ctx, MethodToolsList, "tools", func(raw []byte) error {
		t, err := decodeTool(raw)
		if err != nil {
			return fmt.Errorf("mcp server %q: malformed tool in %s: %v", c.name, MethodToolsList, err)
		}
		if t.Name == "" {
			return fmt.Errorf("mcp server %q: %s lists a tool with no name", c.name, MethodToolsList)
		}
		tools = append(tools, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tools, nil
}

// decodeTool reads one tool object of a tools/list result (already valid
// JSON): the string members by name, the schemas and annotations kept raw
// whatever their depth. Member names match exactly; a repeated member
// counts as its last occurrence, as encoding/json has it.
func decodeTool(raw []byte) (Tool, error) {
	t := Tool{Raw: bytes.Clone(raw)}
	var bad string
	err := eachMember(t.Raw, trusted, func(key, val []byte) {
		var dst *string
		switch string(key) {
		case "name":
			dst = &t.Name
		case "title":
			dst = &t.Title
		case "description":
			dst = &t.Description
		case "inputSchema":
			t.InputSchema = rawOrNil(val)
		case "outputSchema":
			t.OutputSchema = rawOrNil(val)
		case "annotations":
			t.Annotations = rawOrNil(val)
		}
		if dst == nil {
			return
		}
		if isNull(val) {
			*dst = ""
			return
		}
		s, ok := jsonString(val)
		if !ok && bad == "" {
			bad = string(key)
		}
		*dst = s
	})
	if err != nil {
		return Tool{}, err
	}
	if bad != "" {
		return Tool{}, fmt.Errorf("%s is not a string", bad)
	}
	return t, nil
}

// rawOrNil is val as a json.RawMessage, nil for null.
func rawOrNil(val []byte) json.RawMessage {
	if isNull(val) {
		return nil
	}
	return json.RawMessage(val)
}

// Call runs one tool within CallTimeout. args may be nil, a
// map[string]any, a json.RawMessage object or anything that marshals to a
// JSON object. A tool that ran and failed comes back as a result with
// IsError; a JSON-RPC error comes back as an error wrapping *WireError. On
// timeout the server gets notifications/cancelled and the call fails.
func (c *Client) Call(ctx context.Context, name string, args any) (*CallResult, error) {
	res, err := c.call(ctx, name, args)
	return res, c.scrub(err)
}

func (c *Client) call(ctx context.Context, name string, args any) (*CallResult, error) {
	var arguments []byte
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		arguments = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: tool %q: arguments do not encode as JSON: %v", c.name, name, err)
		}
		arguments = b
	}
	if t := bytes.TrimSpace(arguments); len(t) > 0 {
		if string(t) == "null" {
			arguments = nil
		} else if t[0] != '{' {
			return nil, fmt.Errorf("mcp server %q: tool %q: arguments must be a JSON object, got %.40s", c.name, name, t)
		}
	}
	params := make([]byte, 0, 32+len(name)+len(arguments))
	params = append(params, `{"name":`...)
	params = AppendJSONString(params, name)
	if len(arguments) > 0 {
		params = append(params, `,"arguments":`...)
		params = append(params, arguments...)
	}
	// Progress is asked for, keyed by the request id: it keeps a long
	// call alive (see timing) and shows on its tool line.
	id := IntID(c.nextID.Add(1))
	params = append(params, `,"_meta":{"progressToken":`...)
	params = id.appendJSON(params)
	params = append(params, "}}"...)
	now := int64(time.Since(c.epoch))
	tm := timing{deadline: now + int64(c.opts.CallTimeout), renew: int64(c.opts.CallTimeout), until: now + int64(c.opts.CallMaxTotal)}
	if d, ok := ctx.Deadline(); ok && int64(d.Sub(c.epoch)) < tm.deadline {
		tm = timing{} // ctx ends first, as it would have with a derived context
	}
	raw, err := c.requestID(ctx, id, MethodToolsCall, params, tm)
	if err != nil {
		if tm.deadline != 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && int64(time.Since(c.epoch)) >= tm.deadline {
			if took := time.Duration(int64(time.Since(c.epoch)) - now); took >= c.opts.CallMaxTotal {
				return nil, fmt.Errorf("mcp server %q: tool %q ran past %s in all (MCP_CALL_MAX_TOTAL), though it kept reporting progress (sent %s): %w",
					c.name, name, c.opts.CallMaxTotal, MethodCancelled, context.DeadlineExceeded)
			}
			return nil, fmt.Errorf("mcp server %q: tool %q timed out after %s without an answer or progress (sent %s): %w",
				c.name, name, c.opts.CallTimeout, MethodCancelled, context.DeadlineExceeded)
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("mcp server %q: tool %q: %w", c.name, name, err)
		}
		return nil, err
	}
	res, err := decodeCallResult(raw)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: tool %q: malformed result: %v", c.name, name, err)
	}
	return res, nil
}

// decodeCallResult splits a tools/call result into its parts without
// re-encoding anything: every content item is a subslice of raw, which
// Message.UnmarshalJSON has already validated.
func decodeCallResult(raw json.RawMessage) (*CallResult, error) {
	res := &CallResult{Raw: raw}
	var bad error
	err := eachMember(raw, trusted, func(key, val []byte) {
		switch string(key) {
		case "content":
			if isNull(val) {
				return
			}
			res.Content = res.Content[:0]
			if err := eachElement(val, trusted, func(item []byte) { res.Content = append(res.Content, item) }); err != nil {
				bad = fmt.Errorf("content: %v", err)
			}
		case "structuredContent":
			if !isNull(val) {
				res.StructuredContent = val
			}
		case "_meta":
			if !isNull(val) {
				res.Meta = val
			}
		case "isError":
			switch string(val) {
			case "true":
				res.IsError = true
			case "false", "null":
				res.IsError = false
			default:
				bad = fmt.Errorf("isError is %.20s, not a boolean", val)
			}
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Ping checks the server answers.
