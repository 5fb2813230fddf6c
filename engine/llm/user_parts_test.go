package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUserMessageImages: a user message's images (a server's prompt)
// reach both providers inside that message, after its text; a type no
// provider takes stays its label.
func TestUserMessageImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	req := Request{Messages: []Message{{Role: "user", Content: "Describe this. [image png 1×1, 8 B]", Parts: []Part{
		{Type: "image", MIME: "image/png", Data: png},
		{Type: "image", MIME: "image/tiff", Data: []byte("II*")},
	}}}}

	an, _ := json.Marshal(anthropicRequest("claude-fake", 0, req, false))
	if got := string(an); !strings.Contains(got, `"content":[{"type":"text","text":"Describe this.`) ||
		!strings.Contains(got, `{"type":"image","source":{"type":"base64","media_type":"image/png"`) || strings.Contains(got, "image/tiff") {
		t.Fatalf("anthropic request: %s", got)
	}
	oa, _ := json.Marshal(openAIRequest(ProviderConfig{Model: "m"}, req, false))
	if got := string(oa); !strings.Contains(got, `"role":"user","content":[{"type":"text","text":"Describe this.`) ||
		!strings.Contains(got, `"image_url":{"url":"data:image/png;base64,`) || strings.Contains(got, "image/tiff") {
		t.Fatalf("openai request: %s", got)
	}
	plain, _ := json.Marshal(openAIRequest(ProviderConfig{Model: "m"}, Request{Messages: []Message{{Role: "user", Content: "hi"}}}, false))
	if !strings.Contains(string(plain), `"content":"hi"`) {
		t.Fatalf("a user message without parts changed shape: %s", plain)
	}
}
