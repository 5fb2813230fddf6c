//lint:file-ignore SA1019 sampling, deprecated after 2025-11-25, is the client feature this peer exercises

package lua

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp/sampling"
)

// samplerMode makes the test binary a go-sdk stdio server (see TestMain)
// whose tool sample{prompt, times, huge} asks the client for sampling
// times times (a prompt of 9 MB when huge) and answers with each outcome
// on a line: "ok MODEL: TEXT" or "error: …".
const samplerMode = "sampler"

func serveSampler() {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-sampler", Version: "1.8.0"}, nil)
	type args struct {
		Prompt string `json:"prompt,omitempty"`
		Times  int    `json:"times,omitempty"`
		Huge   bool   `json:"huge,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "sample", Description: "asks the client's model"},
		func(ctx context.Context, req *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
			prompt := a.Prompt
			if a.Huge {
				prompt = strings.Repeat("x", 9<<20)
			}
			var lines []string
			for range max(a.Times, 1) {
				res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{
					Messages:     []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}},
					SystemPrompt: "answer in one word", MaxTokens: 50,
					ModelPreferences: &sdk.ModelPreferences{Hints: []*sdk.ModelHint{{Name: "claude-3-haiku"}}, SpeedPriority: 0.9},
				})
				if err != nil {
					lines = append(lines, "error: "+err.Error())
					continue
				}
				text := ""
				if tc, ok := res.Content.(*sdk.TextContent); ok {
					text = tc.Text
				}
				lines = append(lines, fmt.Sprintf("ok %s: %s", res.Model, text))
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sample_tools", Description: "asks the client's model, offering it a weather tool"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.CreateMessageWithTools(ctx, &sdk.CreateMessageWithToolsParams{
				Messages:  []*sdk.SamplingMessageV2{{Role: "user", Content: []sdk.Content{&sdk.TextContent{Text: "weather in Paris?"}}}},
				MaxTokens: 50,
				Tools: []*sdk.Tool{{Name: "weather", Description: "the weather of a city",
					InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}},
				ToolChoice: &sdk.ToolChoice{Mode: "auto"},
			})
			if err != nil {
				return nil, nil, err
			}
			var parts []string
			for _, c := range res.Content {
				switch c := c.(type) {
				case *sdk.TextContent:
					parts = append(parts, "text "+c.Text)
				case *sdk.ToolUseContent:
					parts = append(parts, fmt.Sprintf("tool_use %s %v", c.Name, c.Input["city"]))
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.StopReason + ": " + strings.Join(parts, ", ")}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "sampler:", err)
	}
}

// samplerHost is a host in mode whose model is the fake, with the
// go-sdk sampler registered as server "s" and enabled.
func samplerHost(t *testing.T, mode tool.Mode) (*testHost, *llmtest.Server) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, srv, _ := modelHost(t, mode)
	cfg, _ := json.Marshal(map[string]any{"s": map[string]any{
		"transport": "stdio", "command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": samplerMode},
	}})
	mustRun(t, h, fmt.Sprintf(`
		tai.prompter{confirm = function() return true end, ask = function() return "y" end}
		local rep = assert(tai.mcp.add{source = %q})
		assert(tai.mcp.enable{server = "s"}, tai.json.encode(rep))
		tai.prompter(nil)`, string(cfg)))
	return h, srv
}

// TestSamplingAskedShownAndAnswered: the go-sdk server asks for sampling
// in the middle of a call the model made. The person sees the request in
// full (server, system prompt, maxTokens, model hints, the prompt) before
// anything is sent, edits the prompt, sees the model's answer, returns
// it; the server gets the answer of the person's model, the turn counts
// its tokens, the call's line says what happened and the audit trail has
// an mcp-sampling entry without the text.
func TestSamplingAskedShownAndAnswered(t *testing.T) {
	h, srv := samplerHost(t, tool.Interactive)
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_s_sample", `{"prompt":"capital of France?"}`)),
		llmtest.Turn{Text: "Paris", InputTokens: 70, OutputTokens: 3},
		llmtest.Turn{Text: "done", InputTokens: 10, OutputTokens: 2},
	)
	got := mustRun(t, h, `
		local seen = {}
		tai.prompter{
			confirm = function() return true end,
			ask = function() return "" end,
			sample = function(q)
				seen.server, seen.model, seen.system, seen.max = q.server, q.model, q.request.systemPrompt, q.request.maxTokens
				seen.hint = q.request.modelPreferences.hints[1]
				seen.prompt = q.request.messages[1].content[1].text
				return {action = "approve", prompt = "capital of France? edited"}
			end,
			sample_answer = function(q, a) seen.answer = a.text .. " by " .. a.model return true end,
		}
		local notes = {}
		local answer, d = tai.chat("sample it", {on_tool_end = function(ev) for _, n in ipairs(ev.notes or {}) do notes[#notes + 1] = n end end})
		local audit = tai.vault.audit_tail(5, "mcp-sampling")
		return answer, seen.server, seen.model, seen.system, seen.max, seen.hint, seen.prompt, seen.answer,
			d.usage.input_tokens, table.concat(notes, "|"), #audit, audit[1] and audit[1].outcome, tai.json.encode(audit)`)
	if got[0] != "done" {
		for _, r := range srv.Requests() {
			t.Logf("request: %+v", r.ToolResults())
		}
	}
	want := []any{"done", "s", "fake-model", "answer in one word", int64(50), "claude-3-haiku", "capital of France?", "Paris by fake-model", int64(70 + 10 + 0)}
	for i, w := range want {
		if i == 8 {
			continue
		}
		if got[i] != w {
			t.Fatalf("result %d = %#v, want %#v (all: %v)", i, got[i], w, got)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (the turn, the sampling, the turn)", len(reqs))
	}
	if s := reqs[1]; s.LastUser() != "capital of France? edited" || !strings.Contains(string(s.Body), "answer in one word") || len(s.ToolNames()) != 0 {
		t.Fatalf("the sampling request the model got: %.600s", s.Body)
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || res[0].Text != "ok fake-model: Paris" {
		t.Fatalf("the server got %+v, want the model's answer", res)
	}
	if in := got[8].(int64); in < 70 {
		t.Fatalf("the turn's usage counts %d input tokens, want the sampling's 70 among them", in)
	}
	if !strings.Contains(got[9].(string), "s asked for sampling; fake-model answered (70 tokens in, 3 out)") {
		t.Fatalf("notes: %q", got[9])
	}
	if got[10] != int64(1) || got[11] != "ok" || strings.Contains(got[12].(string), "France") || strings.Contains(got[12].(string), "Paris") {
		t.Fatalf("audit: %v %v %s", got[10], got[11], got[12])
	}
}

// TestSamplingDeniedAndAnswerKept: denying the request sends nothing to
// the model; keeping the answer sends nothing back. Both reach the
// server as errors.
func TestSamplingDeniedAndAnswerKept(t *testing.T) {
	h, srv := samplerHost(t, tool.Interactive)
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_s_sample", `{"prompt":"one","times":2}`)),
		llmtest.Say("secret answer"),
		llmtest.Say("done"),
	)
	mustRun(t, h, `
		local n = 0
		tai.prompter{
			confirm = function() return true end, ask = function() return "" end,
			sample = function(q) n = n + 1 if n == 1 then return "deny" end return "approve" end,
			sample_answer = function() return false end,
		}
		assert(tai.chat("sample it"))`)
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (only the approved sampling reached the model)", len(reqs))
	}
	res := reqs[2].ToolResults()
	if len(res) != 1 || strings.Count(res[0].Text, "error:") != 2 || !strings.Contains(res[0].Text, "you denied it") ||
		!strings.Contains(res[0].Text, "you kept fake-model's answer") || strings.Contains(res[0].Text, "secret answer") {
		t.Fatalf("the server got %+v", res)
	}
}

// TestSamplingRefusedUnattended: under --auto and --yolo nobody is asked
// and the model is never called for sampling; the call's line says why.
func TestSamplingRefusedUnattended(t *testing.T) {
	for _, mode := range []tool.Mode{tool.Auto, tool.Yolo} {
		t.Run(mode.String(), func(t *testing.T) {
			h, srv := samplerHost(t, mode)
			srv.Push(llmtest.Calls(llmtest.Call("mcp_s_sample", `{"prompt":"hi"}`)), llmtest.Say("done"))
			got := mustRun(t, h, `
				local notes = {}
				assert(tai.chat("sample it", {on_tool_end = function(ev) for _, n in ipairs(ev.notes or {}) do notes[#notes + 1] = n end end}))
				return table.concat(notes, "|")`)
			want := "s asked for sampling, refused: --" + mode.String() + " answers no server's questions"
			if note := got[0].(string); !strings.Contains(note, want) {
				t.Fatalf("notes %q, want %q", note, want)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2: the sampling reached the model", len(reqs))
			}
			if res := reqs[1].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "error:") || !strings.Contains(res[0].Text, want[len("s asked for sampling, refused: "):]) {
				t.Fatalf("the server got %+v", res)
			}
		})
	}
}

// TestSamplingHostile: a server asking in a loop is cut off by the rate
// limit (the model answers only the first ones), and a 9 MB prompt is
// refused before anyone is asked.
func TestSamplingHostile(t *testing.T) {
	h, srv := samplerHost(t, tool.Interactive)
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_s_sample", `{"prompt":"again","times":5}`)),
		llmtest.Say("a1"), llmtest.Say("a2"), llmtest.Say("looped"),
		llmtest.Calls(llmtest.Call("mcp_s_sample", `{"huge":true}`)),
		llmtest.Say("done"),
	)
	got := mustRun(t, h, `
		assert(tai.mcp.sampling_limit(2) == 2)
		local asked = 0
		tai.prompter{
			confirm = function() return true end, ask = function() return "" end,
			sample = function() asked = asked + 1 return "approve" end,
			sample_answer = function() return true end,
		}
		assert(tai.chat("sample it"))
		local limit = tai.mcp.sampling_limit()
		local ok = pcall(tai.mcp.sampling_limit, 0)
		tai.mcp.sampling_limit(100)
		assert(tai.chat("once more, big"))
		return asked, limit, ok`)
	if got[0] != int64(2) || got[1] != int64(2) || got[2] != false {
		t.Fatalf("asked %v times, limit %v, limit 0 accepted %v", got[0], got[1], got[2])
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6", len(reqs))
	}
	loop := reqs[3].ToolResults()
	if len(loop) != 1 || strings.Count(loop[0].Text, "ok fake-model") != 2 || strings.Count(loop[0].Text, "more than 2 times a minute") != 3 {
		t.Fatalf("the looping server got %+v", loop)
	}
	huge := reqs[5].ToolResults()
	if len(huge) != 1 || !strings.Contains(huge[0].Text, "over the 262144 tai shows a person") || len(huge[0].Text) > 4096 {
		t.Fatalf("the 9 MB request got %.500s", huge[0].Text)
	}
}

// TestSamplingToolsOnlyWhenAllowed: a request that offers the model a
// tool (the go-sdk's CreateMessageWithTools) reaches the model with that
// tool only when the person allows it (t); the model's tool use then goes
// back to the server as a tool_use item with stopReason toolUse, for the
// server to run. Approved without its tools (y), the model is offered none.
func TestSamplingToolsOnlyWhenAllowed(t *testing.T) {
	h, srv := samplerHost(t, tool.Interactive)
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_s_sample_tools", `{}`)),
		llmtest.Calls(llmtest.Call("weather", `{"city":"Paris"}`)),
		llmtest.Calls(llmtest.Call("mcp_s_sample_tools", `{}`)),
		llmtest.Say("no tools here"),
		llmtest.Say("done"),
	)
	got := mustRun(t, h, `
		local n, offered = 0, {}
		tai.prompter{
			confirm = function() return true end, ask = function() return "" end,
			sample = function(q)
				n = n + 1
				offered[#offered + 1] = q.request.tools[1].name .. "/" .. q.request.toolChoice
				if n == 1 then return {action = "approve", tools = true} end
				return "approve"
			end,
			sample_answer = function() return true end,
		}
		assert(tai.chat("sample with tools"))
		return table.concat(offered, ",")`)
	if got[0] != "weather/auto,weather/auto" {
		t.Fatalf("the person was shown %v", got[0])
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	if names := reqs[1].ToolNames(); len(names) != 1 || names[0] != "weather" {
		t.Fatalf("with t, the model was offered %v, want [weather]", names)
	}
	if names := reqs[3].ToolNames(); len(names) != 0 {
		t.Fatalf("with y, the model was offered %v, want none", names)
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || res[0].Text != "toolUse: tool_use weather Paris" {
		t.Fatalf("the server got %+v", res)
	}
	if res := reqs[4].ToolResults(); len(res) != 1 || res[0].Text != "endTurn: text no tools here" {
		t.Fatalf("the server got %+v", res)
	}
}

// askingPrompter approves every call and would approve every sampling
// request; it counts the sampling requests put to it.
type askingPrompter struct{ sampled int }

func (p *askingPrompter) Confirm(context.Context, tool.Consent) (bool, error) { return true, nil }
func (p *askingPrompter) Ask(context.Context, string) (string, error)         { return "y", nil }
func (p *askingPrompter) ReviewSample(context.Context, tool.SampleQuestion) (sampling.Decision, error) {
	p.sampled++
	return sampling.Decision{Action: sampling.Approve}, nil
}
func (p *askingPrompter) ReviewAnswer(context.Context, tool.SampleQuestion, sampling.Result) (bool, error) {
	return true, nil
}

// TestSamplingRefusedInServedSession: a call made for a served session
// (its caller named mcp:…) has nobody to answer a sampling request, even
// with a prompter that would say yes at hand: it is refused, the call's
// line says why, and the model is not asked.
func TestSamplingRefusedInServedSession(t *testing.T) {
	h, srv := samplerHost(t, tool.Interactive)
	e, err := h.Engine()
	if err != nil {
		t.Fatal(err)
	}
	p := &askingPrompter{}
	var notes []string
	ctx := tool.WithCaller(ctxT(t), tool.Caller{Name: "mcp:1a2b3c4d", ByModel: true,
		Approver: tool.NewApprover(tool.Interactive, p), Note: func(s string) { notes = append(notes, s) }})
	res, err := e.Tools().Dispatch(ctx, "mcp_s_sample", map[string]any{"prompt": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if p.sampled != 0 || len(srv.Requests()) != 0 {
		t.Fatalf("a served session's sampling was put to the prompter %d times, the model %d times", p.sampled, len(srv.Requests()))
	}
	want := "s asked for sampling, refused: " + tool.RefusedServed
	if !strings.Contains(res.Text(), tool.RefusedServed) || len(notes) != 1 || notes[0] != want {
		t.Fatalf("result %q, notes %q; want the refusal %q", res.Text(), notes, want)
	}
}
