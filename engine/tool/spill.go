package tool

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"

	"tai/mcp"
)

// ResultMax is the largest tool result text kept inline
// (mcp.MCP_RESULT_MAX, 64 KB). A larger result is stored as a vault record
// and the caller gets the record's id and a pointer to record_read instead:
// never a silent truncation.
const ResultMax = mcp.MCP_RESULT_MAX

// spillPreview is how much of a spilled result is still shown inline, as a
// clearly labelled head.
const spillPreview = 2048

// BinaryMax is the largest image or audio item kept in a result as bytes
// for the model (4 MB: under the 5 MB Anthropic takes per image). A
// larger one is stored as a vault record, base64, and stands as a note.
const BinaryMax = 4 << 20

// spill stores a result whose text exceeds ResultMax as a vault record and
// returns a result that names the record; a binary item that is not an
// image or audio within BinaryMax is stored as a record of its own, base64,
// and stands as a note naming it. Images and audio within the limit stay
// as they are, whatever the size of the text.
func (r *Registry) spill(t Tool, digest string, res Result) (Result, error) {
	inline := Result{IsError: res.IsError, Content: make([]Content, 0, len(res.Content))}
	var text, notes, kept []Content
	var stored []Stored
	for _, c := range res.Content {
		switch {
		case !c.Binary():
			text = append(text, c)
		case c.ForModel() && len(c.Data) <= BinaryMax:
			kept = append(kept, c)
		default:
			meta := map[string]any{"tool": t.Name, "digest": digest, "mimeType": c.MIME, "encoding": "base64"}
			if c.URI != "" {
				meta["uri"] = c.URI
			}
			id, err := r.store.RecordPut(base64.StdEncoding.EncodeToString(c.Data), meta)
			if err != nil {
				return Result{}, fmt.Errorf("tool %s: %s item of %d bytes could not be stored: %v", t.Name, c.Type, len(c.Data), err)
			}
			why := fmt.Sprintf("over the limit of %d bytes for the model", BinaryMax)
			if !c.ForModel() {
				why = "binary"
			}
			label := c.Label()
			stored = append(stored, Stored{Label: label, Type: c.Type, MIME: c.MIME, Record: id})
			c = Content{Type: "text", Text: fmt.Sprintf("%s is %s, so it was stored, base64, as record %s", label, why, id)}
			notes = append(notes, c)
		}
		inline.Content = append(inline.Content, c)
	}
	if (Result{Content: text}).Size() <= ResultMax {
		if len(notes) == 0 {
			return res, nil
		}
		inline.Stored = stored
		return inline, nil
	}
	note, err := r.spillText(t, digest, Result{Content: text, IsError: res.IsError})
	if err != nil {
		return Result{}, err
	}
	out := append([]Content{{Type: "text", Text: note}}, notes...)
	return Result{Content: append(out, kept...), IsError: res.IsError, Stored: stored}, nil
}

// spillText stores res's text as a record and returns the note that
// names it, with a head of the text.
func (r *Registry) spillText(t Tool, digest string, res Result) (string, error) {
	size := res.Size()
	text := res.Text()
	id, err := r.store.RecordPut(text, map[string]any{"tool": t.Name, "digest": digest, "isError": res.IsError})
	if err != nil {
		return "", fmt.Errorf("tool %s: result of %d bytes exceeds %d and could not be stored: %v", t.Name, size, ResultMax, err)
	}
	head := text
	if len(head) > spillPreview {
		head = head[:spillPreview]
		for len(head) > 0 && !utf8.ValidString(head) {
			head = head[:len(head)-1]
		}
	}
	note := fmt.Sprintf("The result is %d bytes, over the inline limit of %d, so it was stored as record %s. "+
		"Read it in parts with record_read {\"id\": %q, \"offset\": 0, \"length\": 16384}.\n"+
		"First %d bytes:\n%s", len(text), ResultMax, id, id, len(head), head)
	return note, nil
}
