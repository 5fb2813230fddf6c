package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func post(t *testing.T, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

var anHeader = map[string]string{"anthropic-version": "2023-06-01"}

func TestOpenAIValidation(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"no messages", `{"model":"m","messages":[]}`, "too short"},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, "'robot'"},
		{"unanswered call", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"?"}]}`, "must be followed by tool messages"},
		{"dangling call at end", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "unanswered tool calls"},
		{"orphan result", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"zz","content":"x"}]}`, "zz"},
		{"bad arguments", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{oops"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}`, "not valid JSON"},
		{"not json", `{`, "parse the JSON"},
		// What the published schema refuses.
		{"unknown field", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_token":5}`, "max_token: Extra inputs"},
		{"assistant with neither content nor calls", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null}]}`, "needs content or tool_calls"},
		{"empty tool_calls", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x","tool_calls":[]}]}`, "messages.1.tool_calls: array of 0 items"},
		{"tool name with a dot", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"fs.read"}}]}`, "tools.0.function.name"},
		{"129 tools", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Repeat(`{"type":"function","function":{"name":"f"}},`, 128) + `{"type":"function","function":{"name":"f"}}]}`, "more than 128"},
		{"tool message without content", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a"}]}`, "content: Field required"},
		{"max_tokens a string", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":"5"}`, "max_completion_tokens: expected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewOpenAI(t, Say("unused"))
			s.AllowInvalid()
			code, body := post(t, s.BaseURL+"/chat/completions", nil, tc.body)
			if code != 400 || !strings.Contains(body, tc.want) || !strings.Contains(body, `"error"`) {
				t.Errorf("got %d %s, want 400 saying %q", code, body, tc.want)
			}
			if s.Remaining() != 1 || len(s.Requests()) != 1 {
				t.Errorf("a rejected request must be recorded and not consume a turn")
			}
		})
	}
}

func TestAnthropicValidation(t *testing.T) {
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}`
	cases := []struct {
		name, body, want string
		header           map[string]string
	}{
		{"no version header", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", map[string]string{}},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens", nil},
		{"system role", `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"}]}`, "top-level `system`", nil},
		{"assistant first", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"x"}]}`, "first message", nil},
		{"two users", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, "alternate", nil},
		{"empty content", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":""}]}`, "non-empty", nil},
		{"unanswered tool_use", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},` + use + `,{"role":"user","content":"b"}]}`, "without `tool_result`", nil},
		{"dangling tool_use at end", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},` + use + `]}`, "without `tool_result`", nil},
		{"orphan tool_result", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"zz","content":"x"}]}]}`, "unexpected `tool_use_id`", nil},
		{"text before result", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},` + use + `,{"role":"user","content":[{"type":"text","text":"b"},{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`, "before any text", nil},
		// What the published schema and the API's own checks refuse.
		{"white-space text block", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text","text":"\n\n"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`, "messages.1.content.0.text: string", nil},
		{"white-space string content", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":" \n"}]}`, "messages.0.content", nil},
		{"tool_use id with a dot", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"functions.read_file:0","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"functions.read_file:0","content":"x"}]}]}`, "messages.1.content.0.id", nil},
		{"tool_use id twice", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},` + use + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},` + use + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"y"}]}]}`, "must be unique", nil},
		{"max_tokens zero", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", nil},
		{"unknown field", `{"model":"m","max_tokens":5,"max_completion_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens: Extra inputs", nil},
		{"tool without input_schema type", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{}}]}`, "tools.0.input_schema: type: Field required", nil},
		{"unknown block type", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"txt","text":"a"}]}]}`, "messages.0.content.0", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewAnthropic(t, Say("unused"))
			s.AllowInvalid()
			h := tc.header
			if h == nil {
				h = anHeader
			}
			code, body := post(t, s.URL+"/v1/messages", h, tc.body)
			if code != 400 || !strings.Contains(body, tc.want) || !strings.Contains(body, `"invalid_request_error"`) {
				t.Errorf("got %d %s, want 400 saying %q", code, body, tc.want)
			}
			if s.Remaining() != 1 {
				t.Errorf("a rejected request consumed a turn")
			}
		})
	}
}

// events reads a whole SSE body into (event, data) pairs.
func events(t *testing.T, body string) [][2]string {
	t.Helper()
	var out [][2]string
	var ev, data string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				out = append(out, [2]string{ev, data})
			}
			ev, data = "", ""
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		default:
			t.Errorf("unexpected line %q", line)
		}
	}
	return out
}

func TestOpenAIStreamWire(t *testing.T) {
	for _, usage := range []bool{false, true} {
		s := NewOpenAI(t, Turn{Text: "Hi there you", ToolCalls: []ToolCall{Call("f", `{"path":"a/long/path.txt"}`), {ID: "mine", Name: "g"}}})
		opts := ""
		if usage {
			opts = `,"stream_options":{"include_usage":true}`
		}
		code, body := post(t, s.BaseURL+"/chat/completions", nil, `{"model":"m","stream":true`+opts+`,"messages":[{"role":"user","content":"hi"}]}`)
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		evs := events(t, body)
		if evs[len(evs)-1][1] != "[DONE]" {
			t.Errorf("last event %v, want [DONE]", evs[len(evs)-1])
		}
		var text string
		args := map[int]string{}
		ids := map[int]string{}
		sawUsage, finish := false, ""
		for _, e := range evs[:len(evs)-1] {
			var c struct {
				Object  string `json:"object"`
				Choices []struct {
					Delta struct {
						Content   string `json:"content"`
						ToolCalls []struct {
							Index    int    `json:"index"`
							ID       string `json:"id"`
							Function struct {
								Name      string `json:"name"`
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
				Usage *struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(e[1]), &c); err != nil || c.Object != "chat.completion.chunk" {
				t.Fatalf("chunk %s: %v", e[1], err)
			}
			if c.Usage != nil {
				sawUsage = c.Usage.PromptTokens > 0 && len(c.Choices) == 0
			}
			for _, ch := range c.Choices {
				text += ch.Delta.Content
				for _, tc := range ch.Delta.ToolCalls {
					if tc.ID != "" {
						ids[tc.Index] = tc.ID + "/" + tc.Function.Name
					} else if tc.Function.Name != "" {
						t.Errorf("name without id in a continuation delta")
					}
					args[tc.Index] += tc.Function.Arguments
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		if text != "Hi there you" || args[0] != `{"path":"a/long/path.txt"}` || args[1] != "{}" || ids[0] != "call_1/f" || ids[1] != "mine/g" || finish != "tool_calls" {
			t.Errorf("text %q args %v ids %v finish %q", text, args, ids, finish)
		}
		if sawUsage != usage {
			t.Errorf("usage chunk seen %v, asked %v", sawUsage, usage)
		}
	}
}

func TestAnthropicStreamWire(t *testing.T) {
	s := NewAnthropic(t, Turn{Text: "Hi there", ToolCalls: []ToolCall{Call("f", `{"q":"x y z w"}`)}})
	code, body := post(t, s.URL+"/v1/messages", anHeader, `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var kinds []string
	partial := ""
	for _, e := range events(t, body) {
		var v struct {
			Type  string `json:"type"`
			Delta struct {
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(e[1]), &v); err != nil || v.Type != e[0] {
			t.Fatalf("event %s / %s: type mismatch or %v", e[0], e[1], err)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != e[0] {
			kinds = append(kinds, e[0])
		}
		partial += v.Delta.PartialJSON
		if e[0] == "message_delta" && v.Delta.StopReason != "tool_use" {
			t.Errorf("stop_reason %q", v.Delta.StopReason)
		}
	}
	want := "message_start content_block_start ping content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(kinds, " ") != want {
		t.Errorf("events\n %s\nwant\n %s", strings.Join(kinds, " "), want)
	}
	if partial != `{"q":"x y z w"}` {
		t.Errorf("input_json_delta adds up to %q", partial)
	}
}

func TestFailuresAndKeys(t *testing.T) {
	s := NewOpenAI(t, RateLimited("7"), Say("ok"))
	s.RequireKey("sk-right")
	code, body := post(t, s.BaseURL+"/chat/completions", map[string]string{"Authorization": "Bearer sk-wrong"}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if code != 401 || !strings.Contains(body, "sk-wrong") {
		t.Errorf("wrong key: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+"/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-right")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("scripted 429: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	code, body = post(t, s.BaseURL+"/chat/completions", map[string]string{"Authorization": "Bearer sk-right"}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 || !strings.Contains(body, `"content":"ok"`) {
		t.Errorf("after the failure: %d %s", code, body)
	}
}

func TestTagsAndRule(t *testing.T) {
	s := NewOpenAI(t, Say("scripted"))
	s.SetModels("a:latest", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/tags", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(data), `"name":"a:latest"`) || !strings.Contains(string(data), `"name":"b"`) {
		t.Errorf("/api/tags = %s", data)
	}
	s.SetRule(func(r Request) Turn { return Say(fmt.Sprintf("echo %s (%d tools)", r.LastUser(), len(r.Tools))) })
	body := `{"model":"m","messages":[{"role":"user","content":"one"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`
	if _, got := post(t, s.BaseURL+"/chat/completions", nil, body); !strings.Contains(got, "scripted") {
		t.Errorf("script first: %s", got)
	}
	if _, got := post(t, s.BaseURL+"/chat/completions", nil, body); !strings.Contains(got, "echo one (1 tools)") {
		t.Errorf("then the rule: %s", got)
	}
	if r := s.Requests(); len(r) != 2 || r[1].ToolNames()[0] != "f" {
		t.Errorf("requests %+v", r)
	}
}

// errorTB records Errorf calls instead of failing the test.
type errorTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (e *errorTB) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

func TestScriptExhausted(t *testing.T) {
	tb := &errorTB{TB: t}
	s := NewAnthropic(tb)
	code, body := post(t, s.URL+"/v1/messages", anHeader, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if code != 400 || !strings.Contains(body, "no scripted turn") {
		t.Errorf("got %d %s", code, body)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "no scripted turn") {
		t.Errorf("the test was not told: %v", tb.errs)
	}
}

func TestHangEndsWithTest(t *testing.T) {
	// A hanging stream whose client never gives up must not keep the
	// server from closing when the test ends.
	t.Run("inner", func(t *testing.T) {
		var resp *http.Response
		// Registered first, so it runs after the server has closed.
		t.Cleanup(func() {
			if resp != nil {
				resp.Body.Close()
			}
		})
		s := NewOpenAI(t, Turn{Text: "a b", Hang: true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+"/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		var err error
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(line, `"content":"a"`) {
				break
			}
		}
	})
}
