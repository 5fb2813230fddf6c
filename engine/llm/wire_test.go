package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// The fakes refuse, and fail the test on, every request the real API
// would refuse (llmtest checks each against the API's published schema),
// so these tests send histories that broke real requests and check that
// what goes out is valid.

func callMsg(text string, calls ...ToolCall) Message {
	return Message{Role: "assistant", Content: text, ToolCalls: calls}
}

func result(id, text string) Message {
	return Message{Role: "tool", ToolCallID: id, Name: "read_file", Content: text}
}

func readCall(id string) ToolCall {
	return ToolCall{ID: id, Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}
}

// both runs f against each provider, streamed and whole.
func both(t *testing.T, f func(t *testing.T, p provider, stream bool)) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", p.name, stream), func(t *testing.T) { f(t, p, stream) })
		}
	}
}

func complete(t *testing.T, cl ChatClient, req Request, stream bool) (Response, error) {
	t.Helper()
	var onText func(string)
	if stream {
		onText = func(string) {}
	}
	return cl.Complete(testCtx(t), req, onText)
}

func TestBlankTextNeverSent(t *testing.T) {
	// Claude's "\n\n" before a tool call, a blank answer, a blank message
	// and a blank system prompt, as a stored history holds them: resent,
	// each turn must still be valid.
	hist := []Message{
		{Role: "system", Content: " \n"},
		{Role: "user", Content: "read a.txt"},
		callMsg("\n\n", readCall("toolu_1")),
		result("toolu_1", "  "),
		{Role: "assistant", Content: "\n"},
		{Role: "user", Content: "\t"},
		{Role: "user", Content: "and now?"},
	}
	both(t, func(t *testing.T, p provider, stream bool) {
		cl, srv, _ := p.start(t, llmtest.Say("ok"))
		if _, err := complete(t, cl, Request{Messages: hist}, stream); err != nil {
			t.Fatal(err)
		}
		if p.name == "anthropic" && strings.Contains(string(srv.Requests()[0].Body), `"text":"\n`) {
			t.Errorf("a blank text block went out: %s", srv.Requests()[0].Body)
		}
	})
}

func TestToolCallIDsFromOtherServers(t *testing.T) {
	// Kimi's ids, and a server that numbers its calls from 0 each turn.
	hist := []Message{
		{Role: "user", Content: "read it"},
		callMsg("", readCall("functions.read_file:0")),
		result("functions.read_file:0", "alpha"),
		callMsg("", readCall("call_0"), readCall("call_1")),
		result("call_0", "beta"),
		result("call_1", "gamma"),
		callMsg("Again.", readCall("call_0")),
		result("call_0", "delta"),
		{Role: "user", Content: "so?"},
	}
	both(t, func(t *testing.T, p provider, stream bool) {
		cl, srv, _ := p.start(t, llmtest.Say("ok"))
		if _, err := complete(t, cl, Request{Messages: hist}, stream); err != nil {
			t.Fatal(err)
		}
		// Each result still answers its own call: the fake pairs them.
		var got []string
		for _, m := range srv.Requests()[0].Messages {
			for _, c := range m.ToolCalls {
				got = append(got, c.ID)
			}
			if m.Role == "tool" {
				got = append(got, m.ToolCallID+"="+m.Text)
			}
		}
		want := "functions.read_file:0 functions.read_file:0=alpha call_0 call_1 call_0=beta call_1=gamma call_0_2 call_0_2=delta"
		if p.name == "anthropic" {
			want = "functions_read_file_0 functions_read_file_0=alpha call_0 call_1 call_0=beta call_1=gamma call_0_2 call_0_2=delta"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("ids sent %q\nwant      %q", strings.Join(got, " "), want)
		}
	})
}

func TestMadeUpIDsNeverRepeat(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			turn := llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read_file", `{}`)}, NoIDs: true}
			cl, _, _ := providers[0].start(t, turn, turn)
			seen := map[string]bool{}
			for range 2 {
				resp, err := complete(t, cl, userRequest("go"), stream)
				if err != nil {
					t.Fatal(err)
				}
				id := resp.Message.ToolCalls[0].ID
				if id == "" || seen[id] {
					t.Fatalf("made-up id %q repeats across turns", id)
				}
				seen[id] = true
			}
		})
	}
}

func TestOpenAIRefusal(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			cl, _, _ := providers[0].start(t, llmtest.Turn{Refusal: "I can't help with that."})
			resp, err := complete(t, cl, userRequest("do it"), stream)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "I can't help with that." || resp.FinishReason != FinishRefusal {
				t.Errorf("answer %q, finish %q; want the refusal, finish refusal", resp.Message.Content, resp.FinishReason)
			}
		})
	}
}

func TestPrefill(t *testing.T) {
	prefill := Request{Messages: []Message{{Role: "user", Content: "Name a colour."}, {Role: "assistant", Content: "The colour is"}}}
	cases := []struct {
		model string
		ok    bool
	}{
		{"claude-sonnet-4-6", false},
		{"claude-opus-4-6-20260205", false},
		{"claude-opus-5", false},
		{"claude-sonnet-4-5-20250929", true},
		{"claude-opus-4-1", true},
		{"claude-sonnet-4-20250514", true},
		{"claude-3-7-sonnet-latest", true},
		{"my-proxy-alias", true},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t, llmtest.Say(" blue."))
			cl := NewAnthropic(ProviderConfig{BaseURL: srv.BaseURL, Model: tc.model, APIKey: testKey})
			_, err := cl.Complete(testCtx(t), prefill, nil)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && (!errors.Is(err, ErrPrefill) || len(srv.Requests()) != 0 || !strings.Contains(err.Error(), "end the messages with a user message")) {
				t.Fatalf("err = %v after %d requests; want ErrPrefill before sending", err, len(srv.Requests()))
			}
		})
	}
}

func TestOpenAIToolsCapped(t *testing.T) {
	cl, srv, _ := providers[0].start(t, llmtest.Say("ok"))
	req := userRequest("hi")
	for i := range MaxOpenAITools + 1 {
		req.Tools = append(req.Tools, ToolSpec{Name: fmt.Sprintf("tool_%03d", i)})
	}
	if _, err := cl.Complete(testCtx(t), req, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()[0].Tools); n != MaxOpenAITools {
		t.Fatalf("%d tools offered, want %d", n, MaxOpenAITools)
	}
}
