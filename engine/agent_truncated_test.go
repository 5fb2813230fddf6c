package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
)

// cutOff answers like a model that hit its token limit: finish "length",
// with the given text and tool calls (name, raw arguments pairs).
func cutOff(text string, pairs ...string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return cutBy(llm.FinishLength, text, pairs...)
}

// cutBy answers like cutOff with the finish reason given.
func cutBy(reason, text string, pairs ...string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return func(context.Context, llm.Request, func(string)) (llm.Response, error) {
		var tcs []llm.ToolCall
		for i := 0; i+1 < len(pairs); i += 2 {
			tcs = append(tcs, llm.ToolCall{ID: "cut" + pairs[i], Name: pairs[i], Arguments: json.RawMessage(pairs[i+1])})
		}
		return llm.Response{Message: llm.Message{Role: "assistant", Content: text, ToolCalls: tcs}, FinishReason: reason}, nil
	}
}

func TestAgentTruncatedAnswers(t *testing.T) {
	t.Run("cut tool call is not run", func(t *testing.T) {
		client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
			// The whole first call survived; the second was cut mid-arguments.
			cutOff("", "list_dir", `{"path":"."}`, "write_file", `{"path":"out.txt","content":"half of the te`),
			say("I will write it in smaller parts."),
		}}
		e := newEngine(t, client, &Options{Mode: tool.Yolo})
		var outcomes []string
		ev := Events{OnToolEnd: func(ev ToolEvent) { outcomes = append(outcomes, ev.Name+":"+ev.Outcome) }}
		a := newSession(t, e).NewAgent(nil)
		turn, err := a.RunTurn(turnCtx(t), "write the report", &TurnOptions{Events: ev})
		if err != nil {
			t.Fatal(err)
		}
		if turn.Truncated {
			t.Errorf("the final answer was complete, but Truncated is set")
		}
		if _, err := os.Stat(filepath.Join(e.Dir(), "out.txt")); err == nil {
			t.Fatal("write_file ran with cut-off arguments")
		}
		msgs := client.requests()[1].Messages
		results := msgs[len(msgs)-2:]
		if results[0].IsError {
			t.Errorf("the complete call failed: %+v", results[0])
		}
		if r := results[1]; !r.IsError || !strings.Contains(r.Content, "cut off") || !strings.Contains(r.Content, "not run") {
			t.Errorf("cut call result = %+v; want an error saying it was cut off and not run", r)
		}
		checkHistory(t, a.History())
	})
	// The context window or a pause cuts an answer as the token limit
	// does; the last call is the one being written when it was cut, so it
	// is not run even when its arguments happen to parse.
	for _, reason := range []string{llm.FinishLength, llm.FinishContextWindow, llm.FinishPaused} {
		t.Run("last call not run: "+reason, func(t *testing.T) {
			client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
				cutBy(reason, "", "list_dir", `{"path":"."}`, "write_file", `{"path":"out.txt","content":"half"}`),
				say("Again, whole."),
			}}
			e := newEngine(t, client, &Options{Mode: tool.Yolo})
			a := newSession(t, e).NewAgent(nil)
			if _, err := a.RunTurn(turnCtx(t), "write the report", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(e.Dir(), "out.txt")); err == nil {
				t.Fatal("the call being written when the answer was cut ran")
			}
			msgs := client.requests()[1].Messages
			results := msgs[len(msgs)-2:]
			if results[0].IsError || !results[1].IsError || !strings.Contains(results[1].Content, "cut off") {
				t.Errorf("results = %+v; want the first run, the last refused as cut off", results)
			}
		})
		t.Run("cut final answer: "+reason, func(t *testing.T) {
			client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){cutBy(reason, "Half an")}}
			e := newEngine(t, client, &Options{Mode: tool.Yolo})
			turn, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "explain", nil)
			if err != nil || !turn.Truncated || turn.FinishReason != reason {
				t.Fatalf("turn = %+v, %v; want Truncated with reason %q", turn, err, reason)
			}
		})
	}
	t.Run("refusal is withheld", func(t *testing.T) {
		client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){cutBy(llm.FinishRefusal, "I can't help with that.")}}
		e := newEngine(t, client, &Options{Mode: tool.Yolo})
		turn, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "do it", nil)
		if err != nil || !turn.Filtered || turn.Empty || turn.Text != "I can't help with that." {
			t.Fatalf("turn = %+v, %v; want Filtered with the refusal as text", turn, err)
		}
	})
	t.Run("cut final answer", func(t *testing.T) {
		client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
			cutOff("The answer begins and then"),
			say("Complete this time."),
		}}
		e := newEngine(t, client, &Options{Mode: tool.Yolo})
		a := newSession(t, e).NewAgent(nil)
		turn, err := a.RunTurn(turnCtx(t), "explain", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !turn.Truncated || turn.Text != "The answer begins and then" || turn.Exhausted {
			t.Fatalf("turn = %+v; want the cut text with Truncated", turn)
		}
		if turn, err := a.RunTurn(turnCtx(t), "go on", nil); err != nil || turn.Truncated {
			t.Fatalf("next turn = %+v, %v; want it not truncated", turn, err)
		}
		checkHistory(t, a.History())
	})
}
