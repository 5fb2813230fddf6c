package server

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tai/mcp/sse"
)

// events reads a text/event-stream body as its data lines.
func events(t *testing.T, body []byte) []string {
	t.Helper()
	p := sse.NewParser(bytes.NewReader(body), 1<<20, nil)
	var out []string
	for {
		ev, err := p.Next()
		if err != nil {
			break
		}
		out = append(out, string(ev.Data))
	}
	return out
}

func callWithToken(t *testing.T, url, sid string, id int, tool string, headers ...string) reply {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"progressToken":"tok-%d"}}}`, id, tool, id)
	return post(t, url, body, append([]string{"Mcp-Session-Id", sid}, headers...)...)
}

// A tools/call with a progressToken whose tool reports progress is
// answered with an event stream: the progress (only going forward), then
// the result. Without the token, or when the client reads no event
// streams, the answer is the one JSON object it always was.
func TestCallProgressStreams(t *testing.T) {
	_, url := startServer(t, newFakeCatalog(), nil)
	sid := initSession(t, url)

	r := callWithToken(t, url, sid, 7, "progress")
	if ct := r.header.Get("Content-Type"); r.status != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q: %s", r.status, ct, r.body)
	}
	got := events(t, r.body)
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-7","progress":1,"total":2,"message":"first"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-7","progress":2,"total":2}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"progressed"}]}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	for _, tc := range []struct {
		name string
		r    reply
	}{
		{"no token", call(t, url, sid, 8, "progress", `{}`)},
		{"JSON only", callWithToken(t, url, sid, 9, "progress", "Accept", "application/json")},
		{"a tool that reports nothing", callWithToken(t, url, sid, 10, "echo")},
	} {
		if ct := tc.r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q: %s", tc.name, ct, tc.r.body)
		}
		if res, code, msg := tc.r.rpc(t); code != 0 || res == nil {
			t.Errorf("%s: %d %s", tc.name, code, msg)
		}
	}
	// A token that is neither a string nor a number is refused.
	bad := post(t, url, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":{"x":1}}}}`, "Mcp-Session-Id", sid)
	if _, code, msg := bad.rpc(t); code != -32602 || !strings.Contains(msg, "progressToken must be a string or an integer") {
		t.Errorf("an object token: code %d %q, want -32602 naming the token", code, msg)
	}
}

// logging/setLevel is answered and logging declared; a failed call then
// logs its failure on its stream when errors pass the level set, and
// only then.
func TestSetLevelAndFailureLog(t *testing.T) {
	_, url := startServer(t, newFakeCatalog(), nil)
	init := post(t, url, initBody)
	if res, _, _ := init.rpc(t); res["capabilities"].(map[string]any)["logging"] == nil {
		t.Errorf("initialize does not declare logging: %s", init.body)
	}
	sid := initSession(t, url)
	setLevel := func(id int, level string) (int, string) {
		r := post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":%q}}`, id, level), "Mcp-Session-Id", sid)
		_, code, msg := r.rpc(t)
		return code, msg
	}
	// No level set: a failure goes as the plain answer.
	if r := callWithToken(t, url, sid, 2, "fail"); r.header.Get("Content-Type") != "application/json" {
		t.Errorf("a failure logged before any level was set: %s", r.body)
	}
	if code, msg := setLevel(3, "loud"); code != -32602 || !strings.Contains(msg, `"loud"`) {
		t.Errorf("an unknown level: %d %s", code, msg)
	}
	if code, msg := setLevel(4, "Error"); code != -32602 {
		t.Errorf("a level in the wrong case: %d %s", code, msg)
	}
	if code, msg := setLevel(5, "warning"); code != 0 {
		t.Fatalf("setLevel warning: %d %s", code, msg)
	}
	r := callWithToken(t, url, sid, 6, "boom")
	got := events(t, r.body)
	if len(got) != 2 || got[0] != `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"failure":"the catalog broke","tool":"boom"},"level":"error","logger":"tai"}}` ||
		!strings.Contains(got[1], `"id":6,"error":{"code":-32603,"message":"the catalog broke"}`) {
		t.Errorf("a failure at level warning: %q", got)
	}
	r = callWithToken(t, url, sid, 7, "fail")
	if got := events(t, r.body); len(got) != 2 || !strings.Contains(got[0], `"failure":"it failed"`) {
		t.Errorf("a failed result at level warning: %q", got)
	}
	if code, _ := setLevel(8, "critical"); code != 0 {
		t.Fatal("setLevel critical refused")
	}
	if r := callWithToken(t, url, sid, 9, "boom"); r.header.Get("Content-Type") != "application/json" {
		t.Errorf("a failure logged above the level set: %s", r.body)
	}
}
