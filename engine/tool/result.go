package tool

import (
	"encoding/json"
	"fmt"
	"strings"

	"tai/mcp"
)

// Content is one item of a tool result, shaped like an MCP content block.
// Text items carry Text; any other item (an image, a resource) must carry
// its whole JSON in Raw, which is passed through unchanged.
type Content struct {
	Type string
	Text string
	Raw  json.RawMessage
}

// MarshalJSON encodes a text item as {"type":"text","text":…} and any other
// item as its raw JSON.
func (c Content) MarshalJSON() ([]byte, error) {
	return c.appendJSON(nil), nil
}

// appendJSON appends the item as MarshalJSON encodes it; a raw item is
// appended as it is, for the encoder of the whole to check.
func (c Content) appendJSON(b []byte) []byte {
	if c.Type != "text" && len(c.Raw) > 0 {
		return append(b, c.Raw...)
	}
	b = append(b, `{"type":"text","text":`...)
	b = mcp.AppendJSONString(b, c.Text)
	return append(b, '}')
}

// UnmarshalJSON decodes an MCP content block, keeping non-text items raw.
func (c *Content) UnmarshalJSON(b []byte) error {
	var head struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	c.Type = head.Type
	if head.Type == "text" {
		c.Text, c.Raw = head.Text, nil
		return nil
	}
	c.Text = ""
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Result is what a tool returns, shaped like MCP's tools/call result so the
// MCP server can serve it verbatim.
type Result struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

// MarshalJSON encodes the result as MCP's tools/call result; a nil Content
// becomes an empty array, never null.
func (r Result) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(nil), nil
}

// AppendJSON appends the result to b as MarshalJSON encodes it, without
// reflection; raw items are appended as they are, for the encoder of the
// whole to check.
func (r Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendJSON(b)
	}
	b = append(b, ']')
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}')
}

// TextResult returns a successful result holding one text item.
func TextResult(text string) Result {
	return Result{Content: []Content{{Type: "text", Text: text}}}
}

// ErrorResult returns a failed result (IsError) holding one text item.
func ErrorResult(format string, a ...any) Result {
	return Result{Content: []Content{{Type: "text", Text: fmt.Sprintf(format, a...)}}, IsError: true}
}

// Text joins the result's text items with newlines; non-text items appear
// as their JSON.
func (r Result) Text() string {
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		if c.Type == "text" || len(c.Raw) == 0 {
			b.WriteString(c.Text)
		} else {
			b.Write(c.Raw)
		}
	}
	return b.String()
}

// Size is how many bytes the result's items hold (text and raw JSON).
func (r Result) Size() int {
	n := 0
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Raw)
	}
	return n
}
