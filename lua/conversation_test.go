package lua

import (
	"reflect"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestConversationKeptAndRestored runs a turn, keeps the conversation in
// the vault (a secret in it redacted), restores it into a fresh
// conversation and checks the next request carries it.
func TestConversationKeptAndRestored(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Interactive, llmtest.Say("first answer"), llmtest.Say("second answer"))
	got := mustRun(t, h, `
		assert(tai.vault.secret_set("tok", "sk-kept-secret-1"))
		assert(tai.chat("remember sk-kept-secret-1 please"))
		local h = tai.chat_history()
		local id = assert(tai.conversations.save{dir = "/w", title = "remember", messages = h})
		tai.chat_reset()
		local c = assert(tai.conversations.get(id))
		assert(tai.chat_restore(c.messages))
		assert(tai.chat("and now?"))
		local list = tai.conversations.list(5)
		return #h, h[1].role, h[2].content, c.turns, c.messages[1].content, #list, list[1].id == id, list[1].messages == nil`)
	want := []any{int64(2), "user", "first answer", int64(1), "remember [REDACTED:tok] please", int64(1), true, true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 || reqs[1].Messages[1].Text != "first answer" {
		t.Fatalf("the restored conversation did not reach the model: %+v", reqs[len(reqs)-1].Messages)
	}
}

func TestModelsAndModelSwitch(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Interactive, llmtest.Say("ok"))
	srv.SetModels("fake-b", "fake-a")
	got := mustRun(t, h, `
		local list = assert(tai.models())
		local p = assert(tai.model("fake-b"))
		assert(tai.chat("hi"))
		return table.concat(list, ","), p.model, tai.profiles.current().model`)
	if want := []any{"fake-a,fake-b", "fake-b", "fake-b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if m := srv.Requests()[0].Model; m != "fake-b" {
		t.Fatalf("request went to model %q", m)
	}
}
