package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"tai/mcp"
)

// TestDeclaresOnlyWhatItServes: initialize declares tools and logging and
// nothing else (no resources, prompts or completions), and every method
// of those features is answered -32601 naming what is served.
func TestDeclaresOnlyWhatItServes(t *testing.T) {
	_, url := startServer(t, newFakeCatalog(), nil)
	res, code, msg := post(t, url, initBody).rpc(t)
	if code != 0 {
		t.Fatalf("initialize: %d %s", code, msg)
	}
	caps, _ := json.Marshal(res["capabilities"])
	if string(caps) != `{"logging":{},"tools":{"listChanged":false}}` {
		t.Fatalf("capabilities = %s, want tools and logging only", caps)
	}
	sid := initSession(t, url)
	for i, method := range []string{
		mcp.MethodResourcesList, mcp.MethodResourceTemplatesList, mcp.MethodResourcesRead, "resources/subscribe",
		"prompts/list", "prompts/get", "completion/complete",
	} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"uri":"test://x","name":"p"}}`, i+1, method)
		_, code, msg := post(t, url, body, "Mcp-Session-Id", sid).rpc(t)
		if code != mcp.CodeMethodNotFound {
			t.Errorf("%s answered %d %q, want %d", method, code, msg, mcp.CodeMethodNotFound)
		}
	}
}
