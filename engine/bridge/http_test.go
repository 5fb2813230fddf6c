package bridge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/tool"
)

// TestHTTPServer registers a Streamable HTTP server (the go-sdk's handler
// on loopback) whose Authorization header comes from a vault secret: the
// consent shows the URL and the header's name only, the call works, and
// the token is redacted from what comes back.
func TestHTTPServer(t *testing.T) {
	const token = "web-token-5f3a9c1e"
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer("v1") }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	f := newFixture(t, tool.Interactive, "")
	if err := f.store.SecretSet("WEB_TOKEN", token, nil); err != nil {
		t.Fatal(err)
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"web": map[string]any{
		"url": ts.URL, "headers": map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"},
	}}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: src})
	if err != nil || rep.Servers[0].Outcome != Added || rep.Servers[0].Transport != "http" {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	qs := f.p.questions()
	if len(qs) != 1 {
		t.Fatalf("questions %q", qs)
	}
	mustContain(t, "consent", qs[0], "url:     "+ts.URL, "headers: Authorization (from ${WEB_TOKEN})  (values not shown)")
	if strings.Contains(qs[0], token) {
		t.Fatalf("the consent shows the token: %q", qs[0])
	}
	row, err := f.store.ServerGet("web")
	if err != nil || row.Headers["Authorization"] != "Bearer ${WEB_TOKEN}" {
		t.Fatalf("stored headers %v, %v (want the reference, not the value)", row.Headers, err)
	}
	if _, err := f.b.SetEnabled(ctxT(t), "web", "", true); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_web_echo", map[string]any{"text": "the token is " + token})
	if err != nil || res.IsError {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if got := text(res); got != "the token is [REDACTED:WEB_TOKEN]" {
		t.Fatalf("result %q", got)
	}
}
