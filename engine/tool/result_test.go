package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResultJSONAsEncodingJSON: a result encodes as encoding/json encodes
// the MCP shape it stands for: text items escaped alike, raw items as
// they are, a nil Content as [], isError only when set.
func TestResultJSONAsEncodingJSON(t *testing.T) {
	type item struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	image := json.RawMessage(`{"type":"image","data":"AAAA","mimeType":"image/png"}`)
	for _, r := range []Result{
		{},
		TextResult("plain"),
		ErrorResult("<b>&</b> \"quoted\"\n\xff \u2028"),
		{Content: []Content{{Type: "text", Text: "a"}, {Type: "image", Raw: image}, {Type: "text", Text: "b"}}},
	} {
		var want strings.Builder
		want.WriteString(`{"content":[`)
		for i, c := range r.Content {
			if i > 0 {
				want.WriteByte(',')
			}
			if c.Raw != nil {
				want.Write(c.Raw)
				continue
			}
			b, _ := json.Marshal(item{"text", c.Text})
			want.Write(b)
		}
		want.WriteByte(']')
		if r.IsError {
			want.WriteString(`,"isError":true`)
		}
		want.WriteByte('}')
		got, err := json.Marshal(r)
		if err != nil || string(got) != want.String() {
			t.Errorf("%+v encodes as %s (%v), want %s", r, got, err, want.String())
		}
		if direct := r.AppendJSON(nil); string(direct) != want.String() {
			t.Errorf("%+v appends as %s, want %s", r, direct, want.String())
		}
	}
}
