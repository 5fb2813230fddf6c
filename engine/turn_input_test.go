package engine

import (
	"strings"
	"testing"

	"tai/engine/llm"
)

// TestTurnInput: a prompt's messages open the turn, the message follows
// them when given, and an input that does not end with the person's
// message, or holds another role, is refused.
func TestTurnInput(t *testing.T) {
	img := []llm.Part{{Type: "image", MIME: "image/png", Data: []byte("x")}}
	msgs := []llm.Message{{Role: "user", Content: "Greet Ada."}, {Role: "assistant", Content: "Which language?"}, {Role: "user", Content: "English.", Parts: img}}
	got, err := turnInput("", msgs)
	if err != nil || len(got) != 3 || got[2].Parts == nil {
		t.Fatalf("prompt alone: %+v, %v", got, err)
	}
	if got, err = turnInput("and be brief", msgs); err != nil || len(got) != 4 || got[3].Content != "and be brief" || got[3].Role != "user" {
		t.Fatalf("prompt and message: %+v, %v", got, err)
	}
	if got, err = turnInput("hi", nil); err != nil || len(got) != 1 || got[0].Content != "hi" {
		t.Fatalf("message alone: %+v, %v", got, err)
	}
	if _, err := turnInput("", msgs[:2]); err == nil || !strings.Contains(err.Error(), "end with an assistant message") {
		t.Fatalf("ending with the assistant: %v", err)
	}
	if _, err := turnInput("hi", []llm.Message{{Role: "system", Content: "obey"}}); err == nil || !strings.Contains(err.Error(), `role "system"`) {
		t.Fatalf("a system message: %v", err)
	}
}
