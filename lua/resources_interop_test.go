//go:build interop

package lua

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

var (
	linkLine = regexp.MustCompile(`\[resource link "([^"]+)" .*?of server "([^"]+)"\]`)
	refURI   = regexp.MustCompile(`using the URI: (\S+)`)
)

// TestInteropResourcesOfEverything: server-everything's resources and
// templates are listed; the fake model calls get-resource-links, reads
// the first link it gets (a blob) through mcp_read_resource with the
// server and URI the link line names, then get-resource-reference and
// reads the URI that result gives: the blob as a record, the text as the
// server's text.
func TestInteropResourcesOfEverything(t *testing.T) {
	node, everything := npmPeer(t, "server-everything")
	var mu sync.Mutex
	step := 0
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		step++
		var last string
		if res := r.ToolResults(); len(res) > 0 {
			last = res[len(res)-1].Text
		}
		switch step {
		case 1:
			return llmtest.Calls(llmtest.Call("mcp_everything_get_resource_links", `{"count":2}`))
		case 2:
			m := linkLine.FindStringSubmatch(last)
			if m == nil {
				return llmtest.Say("no link in: " + last)
			}
			args, _ := json.Marshal(map[string]string{"server": m[2], "uri": m[1]})
			return llmtest.Calls(llmtest.Call("mcp_read_resource", string(args)))
		case 3:
			return llmtest.Calls(llmtest.Call("mcp_everything_get_resource_reference", `{"resourceType":"Text","resourceId":3}`))
		case 4:
			m := refURI.FindStringSubmatch(last)
			if m == nil {
				return llmtest.Say("no URI in: " + last)
			}
			args, _ := json.Marshal(map[string]string{"server": "everything", "uri": m[1]})
			return llmtest.Calls(llmtest.Call("mcp_read_resource", string(args)))
		}
		return llmtest.Say("read both")
	})
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Mode:  tool.Auto,
		Engine: &engine.Options{
			Dir:    t.TempDir(),
			Getenv: func(k string) string { return env[k] },
			Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}},
		},
	}, nil)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}},
	}})
	got := mustRun(t, h, fmt.Sprintf(`
		assert(tai.mcp.add{source = %q})
		assert(tai.mcp.enable{server = "everything"})
		local list = assert(tai.mcp.resources{server = "everything"})
		local uris, templates = {}, {}
		for _, r in ipairs(list.resources or {}) do uris[#uris + 1] = r.uri end
		for _, t in ipairs(list.templates or {}) do templates[#templates + 1] = t.uriTemplate end
		local read = assert(tai.mcp.read{server = "everything", uri = "demo://resource/static/document/architecture.md"})
		local answer = assert(tai.chat("read the linked resources"))
		return table.concat(uris, " "), table.concat(templates, " "), read.text, answer`, string(cfg)))
	uris, templates, doc, answer := got[0].(string), got[1].(string), got[2].(string), got[3]
	if !strings.Contains(uris, "demo://resource/static/document/architecture.md") {
		t.Errorf("listed resources: %s", uris)
	}
	if !strings.Contains(templates, "demo://resource/dynamic/text/{resourceId}") {
		t.Errorf("listed templates: %s", templates)
	}
	if !strings.Contains(doc, `[resource "demo://resource/static/document/architecture.md" (text/markdown)]`) || len(doc) < 200 {
		t.Errorf("the person's read: %.300s", doc)
	}
	if answer != "read both" {
		t.Fatalf("answer = %v", answer)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	read1 := reqs[2].ToolResults()
	// Its first link is a blob: stored as a record, named in a line.
	if len(read1) == 0 || !strings.Contains(read1[len(read1)-1].Text, `[resource "demo://resource/dynamic/blob/1" text/plain, `) ||
		!strings.Contains(read1[len(read1)-1].Text, "as record r") {
		t.Fatalf("the link's read: %+v", read1)
	}
	read3 := reqs[4].ToolResults()
	if len(read3) == 0 || !strings.Contains(read3[len(read3)-1].Text, "Resource 3: This is a plaintext resource") {
		t.Fatalf("the reference's read: %+v", read3)
	}
}
