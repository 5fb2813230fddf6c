package tool

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif"  // DecodeConfig reads GIF headers
	_ "image/jpeg" // … JPEG
	_ "image/png"  // … PNG
	"strings"

	"tai/mcp"
	"tai/mcp/screen"
)

// Content is one item of a tool result, shaped like an MCP content block.
// Text items carry Text; image and audio items carry their bytes, decoded
// once, in Data and their media type in MIME; any other item (a resource)
// carries its whole JSON in Raw, which is passed through unchanged.
type Content struct {
	Type string
	Text string
	Raw  json.RawMessage
	MIME string
	Data []byte
	// URI names the resource an embedded blob came from.
	URI string
}

// Binary reports whether c is held as bytes: an image, audio, or an
// embedded resource's blob.
func (c Content) Binary() bool { return c.Data != nil }

// ForModel reports whether c is an image or audio item, the binary items
// a model may take.
func (c Content) ForModel() bool {
	return (c.Type == "image" || c.Type == "audio") && c.Data != nil
}

// Label is the line that stands for a binary item in text: its kind,
// format, size in pixels when the header says it, and size in bytes, as
// "[image png 640×480, 45 KB]". Only the header is decoded.
func (c Content) Label() string {
	if c.URI != "" {
		return fmt.Sprintf("[%s %s %s, %s]", c.Type, mcp.Clip(c.URI), screen.VisibleLine(c.MIME), byteSize(len(c.Data)))
	}
	format := screen.VisibleLine(c.MIME)
	if _, sub, ok := strings.Cut(format, "/"); ok {
		format = sub
	}
	var dims string
	if c.Type == "image" {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(c.Data)); err == nil {
			dims = fmt.Sprintf(" %d×%d", cfg.Width, cfg.Height)
		} else if w, h, ok := webpSize(c.Data); ok {
			dims = fmt.Sprintf(" %d×%d", w, h)
		}
	}
	return fmt.Sprintf("[%s %s%s, %s]", c.Type, format, dims, byteSize(len(c.Data)))
}

// webpSize reads the width and height from a WebP header (RIFF, then a
// VP8, VP8L or VP8X chunk), which the standard library does not decode.
func webpSize(b []byte) (w, h int, ok bool) {
	if len(b) < 30 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, false
	}
	le24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
	switch string(b[12:16]) {
	case "VP8X":
		return le24(b[24:]) + 1, le24(b[27:]) + 1, true
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, false
		}
		bits := uint32(b[21]) | uint32(b[22])<<8 | uint32(b[23])<<16 | uint32(b[24])<<24
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		return (int(b[26]) | int(b[27])<<8) & 0x3fff, (int(b[28]) | int(b[29])<<8) & 0x3fff, true
	}
	return 0, 0, false
}

// byteSize writes n bytes as people read them: 812 B, 45 KB, 1.2 MB.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

// MarshalJSON encodes a text item as {"type":"text","text":…} and any other
// item as its raw JSON.
func (c Content) MarshalJSON() ([]byte, error) {
	return c.appendJSON(nil), nil
}

// appendJSON appends the item as MarshalJSON encodes it; a raw item is
// appended as it is, for the encoder of the whole to check.
func (c Content) appendJSON(b []byte) []byte {
	if c.Binary() && c.URI != "" {
		b = append(b, `{"type":"resource","resource":{"uri":`...)
		b = mcp.AppendJSONString(b, c.URI)
		b = append(b, `,"mimeType":`...)
		b = mcp.AppendJSONString(b, c.MIME)
		b = append(b, `,"blob":"`...)
		b = base64.StdEncoding.AppendEncode(b, c.Data)
		return append(b, `"}}`...)
	}
	if c.Binary() {
		b = append(b, `{"type":`...)
		b = mcp.AppendJSONString(b, c.Type)
		b = append(b, `,"mimeType":`...)
		b = mcp.AppendJSONString(b, c.MIME)
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, c.Data)
		return append(b, `"}`...)
	}
	if c.Type != "text" && len(c.Raw) > 0 {
		return append(b, c.Raw...)
	}
	b = append(b, `{"type":"text","text":`...)
	b = mcp.AppendJSONString(b, c.Text)
	return append(b, '}')
}

// UnmarshalJSON decodes an MCP content block: an image or audio item with
// valid base64 data to its bytes, any other non-text item kept raw.
func (c *Content) UnmarshalJSON(b []byte) error {
	var head struct {
		Type string `json:"type"`
		Text string `json:"text"`
		MIME string `json:"mimeType"`
		Data string `json:"data"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	*c = Content{Type: head.Type}
	switch head.Type {
	case "text":
		c.Text = head.Text
		return nil
	case "image", "audio":
		if data, err := base64.StdEncoding.DecodeString(head.Data); err == nil && head.MIME != "" {
			c.MIME, c.Data = head.MIME, data
			return nil
		}
	}
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Result is what a tool returns, shaped like MCP's tools/call result so the
// MCP server can serve it verbatim.
type Result struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
	// Stored lists the binary items the registry stored as vault records
	// (see BinaryMax), each standing in Content as a note: the terminal
	// shows them too, and reads them back from the record. Never sent.
	Stored []Stored `json:"-"`
}

// Stored is a binary item of a result kept in a vault record, base64.
type Stored struct {
	// Label is the item's label (see Content.Label).
	Label string
	// Type and MIME are the item's.
	Type, MIME string
	// Record is the id of the record holding its bytes, base64.
	Record string
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

// Text joins the result's text items with newlines; binary items appear as
// their Label, other non-text items as their JSON.
func (r Result) Text() string {
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		if c.Binary() {
			b.WriteString(c.Label())
		} else if c.Type == "text" || len(c.Raw) == 0 {
			b.WriteString(c.Text)
		} else {
			b.Write(c.Raw)
		}
	}
	return b.String()
}

// Bytes is how many bytes the result's items hold, text, raw JSON and
// binary alike: the size the audit trail records.
func (r Result) Bytes() int {
	n := r.Size()
	for _, c := range r.Content {
		n += len(c.Data)
	}
	return n
}

// Size is how many bytes the result's items hold as text (text and raw
// JSON); binary items count apart (see spill).
func (r Result) Size() int {
	n := 0
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Raw)
	}
	return n
}
