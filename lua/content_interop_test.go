//go:build interop

package lua

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestInteropImageReachesModel has the fake model of each provider call
// server-everything's get-tiny-image and get-structured-content: the image
// reaches the model as an image (Anthropic: a block in the tool_result;
// OpenAI: a part in a user message after the tool messages), its text as a
// label with the size read from the PNG header, and the structured weather
// as text.
func TestInteropImageReachesModel(t *testing.T) {
	node, everything := npmPeer(t, "server-everything")
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			turns := []llmtest.Turn{
				llmtest.Calls(llmtest.Call("mcp_everything_get_tiny_image", `{}`)),
				llmtest.Calls(llmtest.Call("mcp_everything_get_structured_content", `{"location":"Chicago"}`)),
				llmtest.Say("a tiny image and rain"),
			}
			var srv *llmtest.Server
			var env map[string]string
			if provider == "openai" {
				srv = llmtest.NewOpenAI(t, turns...)
				env = map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
			} else {
				srv = llmtest.NewAnthropic(t, turns...)
				env = map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test-key", "ANTHROPIC_BASE_URL": srv.BaseURL, "TAI_MODEL": "claude-fake"}
			}
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
				local media = {}
				local answer = assert(tai.chat("show me the image, then the weather", {
					on_tool_end = function(ev) for _, m in ipairs(ev.media or {}) do media[#media + 1] = m end end }))
				-- The conversation, image included, survives a save and restore.
				local hist = assert(tai.chat_history())
				assert(tai.chat_restore(hist))
				local parts = 0
				for _, m in ipairs(assert(tai.chat_history())) do
					for _, p in ipairs(m.parts or {}) do
						if p.type == "image" and p.mime == "image/png" and #p.data > 0 then parts = parts + 1 end
					end
				end
				local path = assert(tai.media.open(1))
				return answer, table.concat(media, "|"), parts, path`, string(cfg)))
			if got[0] != "a tiny image and rain" {
				t.Fatalf("answer = %v", got[0])
			}
			if got[2] != int64(1) {
				t.Errorf("the restored history holds %v images, want 1", got[2])
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			imgs := reqs[1].Images()
			if len(imgs) != 1 || imgs[0].MIME != "image/png" {
				t.Fatalf("images the model got: %d\n%.2000s", len(imgs), reqs[1].Body)
			}
			cfgPNG, err := png.DecodeConfig(bytes.NewReader(imgs[0].Data))
			if err != nil {
				t.Fatalf("the image is not the PNG the server sent: %v", err)
			}
			res := reqs[1].ToolResults()
			label := fmt.Sprintf("[image png %d×%d, ", cfgPNG.Width, cfgPNG.Height)
			if len(res) != 1 || !strings.Contains(res[0].Text, label) {
				t.Fatalf("tool result text %+v lacks %q", res, label)
			}
			numbered := fmt.Sprintf("[image 1: png %d×%d, ", cfgPNG.Width, cfgPNG.Height)
			if media := got[1].(string); !strings.HasPrefix(media, numbered) || strings.Contains(media, "|") {
				t.Errorf("on_tool_end's media = %q, want one %q…", media, numbered)
			}
			path := got[3].(string)
			t.Cleanup(func() { os.RemoveAll(filepath.Dir(path)) })
			if saved, err := os.ReadFile(path); err != nil || !bytes.Equal(saved, imgs[0].Data) || filepath.Base(path) != "image-1.png" {
				t.Errorf("tai.media.open(1) wrote %s: %d bytes (%v), want the %d of the image", path, len(saved), err, len(imgs[0].Data))
			}
			if strings.Contains(string(reqs[1].Body), `"data":"iVBOR`) && provider == "openai" || strings.Count(string(reqs[1].Body), "iVBOR") != 1 {
				t.Errorf("the image went out other than once as an image: %.3000s", reqs[1].Body)
			}
			if res := reqs[2].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, `"conditions":"Light rain / drizzle"`) || strings.Contains(res[0].Text, "note:") {
				t.Fatalf("structured result = %+v", res)
			}
		})
	}
}
