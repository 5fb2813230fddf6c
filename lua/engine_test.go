package lua

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// modelHost is a host with a vault and an engine whose environment points
// at an in-process fake OpenAI server.
func modelHost(t *testing.T, mode tool.Mode, turns ...llmtest.Turn) (*testHost, *llmtest.Server, string) {
	t.Helper()
	srv := llmtest.NewOpenAI(t, turns...)
	dir := t.TempDir()
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Mode:  mode,
		Engine: &engine.Options{
			Dir:    dir,
			Getenv: func(k string) string { return env[k] },
			Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}},
		},
	}, nil)
	return h, srv, dir
}

func mustRun(t *testing.T, h *testHost, chunk string) []any {
	t.Helper()
	got, err := h.DoString(ctxT(t), chunk, "test")
	if err != nil {
		t.Fatalf("%s:\n%v", chunk, err)
	}
	return got
}

func TestToolsAndCall(t *testing.T) {
	h, _, dir := modelHost(t, tool.Interactive)
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := mustRun(t, h, `
		local byname = {}
		for _, t in ipairs(tai.tools()) do byname[t.name] = t end
		return byname.read_file.safe, byname.write_file.safe, byname.read_file.parameters.type,
			type(byname.read_file.description), byname.lua ~= nil`)
	if want := []any{true, false, "object", "string", true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tai.tools: got %v, want %v", got, want)
	}

	tests := []struct {
		name  string
		chunk string
		want  []any
	}{
		{"safe tool", `local r = tai.call("read_file", {path = "note.txt"}) return r.isError, r.content[1].type, r.content[1].text:match("beta") ~= nil`,
			[]any{false, "text", true}},
		{"tool error is a result", `local r = tai.call("read_file", {path = "missing.txt"}) return r.isError, r.content[1].text:match("<path>: no such file") ~= nil`,
			[]any{true, true}},
		{"unknown tool", `local r, err = tai.call("no_such_tool", {}) return r, err:match("unknown tool") ~= nil`,
			[]any{nil, true}},
		{"the script's own non-safe call is not asked about", `local r = tai.call("write_file", {path = "x.txt", content = "x"}) return r.isError`,
			[]any{false}},
		{"audited", `local n, wrote = 0, 0 for _, e in ipairs(tai.vault.audit_tail(50)) do
				if e.subject == "read_file" then n = n + 1 end
				if e.subject == "write_file" and e.outcome == "ok" then wrote = wrote + 1 end
			end return n >= 2, wrote`,
			[]any{true, int64(1)}},
		{"the lua tool, called by the script", `local r = tai.call("lua", {chunk = "return 1"}) return r.isError`,
			[]any{false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustRun(t, h, tc.chunk); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err != nil {
		t.Fatalf("the script's own write_file did not run: %v", err)
	}
	for _, bad := range []string{`tai.call()`, `tai.call("read_file", 5)`, `tai.call("read_file", {1, 2})`} {
		if _, err := h.DoString(ctxT(t), bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
}

func TestYoloRunsNonSafeTools(t *testing.T) {
	h, _, dir := modelHost(t, tool.Yolo)
	got := mustRun(t, h, `local r = tai.call("write_file", {path = "x.txt", content = "written"})
		local l = tai.call("lua", {chunk = "print('from the sandbox') return io == nil"})
		return r.isError, tai.mode, l.content[1].text:match("from the sandbox") ~= nil, l.content[1].text:match("true") ~= nil`)
	if !reflect.DeepEqual(got, []any{false, "yolo", true, true}) {
		t.Fatalf("got %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x.txt")); err != nil || string(b) != "written" {
		t.Fatalf("file: %q, %v", b, err)
	}
}

func TestLuaTool(t *testing.T) {
	h, _, _ := modelHost(t, tool.Yolo)
	// Defined before the engine exists (as init.lua does), then after.
	mustRun(t, h, `
		tai.tool{name = "shout", description = "upper-cases text", safe = true,
			parameters = {type = "object", properties = {text = {type = "string"}}, required = {"text"}},
			run = function(args) return args.text:upper() end}`)
	got := mustRun(t, h, `
		tai.tool{name = "pair", description = "returns two items and an error flag",
			run = function(args) return {content = {{type = "text", text = "a"}, "b"}, isError = args.fail == true} end}
		tai.tool{name = "broken", description = "always fails", run = function() error("no luck here") end}
		tai.tool{name = "table_result", description = "returns a plain table", run = function() return {n = 3} end}
		local s = tai.call("shout", {text = "hey"})
		local p = tai.call("pair", {fail = true})
		local b = tai.call("broken", {})
		local tr = tai.call("table_result")
		local listed
		for _, t in ipairs(tai.tools()) do if t.name == "shout" then listed = t end end
		return s.content[1].text, s.isError, #p.content, p.content[2].text, p.isError,
			b.isError, b.content[1].text:match("no luck here") ~= nil, tr.content[1].text,
			listed.safe, listed.parameters.required[1]`)
	want := []any{"HEY", false, int64(2), "b", true, true, true, `{"n":3}`, true, "text"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, bad := range []string{
		`tai.tool{name = "bad name", description = "x", run = print}`,
		`tai.tool{name = "ok", run = print}`,
		`tai.tool{name = "ok", description = "x"}`,
		`tai.tool{name = "ok", description = "x", run = print, parameters = {type = "string"}}`,
	} {
		if _, err := h.DoString(ctxT(t), bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
}

// answerFromResults makes the fake model answer with the tool results it
// received, so a test sees that the results reached it.
func answerFromResults(r llmtest.Request) llmtest.Turn {
	var parts []string
	for _, m := range r.ToolResults() {
		parts = append(parts, m.Text)
	}
	return llmtest.Say("results: " + strings.Join(parts, " | "))
}

func TestChatRunsLuaToolsFromTheModel(t *testing.T) {
	h, srv, dir := modelHost(t, tool.Interactive,
		llmtest.Calls(
			llmtest.Call("shout", `{"text":"one"}`),
			llmtest.Call("shout", `{"text":"two"}`),
			llmtest.Call("read_file", `{"path":"f.txt"}`),
			llmtest.Call("shout", `{"text":"three"}`),
		),
	)
	srv.SetRule(answerFromResults)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("file body"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := mustRun(t, h, `
		local calls = 0
		tai.tool{name = "shout", description = "upper-cases text", safe = true,
			run = function(args) calls = calls + 1 return args.text:upper() end}
		local text, chunks, starts, ends = "", {}, {}, {}
		local answer, d = tai.chat("shout some words", {
			on_text = function(s) chunks[#chunks + 1] = s end,
			on_tool_start = function(ev) starts[#starts + 1] = ev.name end,
			on_tool_end = function(ev) ends[#ends + 1] = ev.name .. ":" .. ev.outcome end,
		})
		table.sort(ends)
		return answer, table.concat(chunks), calls, table.concat(starts, ","), table.concat(ends, ","), d.steps, d.exhausted, d.profile, tai.profile`)
	answer := "results: ONE | TWO | file body | THREE"
	want := []any{answer, answer, int64(3), "shout,shout,read_file,shout", "read_file:ok,shout:ok,shout:ok,shout:ok", int64(2), false, "default", "default"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}

	// The conversation continues: the next request carries the first turn.
	srv.Push(llmtest.Say("second answer"))
	got = mustRun(t, h, `return tai.chat("and again")`)
	if got[0] != "second answer" {
		t.Fatalf("second turn: %v", got)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) < 6 || last.LastUser() != "and again" || !strings.Contains(string(last.Body), "shout some words") {
		t.Fatalf("history not kept: %d messages, body %s", len(last.Messages), last.Body)
	}
	if auth := last.Header.Get("Authorization"); auth != "Bearer sk-test-key" {
		t.Fatalf("Authorization = %q", auth)
	}
	// A reset starts afresh.
	srv.Push(llmtest.Say("fresh"))
	mustRun(t, h, `tai.chat_reset() return tai.chat("new start")`)
	reqs = srv.Requests()
	if n := len(reqs[len(reqs)-1].Messages); n != 1 {
		t.Fatalf("after reset the request has %d messages, want 1", n)
	}
}

func TestChatOptionsAndErrors(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Yolo,
		llmtest.Calls(llmtest.Call("read_file", `{"path":"nope"}`)),
		llmtest.Calls(llmtest.Call("read_file", `{"path":"nope"}`)),
		llmtest.Fail(500, "server exploded"),
	)
	got := mustRun(t, h, `local text, d = tai.chat("loop", {max_steps = 2, tools = {"read_*"}}) return d.exhausted, d.steps, text:match("step limit") ~= nil`)
	if !reflect.DeepEqual(got, []any{true, int64(2), true}) {
		t.Fatalf("step limit: %v", got)
	}
	reqs := srv.Requests()
	if names := reqs[0].ToolNames(); len(names) != 1 || names[0] != "read_file" {
		t.Fatalf("tools subset: offered %v", names)
	}
	got = mustRun(t, h, `return tai.chat("fail now")`)
	if got[0] != nil || !strings.Contains(got[1].(string), "server exploded") || !strings.Contains(got[1].(string), "fake-model") {
		t.Fatalf("failure: %v", got)
	}
	if strings.Contains(h.out.String()+h.errOut.String(), "sk-test-key") {
		t.Fatal("the key leaked")
	}
	for _, bad := range []string{`tai.chat("")`, `tai.chat("x", {max_steps = 0})`, `tai.chat("x", {tools = "read_file"})`, `tai.chat("x", {on_text = 3})`} {
		if _, err := h.DoString(ctxT(t), bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
}

func TestChatWithoutModelSaysHowToConfigure(t *testing.T) {
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Engine: &engine.Options{
			Getenv: func(string) string { return "" },
			Client: &llm.ClientOptions{HTTPClient: noNetwork()},
		},
	}, nil)
	got := mustRun(t, h, `return tai.chat("hello")`)
	if got[0] != nil || !strings.Contains(got[1].(string), "OPENAI_API_KEY") {
		t.Fatalf("got %v", got)
	}
}

func TestComplete(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Interactive, llmtest.Say("a haiku"))
	got := mustRun(t, h, `local text, d = tai.complete({{role = "system", content = "be brief"}, {role = "user", content = "write"}}) return text, d.finish_reason, d.usage.output_tokens > 0`)
	if !reflect.DeepEqual(got, []any{"a haiku", "stop", true}) {
		t.Fatalf("got %v", got)
	}
	r := srv.Requests()[0]
	if len(r.Tools) != 0 || len(r.Messages) != 2 || r.Messages[0].Role != "system" {
		t.Fatalf("request: %+v", r)
	}
	for _, bad := range []string{`tai.complete({})`, `tai.complete({{role = "tool", content = "x"}})`, `tai.complete({{role = "user"}})`, `tai.complete("hi")`} {
		if _, err := h.DoString(ctxT(t), bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
}

func TestPrompterConfirmsAndAnswers(t *testing.T) {
	h, srv, dir := modelHost(t, tool.Interactive,
		llmtest.Calls(llmtest.Call("write_file", `{"path":"w.txt","content":"ok"}`), llmtest.Call("ask_user", `{"question":"favourite colour?"}`)),
	)
	srv.SetRule(answerFromResults)
	h.L.SetGlobal("push_refused_write", h.L.NewFunction(func(*glua.LState) int {
		srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"no.txt","content":"no"}`)))
		return 0
	}))
	h.L.SetGlobal("push_z_write", h.L.NewFunction(func(*glua.LState) int {
		srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"z.txt","content":""}`)))
		return 0
	}))
	got := mustRun(t, h, `
		local seen = {}
		tai.prompter{
			confirm = function(c) seen[#seen + 1] = c.tool .. ":" .. c.args.path .. ":" .. #c.digest return c.args.path == "w.txt" end,
			ask = function(q) seen[#seen + 1] = q return "blue" end,
		}
		local a = tai.chat("go")
		push_refused_write()
		local b = tai.chat("again")
		tai.prompter(nil)
		push_z_write()
		local c = tai.chat("once more")
		return a, b:match("not approved") ~= nil, table.concat(seen, ","), nil, c:match("denied") ~= nil`)
	if first, _ := got[0].(string); !strings.HasPrefix(first, "results: ") || !strings.HasSuffix(first, " | blue") || strings.Contains(first, "denied") {
		t.Fatalf("first turn: %v\n%s\n%s", got[0], h.out, h.errOut)
	}
	if got[1] != true || got[3] != nil || got[4] != true {
		t.Fatalf("got %v", got)
	}
	if seen := got[2].(string); !strings.HasPrefix(seen, "write_file:w.txt:") || !strings.Contains(seen, "favourite colour?") || !strings.Contains(seen, "write_file:no.txt") {
		t.Fatalf("prompts seen: %q", seen)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err != nil {
		t.Fatalf("approved write did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "no.txt")); err == nil {
		t.Fatal("refused write ran")
	}
}

func TestAskUserWithoutPrompterDenies(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Yolo, llmtest.Calls(llmtest.Call("ask_user", `{"question":"are you there?"}`)))
	srv.SetRule(answerFromResults)
	got := mustRun(t, h, `return tai.chat("ask me")`)
	if s, _ := got[0].(string); !strings.Contains(s, "no terminal to ask") {
		t.Fatalf("got %v", got)
	}
}

func TestProfiles(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	got := mustRun(t, h, `
		local before = tai.profile
		assert(tai.profiles.save{name = "work", provider = "anthropic", model = "claude-x", key_env = "WORK_KEY", system = "terse"})
		local list = tai.profiles.list()
		local names = {}
		for _, p in ipairs(list) do names[#names + 1] = p.name .. (p.current and "*" or "") end
		local used = tai.profiles.use("work")
		local cur = tai.profiles.current()
		local missing, err = tai.profiles.use("nope")
		local back = tai.profiles.use("default")
		return before, table.concat(names, ","), used.model, cur.system, tai.profile == "default", missing, err:match("not found") ~= nil, back.provider`)
	want := []any{"default", "default*,work", "claude-x", "terse", true, nil, true, "openai"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	got = mustRun(t, h, `tai.profiles.use("work") return tai.profile, tai.profiles.get("work").key_env, (tai.profiles.save{name = "bad", provider = "nobody"})`)
	if got[0] != "work" || got[1] != "WORK_KEY" || got[2] != nil {
		t.Fatalf("got %v", got)
	}
	if _, err := h.DoString(ctxT(t), `tai.profiles.save{name = "x", provider = "openai", model = "m", typo = 1}`, "bad"); err == nil || !strings.Contains(err.Error(), "typo") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestInterruptCancelsTurnAndChatStaysUsable(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Interactive, llmtest.Turn{Text: "partial", Hang: true})
	var streamed atomic.Bool
	h.L.SetGlobal("interrupt_now", h.L.NewFunction(func(*glua.LState) int {
		streamed.Store(true)
		h.Interrupt()
		return 0
	}))
	got := mustRun(t, h, `return tai.term.protect(tai.chat, "hang please", {on_text = function() interrupt_now() end})`)
	if got[0] != true || got[1] != nil || got[2] != "interrupted" || !streamed.Load() {
		t.Fatalf("got %v", got)
	}
	srv.Push(llmtest.Say("back again"))
	got = mustRun(t, h, `return tai.chat("still there?")`)
	if got[0] != "back again" {
		t.Fatalf("after interrupt: %v", got)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if !strings.Contains(string(last.Body), "hang please") {
		t.Fatalf("the interrupted turn is missing from the history: %s", last.Body)
	}
}

// TestCtrlCLetsAChatCallbackEnd: Ctrl-C while a callback of tai.chat
// runs stops the turn, not the callback halfway, so what a front end
// records after drawing (a spinner on the screen) stays true.
func TestCtrlCLetsAChatCallbackEnd(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive, llmtest.Turn{Text: "partial", Hang: true})
	h.L.SetGlobal("interrupt_now", h.L.NewFunction(func(*glua.LState) int {
		h.Interrupt()
		return 0
	}))
	got := mustRun(t, h, `
		local drawn, recorded = false, false
		local ok, answer, err = tai.term.protect(tai.chat, "hang please", {on_text = function()
			drawn = true
			interrupt_now()
			recorded = true
		end})
		return ok, answer, err, drawn, recorded`)
	if want := []any{true, nil, "interrupted", true, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v (the callback must run to its end)", got, want)
	}
}

// noNetwork is an HTTP client that refuses every request, standing in for
// a machine where no local Ollama listens.
func noNetwork() *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused (test: no network)")
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestChatOnAnotherProfileAndNestedTurns(t *testing.T) {
	h, srv, _ := modelHost(t, tool.Yolo,
		llmtest.Calls(llmtest.Call("nested", `{}`)),
	)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		if res := r.ToolResults(); len(res) > 0 {
			return llmtest.Say("outer got: " + res[0].Text)
		}
		return llmtest.Say("model " + r.Model)
	})
	got := mustRun(t, h, `
		assert(tai.profiles.save{name = "alt", provider = "openai", base_url = "`+srv.BaseURL+`", model = "alt-model", key_env = "OPENAI_API_KEY"})
		tai.tool{name = "nested", description = "runs turns of its own", run = function()
			local same, err = tai.chat("inner on the same conversation")
			local other = tai.chat("inner on another profile", {profile = "alt"})
			return tostring(same) .. "/" .. tostring(err:match("already running") ~= nil) .. "/" .. other
		end}
		local outer, d = tai.chat("outer")
		return outer, d.profile, tai.profile`)
	want := []any{"outer got: nil/true/model alt-model", "default", "default"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// BenchmarkCallNativeTool measures tai.call of a safe native tool from Lua:
// conversion, the trip to the dispatching goroutine, audit and back.
func BenchmarkCallNativeTool(b *testing.B) {
	h := benchHost(b)
	fn := mustLoad(b, h, `return function() return tai.call("list_dir", {}) end`)
	for b.Loop() {
		if _, err := h.Call(context.Background(), fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallLuaTool measures tai.call of a tool written in Lua: the
// call leaves the Lua goroutine for Dispatch and comes back to it to run.
func BenchmarkCallLuaTool(b *testing.B) {
	h := benchHost(b)
	fn := mustLoad(b, h, `tai.tool{name = "echo", description = "echoes", safe = true, run = function(a) return a.message end}
		return function() return tai.call("echo", {message = "hello"}) end`)
	cpu := cpuTime()
	for b.Loop() {
		if _, err := h.Call(context.Background(), fn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	reportCPU(b, cpu)
}

func benchHost(b *testing.B) *testHost {
	b.Helper()
	return newHost(b, Options{Vault: openTestVault(b, "pw"), Engine: &engine.Options{Dir: b.TempDir(), Getenv: func(string) string { return "" }}}, nil)
}

func mustLoad(b *testing.B, h *testHost, chunk string) glua.LValue {
	b.Helper()
	if err := h.L.DoString("bench_fn = (function() " + chunk + " end)()"); err != nil {
		b.Fatal(err)
	}
	return h.L.GetGlobal("bench_fn")
}

func TestProfileFieldFollowsTheVaultBeforeTheEngineIsBuilt(t *testing.T) {
	openVault := openTestVault(t, "pw")
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key"}
	opts := Options{Vault: openVault, Engine: &engine.Options{Getenv: func(k string) string { return env[k] }}}
	first := newHost(t, opts, nil)
	if got := mustRun(t, first, `return tai.profile`); got[0] != "default" {
		t.Fatalf("fresh vault: tai.profile = %v, want default", got[0])
	}
	mustRun(t, first, `assert(tai.profiles.save{name = "work", provider = "anthropic", model = "claude-x", key_env = "WORK_KEY"}) assert(tai.profiles.use("work"))`)

	second := newHost(t, opts, nil)
	if got := mustRun(t, second, `return tai.profile, rawget(tai, "profile")`); got[0] != "work" || got[1] != nil {
		t.Fatalf("second host: tai.profile = %v (raw %v), want work computed on read", got[0], got[1])
	}
	if second.engine.eng != nil {
		t.Fatal("reading tai.profile built the engine")
	}
	flagged := newHost(t, Options{Vault: openVault, Profile: "default", Engine: opts.Engine}, nil)
	if got := mustRun(t, flagged, `return tai.profile`); got[0] != "default" {
		t.Fatalf("--profile default: tai.profile = %v", got[0])
	}
}

// TestLuaToolEmptySchemaArrays checks that keywords whose value must be a
// JSON array stay arrays when the Lua table for them is empty ({} has no
// JSON shape of its own), while empty schemas stay objects.
func TestLuaToolEmptySchemaArrays(t *testing.T) {
	h, _, _ := modelHost(t, tool.Yolo)
	mustRun(t, h, `
		tai.tool{name = "empties", description = "has empty schema arrays", run = print,
			parameters = {type = "object", required = {},
				properties = {
					mode = {type = "string", enum = {}},
					any = {anyOf = {}, oneOf = {}, allOf = {}},
					list = {type = "array", items = {}, prefixItems = {}},
					required = {},
				}}}`)
	e, err := h.Engine()
	if err != nil {
		t.Fatal(err)
	}
	var params any
	for _, toolName := range e.Tools().Tools() {
		if toolName.Name == "empties" {
			params = toolName.Parameters
		}
	}
	data, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	checks := []struct {
		what string
		v    any
		want any
	}{
		{"required", got["required"], []any{}},
		{"enum", props["mode"].(map[string]any)["enum"], []any{}},
		{"anyOf", props["any"].(map[string]any)["anyOf"], []any{}},
		{"oneOf", props["any"].(map[string]any)["oneOf"], []any{}},
		{"allOf", props["any"].(map[string]any)["allOf"], []any{}},
		{"prefixItems", props["list"].(map[string]any)["prefixItems"], []any{}},
		{"items (a schema)", props["list"].(map[string]any)["items"], map[string]any{}},
		{"a property named required", props["required"], map[string]any{}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.v, c.want) {
			t.Errorf("%s: got %#v, want %#v (parameters %s)", c.what, c.v, c.want, data)
		}
	}
}

// TestPassEnv: tai.pass_env, before and after the engine is built, lets
// shell commands see variables whose names look like credentials; their
// values stay redacted and the vault passphrase is refused.
func TestPassEnv(t *testing.T) {
	t.Setenv("LUA_PASS_TOKEN", "lua-pass-token-value-1")
	t.Setenv("LUA_LATER_SECRET", "lua-later-secret-value-2")
	t.Setenv("LUA_DROPPED_TOKEN", "lua-dropped-token-value-3")
	h, _, _ := modelHost(t, tool.Yolo)
	got := mustRun(t, h, `
		assert(tai.pass_env("LUA_PASS_TOKEN"))
		local env = tai.call("shell", {argv = {"env"}}).content[1].text
		assert(tai.pass_env("LUA_LATER_SECRET"))
		local env2 = tai.call("shell", {argv = {"env"}}).content[1].text
		local ok = pcall(tai.pass_env, "TAI_VAULT_PASSPHRASE")
		return env:find("LUA_PASS_TOKEN=", 1, true) ~= nil, env:find("LUA_LATER_SECRET=", 1, true) == nil,
			env2:find("LUA_LATER_SECRET=", 1, true) ~= nil, env2:find("LUA_DROPPED_TOKEN", 1, true) == nil,
			env2:find("lua-pass-token-value-1", 1, true) == nil, ok`)
	if want := []any{true, true, true, true, true, false}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestPipedStdinNeverAnswersAPrompter: a prompter of one's own that reads
// its answer from stdin (io.read, io.lines; io.stdin:read is the
// process's own stdin, tested in cmd/tai) gets nothing while stdin is not
// a terminal, so the call is refused; a prompter that decides without
// reading still decides.
func TestPipedStdinNeverAnswersAPrompter(t *testing.T) {
	for _, read := range []string{`io.read("*l")`, `(function() for l in io.lines() do return l end end)()`} {
		t.Run(read, func(t *testing.T) {
			h, srv, dir := modelHost(t, tool.Interactive)
			srv.SetRule(answerFromResults)
			h.L.SetGlobal("push_write", h.L.NewFunction(func(L *glua.LState) int {
				srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"`+L.CheckString(1)+`","content":"x"}`)))
				return 0
			}))
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			pw.WriteString("y\ny\n")
			pw.Close()
			h.opts.Stdin = pr
			got := mustRun(t, h, `
				local asked, answer = 0, nil
				tai.prompter{
					confirm = function(c) asked = asked + 1 local ok, v = pcall(function() return `+read+` end) answer = ok and v or "error" return v == "y" end,
					ask = function(q) return nil end,
				}
				push_write("w.txt")
				local r = tai.chat("write it")
				tai.prompter{confirm = function() return true end, ask = function() return "" end}
				push_write("policy.txt")
				local r2 = tai.chat("write it")
				return asked, tostring(answer), r:match("not approved") ~= nil, r2:match("not approved") == nil`)
			if got[0] != int64(1) || got[1] == "y" || got[2] != true || got[3] != true {
				t.Fatalf("got %v", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "w.txt")); err == nil {
				t.Fatal("a piped y allowed the call")
			}
		})
	}
}
