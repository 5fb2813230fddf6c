package bridge

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// convert turns a tools/call result into an engine result: text items as
// text; image and audio items as their bytes, decoded once (the model
// gets them where its provider takes them, the terminal a label); an
// embedded resource's text inline under a line naming it, its blob as
// bytes the spill stores as a record; a resource link as a line naming
// it and server, the one mcp_read_resource reads it from; any other item
// as its JSON. structuredContent reaches the result
// when no text item carries it, after a check against output, the
// tool's outputSchema (nil: none), whose failure is a note. IsError is
// kept.
func convert(server string, r *mcp.CallResult, output json.RawMessage) tool.Result {
	out := tool.Result{IsError: r.IsError, Content: make([]tool.Content, 0, len(r.Content)+1)}
	carried := false
	for _, raw := range r.Content {
		if text, ok := mcp.TextOf(raw); ok {
			out.Content = append(out.Content, tool.Content{Type: "text", Text: text})
			carried = carried || sameJSON(text, r.StructuredContent)
			continue
		}
		out.Content = append(out.Content, item(server, raw))
	}
	if len(r.StructuredContent) > 0 && !carried {
		out.Content = append(out.Content, tool.Content{Type: "text", Text: string(r.StructuredContent)})
	}
	if len(r.StructuredContent) > 0 && len(output) > 0 && !r.IsError {
		if why := outputMismatch(output, r.StructuredContent); why != "" {
			out.Content = append(out.Content, tool.Content{Type: "text", Text: "[note: structuredContent does not match the tool's outputSchema: " + why + "]"})
		}
	}
	return out
}

// item converts one content item of server's that is not plain text.
func item(server string, raw json.RawMessage) tool.Content {
	var c tool.Content
	if err := json.Unmarshal(raw, &c); err != nil {
		return tool.Content{Type: "text", Text: string(raw)}
	}
	switch c.Type {
	case "image", "audio":
		if !c.Binary() {
			return tool.Content{Type: "text", Text: fmt.Sprintf("[%s the server sent without a mimeType or with data that is not base64: left out]", c.Type)}
		}
	case "resource":
		return embedded(raw, c)
	case "resource_link":
		var l struct {
			URI, Name, Title, Description, MimeType string
		}
		if json.Unmarshal(raw, &l) == nil && l.URI != "" {
			line := "[resource link " + uriText(l.URI)
			if name := cmp.Or(l.Title, l.Name); name != "" {
				line += " " + mcp.Clip(name)
			}
			if l.MimeType != "" {
				line += " (" + screen.VisibleLine(l.MimeType) + ")"
			}
			line += " of server " + mcp.Clip(server) + "]"
			if l.Description != "" {
				line += " " + mcp.Clip(l.Description)
			}
			return tool.Content{Type: "text", Text: line}
		}
	}
	return c
}

// embedded converts an embedded resource: its text inline under a line
// naming it (the usual cap and spill apply), its blob as bytes a record
// will hold.
func embedded(raw json.RawMessage, c tool.Content) tool.Content {
	var e struct {
		Resource struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		} `json:"resource"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Resource.URI == "" {
		return c
	}
	res := e.Resource
	head := "[resource " + mcp.Clip(res.URI)
	if res.MimeType != "" {
		head += " (" + screen.VisibleLine(res.MimeType) + ")"
	}
	switch {
	case res.Text != nil:
		return tool.Content{Type: "text", Text: head + "]\n" + *res.Text}
	case res.Blob != nil:
		data, err := base64.StdEncoding.DecodeString(*res.Blob)
		if err != nil {
			return tool.Content{Type: "text", Text: head + ": its blob is not base64, left out]"}
		}
		mime := res.MimeType
		if mime == "" {
			mime = "application/octet-stream"
		}
		return tool.Content{Type: "resource", MIME: mime, Data: data, URI: res.URI}
	}
	return c
}

// sameJSON reports whether text is JSON equal to structured.
func sameJSON(text string, structured json.RawMessage) bool {
	if len(structured) == 0 {
		return false
	}
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return false
	}
	var a, b any
	if json.Unmarshal([]byte(t), &a) != nil || json.Unmarshal(structured, &b) != nil {
		return false
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// outputMismatch checks structured against the schema output; "" when it
// matches or the schema cannot be read.
func outputMismatch(output, structured json.RawMessage) string {
	var schema map[string]any
	var v any
	if json.Unmarshal(output, &schema) != nil || schema == nil {
		return ""
	}
	if err := json.Unmarshal(structured, &v); err != nil {
		return "it is not JSON"
	}
	if err := tool.CheckValue(schema, v, "structuredContent"); err != nil {
		return err.Error()
	}
	return ""
}

// outputSchema is the outputSchema server last listed for toolName, or
// nil.
func (b *Bridge) outputSchema(server, toolName string) json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.outputs[[2]string{server, toolName}]
}

// noteOutputs keeps the output schemas of a listing of server.
func (b *Bridge) noteOutputs(server string, tools []mcp.Tool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.outputs == nil {
		b.outputs = map[[2]string]json.RawMessage{}
	}
	for k := range b.outputs {
		if k[0] == server {
			delete(b.outputs, k)
		}
	}
	for _, t := range tools {
		if len(t.OutputSchema) > 0 {
			b.outputs[[2]string{server, t.Name}] = t.OutputSchema
		}
	}
}
