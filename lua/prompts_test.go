package lua

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// promptPNG is a 1×1 PNG the fake server's prompt "look" sends.
var promptPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// TestPromptReachesModel renders the fake server's prompt "look" (text
// and an image) with tai.mcp.prompt and sends it with tai.chat's messages
// option: the model gets the text and the image as an image part in the
// user turn, and the server's instructions in its system prompt, fenced.
func TestPromptReachesModel(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, srv, _ := modelHost(t, tool.Yolo)
	srv.Push(llmtest.Say("a pixel"))
	cfg, _ := json.Marshal(map[string]any{"fake": map[string]any{
		"transport": "stdio", "command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": "prompts"},
	}})
	got := mustRun(t, h, fmt.Sprintf(`
		assert(tai.mcp.add{source = %q})
		assert(tai.mcp.enable{server = "fake"})
		local list = assert(tai.mcp.prompts())
		local turn = assert(tai.mcp.prompt{server = "fake", name = "look"})
		local answer = assert(tai.chat("", {messages = turn.messages}))
		local instr = assert(tai.mcp.instructions())
		return #list, list[1].name, answer, instr[1].text, instr[1].state`, string(cfg)))
	if got[0] != int64(1) || got[1] != "look" || got[2] != "a pixel" || got[3] != "Call echo before sulk." || got[4] != "granted" {
		t.Fatalf("got %#v", got)
	}
	reqs := srv.Requests()
	imgs := reqs[0].Images()
	if len(imgs) != 1 || imgs[0].MIME != "image/png" || string(imgs[0].Data) != string(promptPNG) {
		t.Fatalf("images the model got: %d\n%.2000s", len(imgs), reqs[0].Body)
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, "What is in this picture?") || !strings.Contains(body, "Call echo before sulk.") || !strings.Contains(body, "mcp-server-instructions server=") {
		t.Fatalf("request: %.3000s", body)
	}
}
