package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestConversationRoundTripRedactedAndListed(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("tok", "sk-conversation-secret", nil); err != nil {
		t.Fatal(err)
	}
	msgs := `[{"role":"user","content":"my key is sk-conversation-secret"},` +
		`{"role":"assistant","tool_calls":[{"id":"c1","name":"shell","arguments":{"command":"echo sk-conversation-secret"}}]}]`
	id, err := s.ConversationPut(Conversation{Dir: "/w", Title: "use sk-conversation-secret", Turns: 1, Messages: json.RawMessage(msgs)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.ConversationGet(id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c.Messages)+c.Title, "sk-conversation-secret") {
		t.Fatalf("a secret was kept: %s / %s", c.Title, c.Messages)
	}
	if !strings.Contains(string(c.Messages), "[REDACTED:tok]") || c.Dir != "/w" || c.Turns != 1 || c.Created.IsZero() {
		t.Fatalf("conversation %+v", c)
	}
	// An update keeps the id and the creation time and moves it first.
	other, _ := s.ConversationPut(Conversation{Dir: "/elsewhere", Title: "other"})
	if _, err := s.ConversationPut(Conversation{ID: id, Dir: "/w", Title: "first", Turns: 2}); err != nil {
		t.Fatal(err)
	}
	list, err := s.ConversationList(0, "")
	if err != nil || len(list) != 2 || list[0].ID != id || list[1].ID != other || list[0].Messages != nil {
		t.Fatalf("list %+v, %v", list, err)
	}
	if here, _ := s.ConversationList(5, "/w"); len(here) != 1 || here[0].Turns != 2 || !here[0].Created.Equal(c.Created) {
		t.Fatalf("list in /w: %+v", here)
	}
	if err := s.ConversationDelete(id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConversationGet(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, err := s.ConversationGet("r1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of a bad id: %v", err)
	}
}

func TestConversationRetention(t *testing.T) {
	s := newStore(t, nil)
	first := ""
	for i := range ConversationKeep + 3 {
		id, err := s.ConversationPut(Conversation{Title: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = id
		}
	}
	list, _ := s.ConversationList(0, "")
	if len(list) != ConversationKeep {
		t.Fatalf("%d kept, want %d", len(list), ConversationKeep)
	}
	if _, err := s.ConversationGet(first); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the oldest survived: %v", err)
	}
	big := json.RawMessage(`["` + strings.Repeat("x", ConversationMaxSize) + `"]`)
	var tooBig *ConversationTooBigError
	if _, err := s.ConversationPut(Conversation{Messages: big}); !errors.As(err, &tooBig) || tooBig.Size != int64(len(big)) {
		t.Fatalf("oversized conversation: %v", err)
	}
}

// Using a conversation makes it the first listed, in the folder it was
// used in, without touching its messages.
func TestConversationUse(t *testing.T) {
	s := newStore(t, nil)
	a, err := s.ConversationPut(Conversation{Dir: "/x", Title: "a", Messages: []byte(`[{"role":"user","content":"a"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConversationPut(Conversation{Dir: "/x", Title: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ConversationUse(a, "/y"); err != nil {
		t.Fatal(err)
	}
	list, err := s.ConversationList(0, "/y")
	if err != nil || len(list) != 1 || list[0].ID != a {
		t.Fatalf("list /y = %+v, %v", list, err)
	}
	all, _ := s.ConversationList(0, "")
	if all[0].ID != a {
		t.Fatalf("the conversation used last is not first: %+v", all)
	}
	c, err := s.ConversationGet(a)
	if err != nil || !strings.Contains(string(c.Messages), `"content":"a"`) || c.Title != "a" {
		t.Fatalf("after use: %+v, %v", c, err)
	}
	if err := s.ConversationUse("c99", "/y"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("using a missing one: %v", err)
	}
}
