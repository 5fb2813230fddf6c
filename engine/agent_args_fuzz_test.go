package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"tai/engine/tool"
)

// FuzzToolArguments decodes tool-call arguments as a model may send them
// (any bytes at all) the way the agent does: parseArgs for the call, the
// argument reader for each tool's fields, historyArgs for what is sent back
// to the provider. None may panic, the history form must always be a JSON
// object, and an error for the model must be valid UTF-8 text.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{"path":"a.txt"}`, `{"path": "a.txt",}`, `"a.txt"`, `[1,2]`, ``, `null`, ` `,
		`{"argv":["ls","-l"],"timeout":1e300}`, `{"timeout":-1,"cwd":null}`, `{"a":{"b":[{"c":"\ud800"}]}}`,
		"{\"x\":\"\xff\"}", `{"limit":2.5}`, `{"offset":9007199254740993}`, `{"":1}`, `{"a":1}{"b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := parseArgs(json.RawMessage(raw))
		if args == nil {
			t.Fatalf("parseArgs(%q) returned a nil map", raw)
		}
		if err != nil && !utf8.ValidString(err.Error()) {
			t.Fatalf("parseArgs(%q) error is not UTF-8: %q", raw, err.Error())
		}
		a := tool.ReadArgs(args)
		for _, name := range []string{"path", "argv", "timeout", "cwd", "limit", "offset", "", "a"} {
			a.Str(name, true)
			a.Int(name, 3)
			a.Bool(name)
			a.Strings(name)
		}
		if e := a.Err(); e != nil && !utf8.ValidString(e.Error()) {
			t.Fatalf("argument error for %q is not UTF-8: %q", raw, e.Error())
		}
		hist := historyArgs(json.RawMessage(raw))
		var obj map[string]json.RawMessage
		if json.Unmarshal(hist, &obj) != nil || obj == nil {
			t.Fatalf("historyArgs(%q) = %q, not a JSON object", raw, hist)
		}
		if err == nil && len(args) > 0 && string(hist) != strings.TrimSpace(string(raw)) {
			t.Fatalf("historyArgs changed valid arguments %q into %q", raw, hist)
		}
	})
}
