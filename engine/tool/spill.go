package tool

import (
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

// spill stores a result whose text exceeds ResultMax as a vault record and
// returns a result that names the record.
func (r *Registry) spill(t Tool, digest string, res Result) (Result, error) {
	size := res.Size()
	if size <= ResultMax {
		return res, nil
	}
	text := res.Text()
	id, err := r.store.RecordPut(text, map[string]any{"tool": t.Name, "digest": digest, "isError": res.IsError})
	if err != nil {
		return Result{}, fmt.Errorf("tool %s: result of %d bytes exceeds %d and could not be stored: %v", t.Name, size, ResultMax, err)
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
	return Result{Content: []Content{{Type: "text", Text: note}}, IsError: res.IsError}, nil
}
