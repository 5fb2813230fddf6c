package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// malformedReplies are replies to a pending request that are not valid
// JSON-RPC although their framing (one JSON object) is intact. @ID@ stands
// for the request's id.
var malformedReplies = []struct {
	name, reply, want string
}{
	{"both result and error", `{"jsonrpc":"2.0","id":@ID@,"result":{},"error":{"code":1,"message":"x"}}`, "both result and error"},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":@ID@,"result":{"content":[]}}`, `"jsonrpc" must be "2.0"`},
	{"no jsonrpc", `{"id":@ID@,"result":{"content":[]}}`, `"jsonrpc" must be "2.0"`},
	{"error without a code", `{"jsonrpc":"2.0","id":@ID@,"error":{"message":"x"}}`, "needs an integer code"},
	{"method beside a result", `{"jsonrpc":"2.0","id":@ID@,"method":"x","result":{}}`, "beside a result or error"},
	{"neither result nor error", `{"jsonrpc":"2.0","id":@ID@}`, "no method, result or error"},
}

// checkMalformed checks that err is the prompt decode failure of a call:
// a *MalformedReplyError naming the reason, not the call's deadline.
func checkMalformed(t *testing.T, err error, want string) {
	t.Helper()
	var me *MalformedReplyError
	if !errors.As(err, &me) {
		t.Fatalf("Call err = %v, want a *MalformedReplyError", err)
	}
	if !me.ID.Set || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "malformed reply") {
		t.Fatalf("Call err = %v (id %v), want the request's id and a message containing %q", err, me.ID, want)
	}
}

func TestStdioMalformedReplyFailsItsRequest(t *testing.T) {
	c := connectFake(t, "malformed", nil)
	for _, tc := range malformedReplies {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(testCtx(t), "echo", map[string]any{"text": tc.reply})
			checkMalformed(t, err, tc.want)
			ok := `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"fine"}]}}`
			if res, err := c.Call(testCtx(t), "echo", map[string]any{"text": ok}); err != nil || res.Text() != "fine" {
				t.Fatalf("the next call = %v, %v; the connection should keep working", res, err)
			}
		})
	}
	if n := c.Transport().(*StdioTransport).Garbage(); n != 0 {
		t.Errorf("Garbage() = %d; replies to a pending request are not garbage", n)
	}
}

func TestStdioMalformedLineForNoPendingRequestIsGarbage(t *testing.T) {
	c := connectFake(t, "malformed", nil)
	text := `{"jsonrpc":"1.0","id":987654,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"@ID@","result":{},"error":{"code":1,"message":"x"}}` + "\n" +
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"fine"}]}}`
	res, err := c.Call(testCtx(t), "echo", map[string]any{"text": text})
	if err != nil || res.Text() != "fine" {
		t.Fatalf("Call = %v, %v; malformed lines for other ids must not fail this request", res, err)
	}
	if n := c.Transport().(*StdioTransport).Garbage(); n != 2 {
		t.Errorf("Garbage() = %d, want the 2 stray lines counted", n)
	}
}

func TestHTTPMalformedReplyFailsItsRequest(t *testing.T) {
	for _, leg := range []string{"json", "sse", "sse after a notification"} {
		for _, tc := range malformedReplies {
			t.Run(leg+"/"+tc.name, func(t *testing.T) {
				f := newFakeHTTP(t)
				f.onCall = func(w http.ResponseWriter, _ *http.Request, id any, name string, _ map[string]any) bool {
					if name != "bad" {
						return false
					}
					idJSON, _ := json.Marshal(id)
					reply := strings.ReplaceAll(tc.reply, "@ID@", string(idJSON))
					switch leg {
					case "json":
						w.Header().Set("Content-Type", "application/json")
						w.Write([]byte(reply))
					case "sse":
						w.Header().Set("Content-Type", "text/event-stream")
						sseWrite(w, "data: %s\n\n", reply)
					default:
						w.Header().Set("Content-Type", "text/event-stream")
						sseWrite(w, "data: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)
						sseWrite(w, "data: %s\n\n", reply)
					}
					return true
				}
				c := fakeClient(t, f.start(), nil, nil)
				_, err := c.Call(httpCtx(t), "bad", nil)
				checkMalformed(t, err, tc.want)
				if res, err := c.Call(httpCtx(t), "echo", map[string]any{"text": "still here"}); err != nil || res.Text() != "still here" {
					t.Fatalf("the next call = %v, %v; the session should live on", res, err)
				}
			})
		}
	}
}
