package bridge

import (
	"encoding/json"
	"strings"
	"testing"

	"tai/mcp"
)

func callResult(t *testing.T, raw string) *mcp.CallResult {
	t.Helper()
	var r mcp.CallResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestConvertContent: each kind of content item becomes what the model
// and the terminal take: images as bytes, resources and links as lines
// naming them, a blob as bytes for a record, and structuredContent as
// text when no text item carries it, with a note when it does not match
// the outputSchema.
func TestConvertContent(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"temperature":{"type":"number"}},"required":["temperature"]}`)
	for _, tc := range []struct {
		name, raw string
		output    json.RawMessage
		want      []string // lines of Text(), in order
		binary    int
	}{
		{"image", `{"content":[{"type":"text","text":"here"},{"type":"image","mimeType":"image/png","data":"AAEC"}]}`, nil,
			[]string{"here", "[image png, 3 B]"}, 1},
		{"image not base64", `{"content":[{"type":"image","mimeType":"image/png","data":"%%"}]}`, nil,
			[]string{"[image the server sent without a mimeType or with data that is not base64: left out]"}, 0},
		{"audio", `{"content":[{"type":"audio","mimeType":"audio/wav","data":"AAEC"}]}`, nil,
			[]string{"[audio wav, 3 B]"}, 1},
		{"embedded text", `{"content":[{"type":"resource","resource":{"uri":"test://static/resource/1","mimeType":"text/plain","text":"Resource 1"}}]}`, nil,
			[]string{`[resource "test://static/resource/1" (text/plain)]`, "Resource 1"}, 0},
		{"embedded blob", `{"content":[{"type":"resource","resource":{"uri":"test://b","mimeType":"application/gzip","blob":"H4sI"}}]}`, nil,
			[]string{`[resource "test://b" application/gzip, 3 B]`}, 1},
		{"resource link", `{"content":[{"type":"resource_link","uri":"test://static/resource/2","name":"Resource 2","mimeType":"text/plain","description":"a text"}]}`, nil,
			[]string{`[resource link "test://static/resource/2" "Resource 2" (text/plain) of server "everything"] "a text"`}, 0},
		{"structured carried", `{"content":[{"type":"text","text":"{\"temperature\": 33}"}],"structuredContent":{"temperature":33}}`, schema,
			[]string{`{"temperature": 33}`}, 0},
		{"structured alone", `{"content":[{"type":"text","text":"done"}],"structuredContent":{"temperature":33}}`, schema,
			[]string{"done", `{"temperature":33}`}, 0},
		{"structured mismatch", `{"content":[],"structuredContent":{"temperature":"hot"}}`, schema,
			[]string{`{"temperature":"hot"}`, `[note: structuredContent does not match the tool's outputSchema: "structuredContent.temperature" is a string: give a number]`}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := convert("everything", callResult(t, tc.raw), tc.output)
			if got := strings.Split(res.Text(), "\n"); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("Text:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			n := 0
			for _, c := range res.Content {
				if c.Binary() {
					n++
				}
			}
			if n != tc.binary {
				t.Errorf("%d binary items, want %d", n, tc.binary)
			}
		})
	}
}
