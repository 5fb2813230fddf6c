package mcp

import (
	"encoding/json"
	"testing"
)

// ParseToolCall reads what encoding/json reads from the same params: the
// name (escapes, invalid UTF-8 and a repeated member as it decodes them)
// and the arguments as they are, and refuses what it refuses.
func TestParseToolCallReadsAsEncodingJSON(t *testing.T) {
	for _, params := range []string{
		`{"name":"echo","arguments":{"text":"hi"}}`,
		`{"arguments":{"a":[1,2,{"b":null}]},"name":"echo"}`,
		` { "name" : "e\u0063ho\n" , "arguments" : null } `,
		`{"name":"a","name":"b"}`,
		`{"name":null,"arguments":{}}`,
		`{"arguments":{}}`,
		`{"name":"` + "\xff\xfe" + `"}`,
		`{"name":"","arguments":"x"}`,
		`{"name":"echo","_meta":{"progressToken":1}}`,
		`{"name":5}`,
		`{"name":["echo"]}`,
		`[]`,
		`"echo"`,
		`{"name":"echo"} x`,
		`{"name":"echo",}`,
		`{"name":"echo","arguments":{"a":}}`,
		``,
	} {
		var want struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		werr := json.Unmarshal([]byte(params), &want)
		name, args, err := ParseToolCall(json.RawMessage(params))
		if (err != nil) != (werr != nil) {
			t.Errorf("%q: error %v, encoding/json's %v", params, err, werr)
			continue
		}
		if err != nil {
			continue
		}
		wantName := ""
		if want.Name != nil {
			wantName = *want.Name
		}
		if name != wantName || string(args) != string(want.Arguments) {
			t.Errorf("%q: read %q %s, encoding/json %q %s", params, name, args, wantName, want.Arguments)
		}
	}
}

// AppendJSONString writes what encoding/json writes for the same string.
func TestAppendJSONStringAsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain text", `quote " and \ backslash`, "tab\tnew\nline\x00nul",
		"<script>&amp;</script>", "é ü 日本", "\u2028\u2029", "bad \xff\xfe bytes", "\x7f",
	} {
		want, _ := json.Marshal(s)
		if got := AppendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: appended %s, encoding/json %s", s, got[1:], want)
		}
	}
}
