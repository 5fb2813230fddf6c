package stdlib_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"tai/lua"
	"tai/stdlib"
	"tai/vault"
)

func TestDumpWritesEveryFileAndRefusesToOverwrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	written, err := stdlib.Dump(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := fs.ReadDir(stdlib.Files(), ".")
	topics, _ := fs.Glob(stdlib.Help(), "help/*.txt")
	if len(written) != len(entries)+1+len(topics) || len(entries) < 3 || len(topics) < 5 {
		t.Fatalf("wrote %v for %d embedded modules, meta/tai.lua and %d help topics", written, len(entries), len(topics))
	}
	for _, p := range topics {
		want, _ := fs.ReadFile(stdlib.Help(), p)
		if got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not dumped as embedded: %v", p, err)
		}
	}
	meta, _ := fs.ReadFile(stdlib.Meta(), "meta/tai.lua")
	if got, err := os.ReadFile(filepath.Join(dir, "meta", "tai.lua")); err != nil || !bytes.Equal(got, meta) || len(meta) == 0 {
		t.Fatalf("meta/tai.lua not dumped as embedded: %v", err)
	}
	edited := filepath.Join(dir, "repl.lua")
	if err := os.WriteFile(edited, []byte("-- mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stdlib.Dump(dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second dump: %v, want a refusal", err)
	}
	if data, _ := os.ReadFile(edited); string(data) != "-- mine" {
		t.Fatal("an edited file was overwritten")
	}
	if _, err := stdlib.Dump(""); err == nil {
		t.Fatal("dump into an empty path succeeded")
	}
}

// run evaluates chunk in a clean host and returns its results.
func run(t *testing.T, chunk string) []any {
	t.Helper()
	var out bytes.Buffer
	h, err := lua.New(&lua.Options{Clean: true, ConfigDir: t.TempDir(), StateDir: t.TempDir(), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := h.DoString(ctx, chunk, "test")
	if err != nil {
		t.Fatalf("%s: %v", chunk, err)
	}
	return got
}

func TestBlockKind(t *testing.T) {
	tests := []struct {
		line string
		want any
	}{
		{`{`, "json"},
		{`  { "mcpServers": {`, "json"},
		{`[`, "json"},
		{`[{"name": "x"}]`, "json"},
		{`"github": {`, "json-fragment"},
		{`[mcp_servers.github]`, "toml"},
		{`[[servers]]`, "toml"},
		{`command = "npx"`, "toml"},
		{`hello there`, nil},
		{`a = b is wrong`, nil},
		{`what is [this]?`, nil},
		{`x = 2 times 3, what is x?`, nil},
		{`[1, 2, 3] reverse this list`, nil},
		{`[1, 2, 3]`, "json"},
		{`{"a": x} is this json?`, nil},
		{`{ what does this do`, nil},
		{`{"mcpServers": {"fs": {"command": "npx"}}}`, "json"},
		{`"fs": {"command": "npx"} is that right`, nil},
		{`x = 2`, nil},
		{`name = "x"`, nil},
		{`command = "npx" is the runner`, nil},
		{`args = [`, "toml"},
		{`url = "https://example.test/mcp"`, "toml"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			res := run(t, "return require('repl').block_kind("+luaQuote(tt.line)+")")
			if !reflect.DeepEqual(res[0], tt.want) {
				t.Fatalf("block_kind(%q) = %v, want %v", tt.line, res[0], tt.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"claude desktop", `{"mcpServers": {"github": {}, "fetch": {}}}`, "mcpServers with 2 servers: fetch, github"},
		{"vs code", `{"servers": {"x": {}}}`, "servers with 1 server: x"},
		{"other object", `{"b": 1, "a": 2}`, "an object with keys: a, b"},
		{"empty", `{}`, "an empty object"},
		{"list", `[1, 2]`, "a list of 2 entries"},
		{"scalar", `3`, "a single number value, not a config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, "return require('repl').describe(tai.json.decode("+luaQuote(tt.json)+"))")
			if got[0] != tt.want {
				t.Fatalf("got %q, want %q", got[0], tt.want)
			}
		})
	}
}

func TestComplete(t *testing.T) {
	got := run(t, `
		local repl = require("repl")
		repl.install_builtins()
		tai.command("greet", function() end, "", function(word) return {"alice", "bob", "albert"} end)
		local function join(t) return table.concat(t, ",") end
		return join(repl.complete("/")), join(repl.complete("/h")), join(repl.complete("/greet al")),
			join(repl.complete("/help gr")), join(repl.complete("plain text"))`)
	want := []any{"/clear,/compact,/context,/cost,/exit,/greet,/help,/init,/lua,/mcp,/model,/new,/open,/permissions,/profile,/profiles,/quit,/resume,/sandbox,/seal,/secret,/tools,/unseal,/usage", "/help", "alice,albert", "greet", ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestInspect(t *testing.T) {
	got := run(t, `local i = require("inspect")
		local t = {1, "two", {x = tai.json.null}, ["not ident"] = tai.json.array(), b = true, [10] = 0.5}
		t.self = t
		return i(t), i("q\"s"), i(2^53 - 1)`)
	want := []any{"{\n  1,\n  \"two\",\n  {\n    x = null,\n  },\n  [10] = 0.5,\n  b = true,\n  [\"not ident\"] = [],\n  self = <cycle>,\n}", `"q\"s"`, "9007199254740991"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// luaQuote quotes s as a Lua long string.
func luaQuote(s string) string { return "[==[" + s + "]==]" }

// luaBytes quotes s as a Lua string literal holding exactly its bytes
// (a long string would turn a carriage return into a newline).
func luaBytes(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "\\%d", s[i])
	}
	b.WriteByte('"')
	return b.String()
}

func TestChatView(t *testing.T) {
	// A turn's events as the engine sends them, rendered into one stream
	// (the REPL) and into two (tai -p: answer on stdout, notes on stderr).
	script := `
		local chat = require("chat")
		local function render(split)
			local out, note = {}, {}
			local w = function(s) out[#out + 1] = s end
			local n = w
			if split then n = function(s) note[#note + 1] = s end end
			local v = chat.new({ write = w, note = n, spinner = true })
			local o = v.opts()
			o.on_waiting(true, 0) o.on_waiting(true, 1) o.on_waiting(false)
			o.on_text("Let me look")
			o.on_tool_start({ id = "1", name = "read_file", args = { path = "a.txt", limit = 5 } })
			o.on_tool_end({ id = "1", name = "read_file", outcome = "ok", duration_ms = 12.4, media = { "[image png 640×480, 45 KB]" } })
			o.on_tool_start({ id = "2", name = "shell", args = { command = string.rep("x", 80) } })
			o.on_tool_start({ id = "3", name = "write_file", args = {} })
			o.on_tool_end({ id = "2", name = "shell", outcome = "denied", duration_ms = 0, notes = { "elicitation declined: --auto answers no server's questions" } })
			o.on_tool_end({ id = "3", name = "write_file", outcome = "error", duration_ms = 1500 })
			o.on_text("Done.")
			v.finish()
			return table.concat(out), table.concat(note)
		end
		local one = render(false)
		local answer, notes = render(true)
		return one, answer, notes`
	got := run(t, script)
	one := "\r⠋ thinking…\x1b[K\r⠙ thinking…\x1b[K\r\x1b[KLet me look\n⚙ read_file limit=5 path=a.txt ✓ 12 ms\n    [image png 640×480, 45 KB]\n⚙ shell command=" + strings.Repeat("x", 39) + "…\n⚙ write_file\n  shell ✗ denied 0 ms\n    ↳ elicitation declined: --auto answers no server's questions\n  write_file ✗ 1.5 s\nDone.\n"
	if got[0] != one {
		t.Errorf("one stream:\ngot  %q\nwant %q", got[0], one)
	}
	if got[1] != "Let me look\nDone.\n" {
		t.Errorf("answer stream: %q", got[1])
	}
	if s := got[2].(string); !strings.Contains(s, "⚙ read_file limit=5 path=a.txt ✓ 12 ms\n") || strings.Contains(s, "Let me look") {
		t.Errorf("note stream: %q", s)
	}
}

func TestChatViewNoticeOnItsOwnLine(t *testing.T) {
	// A notice said while a tool's line is open (a server's warning during
	// the call) starts a line of its own, and the tool's end is said on
	// its own line after it.
	got := run(t, `
		local chat = require("chat")
		local out = {}
		local w = function(s) out[#out + 1] = s end
		local v = chat.new({ write = w, note = w, spinner = true })
		local o = v.opts()
		o.on_tool_start({ id = "1", name = "form", args = {} })
		v.before_notice()
		w("tai: a warning\n")
		o.on_tool_end({ id = "1", name = "form", outcome = "ok", duration_ms = 5 })
		return table.concat(out)`)
	if want := "⚙ form\ntai: a warning\n  form ✓ 5 ms\n"; got[0] != want {
		t.Errorf("got  %q\nwant %q", got[0], want)
	}
}

func TestChatViewShowsProgress(t *testing.T) {
	// A running tool's progress shows on its part of the running line: a
	// bar with the count when it gave a total, else the count, then its
	// message; a finished tool's late progress is not kept.
	got := run(t, `
		local chat = require("chat")
		local out = {}
		local w = function(s) out[#out + 1] = s end
		local v = chat.new({ write = w, note = w, spinner = true })
		local o = v.opts()
		o.on_tool_start({ id = "1", name = "slow", args = {} })
		o.on_tool_start({ id = "2", name = "count", args = {} })
		o.on_running(true, 0, 0, "")
		o.on_tool_progress({ id = "1", name = "slow", progress = 3, total = 10, message = "step 3" })
		o.on_tool_progress({ id = "2", name = "count", progress = 42, total = 0, message = "" })
		out = {}
		o.on_running(true, 1, 2000, "")
		local line = table.concat(out)
		o.on_tool_end({ id = "2", name = "count", outcome = "ok", duration_ms = 2000 })
		o.on_tool_progress({ id = "2", name = "count", progress = 43, total = 0 })
		out = {}
		o.on_running(true, 2, 3000, "")
		return line, table.concat(out), chat.progress_text({ progress = 2.5, total = 5 }),
			chat.progress_text({ progress = -3, total = 5 }), chat.progress_text({ progress = 1e308, total = 1 }),
			chat.progress_text({ progress = 7, total = 5 }), chat.progress_text({ progress = 0.001, total = 0 }),
			chat.progress_text({ progress = 1e300, total = 1e308 })`)
	if want := "\n\r⠙ count 42, slow ███░░░░░░░ 3/10 step 3 · 2 s\x1b[K"; got[0] != want {
		t.Errorf("running line:\ngot  %q\nwant %q", got[0], want)
	}
	if want := "\r⠹ slow ███░░░░░░░ 3/10 step 3 · 3 s\x1b[K"; got[1] != want {
		t.Errorf("after one ended:\ngot  %q\nwant %q", got[1], want)
	}
	if want := "█████░░░░░ 2.5/5"; got[2] != want {
		t.Errorf("progress_text = %q, want %q", got[2], want)
	}
	// Out of 0..total, only the count; every number short.
	for i, want := range []string{"-3", "1e+308", "7", "0.001", "░░░░░░░░░░ 1e+300/1e+308"} {
		if got[3+i] != want {
			t.Errorf("progress_text %d = %q, want %q", i, got[3+i], want)
		}
	}
}

func TestChatViewShowsRetries(t *testing.T) {
	// A retry notice is the spinner's text on a terminal (cleared with the
	// spinner when the answer comes), a line of its own otherwise.
	script := `
		local chat = require("chat")
		local function render(o)
			local out = {}
			o.write = function(s) out[#out + 1] = "W:" .. s end
			o.note = o.note and function(s) out[#out + 1] = "N:" .. s end or o.write
			local v = chat.new(o)
			local cb = v.opts()
			cb.on_waiting(true, 0)
			cb.on_retry({ text = "rate limited (429); retrying in 30s, attempt 2/4", reason = "rate limited (429)" })
			cb.on_waiting(true, 1)
			cb.on_text("hi")
			cb.on_waiting(true, 0)
			v.finish()
			return table.concat(out, "|")
		end
		return render({ spinner = true }),
			render({ spinner = false }),
			render({ spinner = true, note = true, retry_lines = true, retry_prefix = "tai: " })`
	got := run(t, script)
	want := []string{
		"W:\r⠋ thinking…\x1b[K|W:\r⠋ rate limited (429); retrying in 30s, attempt 2/4\x1b[K|W:\r⠙ rate limited (429); retrying in 30s, attempt 2/4\x1b[K|W:\r\x1b[K|W:hi|W:\n|W:\r⠋ thinking…\x1b[K|W:\r\x1b[K",
		"W:rate limited (429); retrying in 30s, attempt 2/4\n|W:hi|W:\n",
		"N:\r⠋ thinking…\x1b[K|N:\r\x1b[K|N:tai: rate limited (429); retrying in 30s, attempt 2/4\n|N:\r⠙ thinking…\x1b[K|N:\r\x1b[K|W:hi|N:\r⠋ thinking…\x1b[K|N:\r\x1b[K|W:\n",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("view %d:\ngot  %q\nwant %q", i, got[i], w)
		}
	}
}

func TestConsentPrompter(t *testing.T) {
	// A fake line editor answers s (show everything), then y; then
	// something unknown and Enter (no); then a (always: the next call of
	// the tool is not asked about, another tool is); then a question.
	got := run(t, `
		local chat = require("chat")
		local answers = { "s", "y", "maybe", "", "a", "n", "blue" }
		local asked, said = {}, {}
		local rl = { read = function(_, prompt) asked[#asked + 1] = prompt return table.remove(answers, 1) end }
		local p = chat.prompter(function() return rl end, function(s) said[#said + 1] = s end)
		local c = { tool = "shell", origin = "", digest = "abc123", args = { command = "rm -rf build", env = { A = "1" } } }
		local first = p.confirm(c)
		local second = p.confirm(c)
		local c2 = { tool = "shell", origin = "", args = { command = "rm -rf build" } }
		local third = p.confirm(c2)
		local fourth = p.confirm(c2)
		local other = p.confirm({ tool = "write_file", args = { path = "x", content = "y" } })
		local answer = p.ask("colour?")
		return first, second, third, fourth, other, answer, #asked, table.concat(said, "\n")`)
	if want := []any{true, false, true, true, false, "blue", int64(7)}; !reflect.DeepEqual(got[:7], want) {
		t.Fatalf("got %v, want %v", got[:7], want)
	}
	said := got[7].(string)
	for _, want := range []string{"⚠ shell wants to run", "  command = rm -rf build", `  env = {"A":"1"}`, "answer y, n or s",
		"commands starting with rm run without asking for the rest of this session", "⚠ write_file wants to run", "? colour?"} {
		if !strings.Contains(said, want) {
			t.Errorf("screen lacks %q:\n%s", want, said)
		}
	}
}

// TestAlwaysAllowsTheShellPrefixOnly: a on a shell command allows the
// commands that start as it does for the session, never another command;
// a command no prefix covers cannot be allowed with a; each key's effect
// is on the question.
func TestAlwaysAllowsTheShellPrefixOnly(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		local answers = { "a", "n", "a", "y" }
		local asked, said = {}, {}
		local rl = { read = function(_, prompt) asked[#asked + 1] = prompt return table.remove(answers, 1) end }
		local p = chat.prompter(function() return rl end, function(s) said[#said + 1] = s end)
		local function shell(cmd) return { tool = "shell", origin = "", args = { command = cmd } } end
		local first = p.confirm(shell("git log --oneline"))
		local again = p.confirm(shell("git log -3"))
		local rm = p.confirm(shell("rm -rf /tmp/x"))
		local piped = p.confirm(shell("ls | wc -l"))
		return first, again, rm, piped, #asked, asked[1], asked[3], table.concat(said, "\n")`)
	if want := []any{true, true, false, true, int64(4)}; !reflect.DeepEqual(got[:5], want) {
		t.Fatalf("got %v, want %v", got[:5], want)
	}
	if q := got[5].(string); !strings.Contains(q, "[a]lways 'git log …' this session") || !strings.Contains(q, "[y]es, this once") {
		t.Errorf("the question does not say what a allows: %q", q)
	}
	if q := got[6].(string); strings.Contains(q, "[a]") {
		t.Errorf("a is offered for a command no prefix covers: %q", q)
	}
	said := got[7].(string)
	for _, want := range []string{"commands starting with git log run without asking for the rest of this session; others still ask",
		"no rule covers this command"} {
		if !strings.Contains(said, want) {
			t.Errorf("screen lacks %q:\n%s", want, said)
		}
	}
}

func TestParseProfileFields(t *testing.T) {
	tests := []struct {
		name, text string
		want       []any
	}{
		{"plain", `provider=openai model=gpt-x`, []any{"openai", "gpt-x", nil, nil}},
		{"quoted", `model=m system="be brief, please" key_env=K`, []any{nil, "m", "be brief, please", nil}},
		{"stray word", `model=m oops`, []any{nil, nil, nil, "cannot read 'oops': write fields as key=value (quote values with blanks)"}},
		{"unclosed", `system="open`, []any{nil, nil, nil, "unclosed quote in the value of system"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, `local f, err = require("repl").parse_fields(`+luaQuote(tt.text)+`)
				if not f then return nil, nil, nil, err end
				return f.provider, f.model, f.system, nil`)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClean(t *testing.T) {
	tests := []struct {
		name, in, want string
		oneline        bool
	}{
		{name: "plain", in: "héllo wörld", want: "héllo wörld"},
		{name: "newline and tab kept", in: "a\n\tb", want: "a\n\tb"},
		{name: "newline and tab on one line", in: "a\n\tb", oneline: true, want: `a\n\tb`},
		{name: "erase line and cursor up", in: "rm -rf x \x1b[2K\r\x1b[1Aecho harmless", want: `rm -rf x \x1b[2K\x0d\x1b[1Aecho harmless`},
		{name: "title", in: "\x1b]0;PWNED\x07", want: `\x1b]0;PWNED\x07`},
		{name: "DEL and NUL", in: "a\x7fb\x00", want: `a\x7fb\x00`},
		{name: "C1 CSI", in: "a\u009b2Jb", want: `a\u009b2Jb`},
		{name: "invalid UTF-8", in: "a\x9b2J", want: `a\x9b2J`},
		{name: "bidi override", in: "abc\u202etxt.exe", want: `abc\u202etxt.exe`},
		{name: "bidi isolate", in: "\u2066x\u2069", want: `\u2066x\u2069`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oneline := "false"
			if tt.oneline {
				oneline = "true"
			}
			got := run(t, "return tai.term.clean("+luaBytes(tt.in)+", "+oneline+")")
			if got[0] != tt.want {
				t.Fatalf("clean(%q) = %q, want %q", tt.in, got[0], tt.want)
			}
			if lua.CleanText(tt.in, tt.oneline) != tt.want {
				t.Fatalf("CleanText(%q) = %q", tt.in, lua.CleanText(tt.in, tt.oneline))
			}
		})
	}
}

// TestShortOfLongValues: short makes each run of white space one space
// and cuts at n however long the value, runs that span the part it reads
// first included, and ends a megabyte-long one as it ends a short one.
func TestShortOfLongValues(t *testing.T) {
	tests := []struct {
		name, value string
		n           int
		want        string
	}{
		{name: "fits", value: `"a  b\t\nc"`, n: 10, want: "a b c"},
		{name: "cut", value: `string.rep("x ", 500)`, n: 10, want: "x x x x x…"},
		{name: "long run of spaces", value: `"a" .. string.rep(" ", 1000) .. "b"`, n: 10, want: "a b"},
		{name: "spaces first", value: `string.rep(" ", 100) .. "abc" .. string.rep(" ", 70) .. string.rep("d", 40)`, n: 16, want: " abc dddddddddd…"},
		{name: "run across the first part", value: `string.rep("y", 62) .. "\t\t\t" .. "z"`, n: 80, want: strings.Repeat("y", 62) + " z"},
		{name: "huge name", value: `string.rep("Z", 5 * 1024 * 1024)`, n: 80, want: strings.Repeat("Z", 79) + "…"},
		{name: "huge and escaped", value: `string.rep("\27", 100000)`, n: 20, want: strings.Repeat(`\x1b`, 4) + `\x1` + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, fmt.Sprintf(`return require("tai.chatview").short(%s, %d)`, tt.value, tt.n))
			if got[0] != tt.want {
				t.Fatalf("short(%s, %d) = %q, want %q", tt.value, tt.n, got[0], tt.want)
			}
		})
	}
}

// BenchmarkShortOfAHugeName is the tool line's name of a call whose name
// is five megabytes long, which a model may send.
func BenchmarkShortOfAHugeName(b *testing.B) {
	h, err := lua.New(&lua.Options{Clean: true, ConfigDir: b.TempDir(), StateDir: b.TempDir(), Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	if _, err := h.DoString(ctx, `huge, short = string.rep("Z", 5 * 1024 * 1024), require("tai.chatview").short`, "setup"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := h.DoString(ctx, `return short(huge, 80)`, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestChatViewShowsControlsVisibly feeds a turn whose tool name, arguments,
// outcome and answer carry terminal control sequences: none reaches the
// output; each is shown escaped.
func TestChatViewShowsControlsVisibly(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		local out = {}
		local w = function(s) out[#out + 1] = s end
		local v = chat.new({ write = w, note = w, spinner = false })
		local o = v.opts()
		local evil = "rm -rf /victim \27[2K\r\27[1Aecho harmless"
		o.on_text("hello \27]0;PWNED\7 there")
		o.on_tool_start({ id = "1", name = "sh\27[31mell", args = { command = evil, ["k\27"] = "v\r" } })
		o.on_tool_end({ id = "1", name = "sh\27[31mell", outcome = "ok\27[2J", duration_ms = 1 })
		v.finish()
		local c = { tool = "shell\27[8m", origin = "srv\r", digest = "d", args = { command = evil, multi = "one\n  path = fake" } }
		return table.concat(out), chat.consent_text(c), chat.full_args(c)`)
	for i, s := range got {
		text := s.(string)
		if strings.ContainsAny(text, "\x1b\r\x07") {
			t.Errorf("output %d carries a control character: %q", i, text)
		}
	}
	for _, want := range []string{`command=rm -rf /victim \x1b[2K\x0d\x1b[1A`, `hello \x1b]0;PWNED\x07 there`, `⚙ sh\x1b[31mell`} {
		if !strings.Contains(got[0].(string), want) {
			t.Errorf("view lacks %q:\n%q", want, got[0])
		}
	}
	if want := `⚠ shell\x1b[8m (srv\x0d) wants to run`; !strings.HasPrefix(got[1].(string), want) {
		t.Errorf("consent %q, want prefix %q", got[1], want)
	}
	full := got[2].(string)
	if !strings.Contains(full, `  command = rm -rf /victim \x1b[2K\x0d\x1b[1Aecho harmless`) || !strings.Contains(full, "  multi =\n      │ one\n      │   path = fake") {
		t.Errorf("full args:\n%s", full)
	}
}

// TestChatViewRedactsTheStreamedAnswer splits a vault secret across
// deltas: it never reaches the output whole or in part.
func TestChatViewRedactsTheStreamedAnswer(t *testing.T) {
	const secret = "open sesame 42x"
	h := newVaultHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := h.DoString(ctx, `
		assert(tai.vault.secret_set("door", "`+secret+`"))
		local chat = require("chat")
		local out = {}
		local w = function(s) out[#out + 1] = s end
		local v = chat.new({ write = w, note = w, spinner = false, redactor = assert(tai.vault.redactor()) })
		local o = v.opts()
		for _, d in ipairs({ "the word is op", "en ses", "ame 4", "2x, said ", "the guard" }) do o.on_text(d) end
		local mid = table.concat(out)
		v.finish()
		return mid, table.concat(out), (tai.vault.redact("say `+secret+` now"))`, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got[0] == "" {
		t.Error("nothing was shown while the answer streamed")
	}
	if want := "the word is [REDACTED:door], said the guard\n"; got[1] != want {
		t.Errorf("shown %q, want %q", got[1], want)
	}
	for _, part := range []string{"open", "sesame", "ame 4"} {
		if strings.Contains(got[1].(string), part) {
			t.Errorf("part %q of the secret was shown: %q", part, got[1])
		}
	}
	if got[2] != "say [REDACTED:door] now" {
		t.Errorf("redact: %q", got[2])
	}
}

// newVaultHost is a clean host with a vault in a temporary folder.
func newVaultHost(t *testing.T) *lua.Host {
	t.Helper()
	var out bytes.Buffer
	path := filepath.Join(t.TempDir(), "vault.db")
	h, err := lua.New(&lua.Options{Clean: true, ConfigDir: t.TempDir(), StateDir: t.TempDir(), Stdout: &out, Stderr: &out,
		Vault: func() (*vault.Store, error) { return vault.Open(path, nil) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestNotices(t *testing.T) {
	tests := []struct {
		name, details string
		want          []string
	}{
		{"complete", `{steps = 1}`, nil},
		{"no details", `nil`, nil},
		{"step limit", `{exhausted = true}`, []string{"step limit"}},
		{"output limit", `{finish_reason = "length"}`, []string{"cut off at the model's output limit"}},
		{"both", `{exhausted = true, finish_reason = "length"}`, []string{"step limit", "output limit"}},
		{"filtered", `{filtered = true, finish_reason = "content_filter"}`, []string{`withheld or refused by the provider (finish reason "content_filter")`}},
		{"filtered by reason", `{finish_reason = "content_filter"}`, []string{"withheld or refused"}},
		{"empty", `{empty = true, finish_reason = "stop"}`, []string{"the model returned an empty answer"}},
		{"context window", `{truncated = true, finish_reason = "context_window"}`, []string{"filled the model's context window; /compact"}},
		{"paused", `{truncated = true, finish_reason = "pause"}`, []string{"paused the answer"}},
		{"refusal", `{filtered = true, finish_reason = "refusal"}`, []string{"the model refused to answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, `return table.concat(require("chat").notices(`+tt.details+`), "\n")`)
			lines := strings.Split(got[0].(string), "\n")
			if len(tt.want) == 0 {
				if got[0] != "" {
					t.Fatalf("notices %q, want none", got[0])
				}
				return
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("notices %q, want %d", got[0], len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("notice %d %q lacks %q", i, lines[i], w)
				}
			}
		})
	}
}

// TestConsentCtrlCCancelsTheTurn: Ctrl-C at the consent prompt refuses
// the call and stops the run it came from; Ctrl-D only refuses.
func TestConsentCtrlCCancelsTheTurn(t *testing.T) {
	tests := []struct {
		name, call, err string
		interrupted     bool
	}{
		{"ctrl-c at consent", "confirm", "interrupt", true},
		{"ctrl-d at consent", "confirm", "eof", false},
		{"ctrl-c at a question", "ask", "interrupt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			h, err := lua.New(&lua.Options{Clean: true, ConfigDir: t.TempDir(), StateDir: t.TempDir(), Stdout: &out, Stderr: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := h.DoString(ctx, `
				local chat = require("chat")
				local rl = { read = function() return nil, "`+tt.err+`" end }
				local p = chat.prompter(function() return rl end, function() end)
				local allowed
				if "`+tt.call+`" == "ask" then
					allowed = p.ask("which?")
				else
					allowed = p.confirm({ tool = "shell", digest = "d", args = {} })
				end
				local n = 0
				for i = 1, 1e6 do n = n + i end
				return allowed`, "test")
			if tt.interrupted {
				if !errors.Is(err, lua.ErrInterrupted) {
					t.Fatalf("got %v, %v; want the run interrupted", got, err)
				}
				return
			}
			if err != nil || got[0] != false {
				t.Fatalf("got %v, %v; want false (refused, the run going on)", got, err)
			}
		})
	}
}

// BenchmarkStreamRedactor pushes a streamed answer word by word through
// the redactor over a vault of 20 secrets (each push redacts through the
// store).
func BenchmarkStreamRedactor(b *testing.B) {
	store, err := vault.Open(filepath.Join(b.TempDir(), "vault.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	for i := range 20 {
		if err := store.SecretSet(fmt.Sprintf("s%d", i), fmt.Sprintf("secret-value-%02d-xyz", i), nil); err != nil {
			b.Fatal(err)
		}
	}
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog secret-value ", 25))
	b.ResetTimer()
	for b.Loop() {
		r, err := lua.NewStreamRedactor(store, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range words {
			if _, err := r.Push(" " + w); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(words)), "pushes/op")
}

// TestRedactRefusesWhenSealedSecretsAreUnreadable: without the passphrase
// the sealed values are unknown, so redaction (and the history that needs
// it) refuses instead of letting them through.
func TestRedactRefusesWhenSealedSecretsAreUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	store, err := vault.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SecretSet("tok", "sealed-secret-value", nil); err != nil {
		t.Fatal(err)
	}
	if err := store.Seal("a passphrase"); err != nil {
		t.Fatal(err)
	}
	store.Close()
	var out bytes.Buffer
	h, err := lua.New(&lua.Options{Clean: true, ConfigDir: t.TempDir(), StateDir: t.TempDir(), Stdout: &out, Stderr: &out,
		Vault: func() (*vault.Store, error) { return vault.Open(path, nil) }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := h.DoString(ctx, `
		local text, err = tai.vault.redact("it is sealed-secret-value")
		local r, rerr = tai.vault.redactor()
		return text, err, r, rerr`, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != nil || !strings.Contains(got[1].(string), "TAI_VAULT_PASSPHRASE") || got[2] != nil || got[3] == nil {
		t.Fatalf("got %v", got)
	}
}

// TestHistoryKeepsCredentialsOut: lines holding credential-looking values
// never reach the history file; ordinary lines do.
func TestHistoryKeepsCredentialsOut(t *testing.T) {
	for line, want := range map[string]bool{
		`= tai.mcp.connect{url="https://x/mcp", headers={Authorization="Bearer ghp_abc123"}}`: false,
		`curl -H 'authorization: token abc' https://api`:                                      false,
		`= tai.mcp.connect{headers={["X-Api-Key"]="k-123"}}`:                                  false,
		`!gh api --token zz9 repos`:                                                           false,
		`run the tool with --api-key sk-live-abcdef`:                                          false,
		`fetch https://api.example.com/?token=abcd`:                                           false,
		`my password: hunter2`:                                                                false,
		`connect to https://bob:s3cret@db.example.com`:                                        false,
		`the key is ghp_0123456789abcdef`:                                                     false,
		`OPENAI_API_KEY=sk-proj-abcdefghijkl tai`:                                             false,
		`= tai.vault.secret_set("k", "v")`:                                                    false,
		`= 1 + 1`:                                                                             true,
		`/help`:                                                                               true,
		`explain how bearer tokens work`:                                                      true,
		`what is a token bucket?`:                                                             true,
		`read README.md and summarize it`:                                                     true,
		`= tai.mcp.connect{url="https://x/mcp"}`:                                              true,
		`how does the secret sauce taste`:                                                     true,
		`/mcp add https://h/mcp --header "Authorization: Bearer ${API_TOKEN}"`:                true,
		`claude mcp add x --env API_KEY=${MY_KEY} -- npx y`:                                   true,
		`= tai.mcp.connect{headers={["X-Api-Key"]="${K}"}}`:                                   true,
		`--token ${T} and --password hunter2`:                                                 false,
		`{"env": {"GITHUB_PAT": "gh-0123456789"}}`:                                            false,
		`{"headers": {"Cookie": "session=abc123"}}`:                                           false,
		`{"clientSecret": "cs-0123456789"}`:                                                   false,
		`{"env": {"MEMORY_FILE_PATH": "/tmp/memory.json"}}`:                                   true,
	} {
		res := run(t, "return require('repl').history_ok("+luaQuote(line)+")")
		if res[0] != want {
			t.Errorf("history_ok(%q) = %v, want %v", line, res[0], want)
		}
	}
}

// TestConversationSaveSurvivesUnreadableHistory: when the history cannot
// be read (tai.chat_history returns nil and why), conv.save says so
// instead of failing on the nil, and the callers warn with that reason.
func TestConversationSaveSurvivesUnreadableHistory(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		local conv = chat.conversation()
		tai.chat_history = function() return nil, "a message cannot be converted" end
		local ok, saved, err = pcall(conv.save)
		return ok, saved, err`)
	if len(got) != 3 || got[0] != true || got[1] != nil || got[2] != "the conversation was not kept: a message cannot be converted" {
		t.Fatalf("conv.save with an unreadable history = %v", got)
	}
}

// TestPastedConfigsStayConfigs: every pasted config of the normalizer's
// golden cases (the configs READMEs show, broken ones included) is still
// taken as an MCP config, not as data for the model.
func TestPastedConfigsStayConfigs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "lua", "testdata", "normalize", "*.golden"))
	if err != nil || len(files) < 80 {
		t.Fatalf("the normalizer's golden cases: %d files, %v", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text, _, _ := strings.Cut(string(data), "\n-- normalized (GOOS=linux) --\n")
		got := run(t, "return require('repl').paste_shape("+luaQuote(text)+")")
		if got[0] != "config" {
			t.Errorf("%s: %v, want config", filepath.Base(f), got[0])
		}
	}
}

// TestPastedDataGoesToTheModel: JSON and TOML with no MCP shape are data;
// an object with a url beside foreign fields is asked about.
func TestPastedDataGoesToTheModel(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"object", `{"name": "bob", "age": 3}`, "data"},
		{"package.json", "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\"test\": \"jest\"},\n  \"dependencies\": {\"left-pad\": \"^1.3.0\"}\n}", "data"},
		{"Cargo.toml", "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n", "data"},
		{"array", `[{"id": 1}, {"id": 2}]`, "data"},
		{"api response with a url", `{"id": 7, "url": "https://api.example.com/items/7", "title": "x"}`, "ask"},
		{"broken JSON", "{\n  \"a\": 1,,\n}", "data"},
		{"one entry", `{"command": "npx", "args": ["-y", "x"]}`, "config"},
		{"named entries", `{"fs": {"command": "npx"}, "web": {"url": "https://h/mcp"}}`, "config"},
		{"fragment", "\"mcpServers\": {\n  \"git\": {\"command\": \"uvx\"}\n}", "config"},
		{"codex toml", "[mcp_servers.docs]\ncommand = \"npx\"\n", "config"},
		{"broken config", "{\"mcpServers\": {\"a\": {\"command\": \"npx\",,}}", "config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, "return require('repl').paste_shape("+luaQuote(tt.text)+")")
			if got[0] != tt.want {
				t.Fatalf("paste_shape = %v, want %s", got[0], tt.want)
			}
		})
	}
}

// TestNearestCommandAndCost: a mistyped command finds the one meant, or
// none; /cost's line appears only for a model whose price is set.
func TestNearestCommandAndCost(t *testing.T) {
	got := run(t, `
		local repl = require("repl")
		repl.install_builtins()
		repl.prices["m1"] = { input = 2, output = 10 }
		return repl.nearest_command("hlep"), repl.nearest_command("exi"), repl.nearest_command("zzzzzz"), repl.nearest_command("q"),
			repl.cost_line({ input = 1000000, output = 500000 }, "m1"), repl.cost_line({ input = 1, output = 1 }, "m2")`)
	want := []any{"help", "exit", nil, "quit", "cost: about $7.0000 at the prices set for m1 (2 in, 10 out a million tokens)", nil}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// TestMCPCommandLinesShareALine: /mcp shows a server's command line with
// as many words on a line as fit, quoted where a word needs it.
func TestMCPCommandLinesShareALine(t *testing.T) {
	got := run(t, `
		local lines = require("tai.mcpcommand").command_lines({"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/a b"}, 80)
		local narrow = require("tai.mcpcommand").command_lines({"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/a b"}, 30)
		return table.concat(lines, "|"), #narrow`)
	if want := "npx -y @modelcontextprotocol/server-filesystem '/home/me/a b'"; got[0] != want {
		t.Fatalf("got %q, want %q", got[0], want)
	}
	if got[1] != int64(3) {
		t.Fatalf("%v lines at 30 columns, want 3", got[1])
	}
}

// TestContextHeadCutsBetweenWords: /context shows the start of a long
// paragraph cut between two words, with a note of what is left.
func TestContextHeadCutsBetweenWords(t *testing.T) {
	got := run(t, `return require("repl").head("alpha beta gamma delta\nsecond line", false, 12, 14)`)
	if got[0] != "alpha beta …" || got[1] == "" {
		t.Fatalf("got %q, %q", got[0], got[1])
	}
	got = run(t, `return require("repl").head("short\ntext", false, 12, 1200)`)
	if got[0] != "short\ntext" || got[1] != "" {
		t.Fatalf("got %q, %q", got[0], got[1])
	}
}

// TestNotifyCarriesTheREPLsMessages: the REPL says what it says through
// tai.notify, so a function put there receives each notice with its
// level; a bad level is refused.
func TestNotifyCarriesTheREPLsMessages(t *testing.T) {
	got := run(t, `
		local seen = {}
		local default = tai.notify
		tai.notify = function(text, level) seen[#seen + 1] = level .. ":" .. text end
		local repl = require("repl")
		repl.install_builtins()
		repl.say("hello")
		repl.command("/nosuch")
		tai.notify = default
		local ok = pcall(tai.notify, "x", "loud")
		return table.concat(seen, "|"), ok`)
	if got[0] != "info:hello|warn:unknown command /nosuch; /help lists them" || got[1] != false {
		t.Fatalf("got %q, %v", got[0], got[1])
	}
}

// TestVaultErrorGetsNoProfileLine: a turn that failed on the vault (sealed,
// no passphrase) is said alone, without the unrelated line about profiles
// a model error gets.
func TestVaultErrorGetsNoProfileLine(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		return chat.profile_hint("vault: the vault is sealed: set TAI_VAULT_PASSPHRASE"), chat.profile_hint("HTTP 401 from the model")`)
	if got[0] != "vault: the vault is sealed: set TAI_VAULT_PASSPHRASE" {
		t.Errorf("vault error: %q", got[0])
	}
	if s, _ := got[1].(string); !strings.Contains(s, "the profile in use is") {
		t.Errorf("model error lost its profile line: %q", s)
	}
}

// TestLooksYAML: a pasted compose file or workflow reads as YAML (it goes
// to the model with the note); a stack trace or prose does not.
func TestLooksYAML(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"compose", "services:\n  web:\n    image: nginx\n    ports:\n      - \"80:80\"\n", true},
		{"document start", "---\nname: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n", true},
		{"stack trace", "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1d\n", false},
		{"prose", "Note: this is\na paragraph of text\nwith a colon at first.\n", false},
		{"one line", "key: value", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(t, "return require('repl').looks_yaml("+luaQuote(tt.text)+")"); got[0] != tt.want {
				t.Fatalf("looks_yaml = %v, want %v", got[0], tt.want)
			}
		})
	}
}

// TestHelpFoldsWithheldPrompts: /help lists a server's offered prompts,
// folds those withheld into one line with the command that grants them,
// says when a server reaches the number tai offers, and a prompt past it
// is said to be cut.
func TestHelpFoldsWithheldPrompts(t *testing.T) {
	got := run(t, `
		local pc, repl = require("tai.promptcommand"), require("tai.repl")
		local cmds = {}
		local function add(name, offered)
			local p = { server = "h", name = name, offered = offered, reason = "withheld: the server added this prompt after registration; a person must grant it (/mcp grant h " .. name .. ")" }
			cmds[#cmds + 1] = { name = "h:" .. name, help = offered and "a prompt" or "(" .. p.reason .. ")", server = "h", prompt = p }
		end
		add("greet", true)
		for i = 1, tai.mcp.MAX_PROMPTS - 1 do add(string.format("p%05d", i), false) end
		return table.concat(pc.help_lines("h", cmds, 100, repl.help_lines), "\n"), tai.mcp.MAX_PROMPTS`)
	lines := strings.Split(got[0].(string), "\n")
	max := got[1].(int64)
	want := []string{
		"/greet  a prompt",
		fmt.Sprintf("%d withheld until you grant them (p00001, p00002, p00003, and %d more): /mcp grant h", max-1, max-4),
		fmt.Sprintf("(tai offers a server's first %d prompts by name; any more it lists are not offered)", max),
	}
	if len(lines) != len(want) {
		t.Fatalf("/help's prompts of h:\n%s", got[0])
	}
	for i := range want {
		if !strings.Contains(lines[i], strings.TrimPrefix(want[i], "/greet")) {
			t.Fatalf("line %d = %q, want %q", i, lines[i], want[i])
		}
		// indented as the commands' lines are
		if indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " ")); indent != 2 {
			t.Fatalf("line %d is indented %d: %q", i, indent, lines[i])
		}
	}
}

// TestInstructionsFoldOneMarker: the add summary and the consent screen
// fold a server's instructions with the fold's own markers and tai's cut
// line only, no note beside them that counts the cut text as the whole;
// one tool is "1 tool".
func TestInstructionsFoldOneMarker(t *testing.T) {
	got := run(t, `
		local repl, out = require("tai.repl"), {}
		repl.say = function(s) out[#out + 1] = s end
		require("tai.mcpcommand").report({ servers = { { outcome = tai.outcome.ADDED, server = "big", transport = "stdio",
			enabled = true, profile = "default", tools = { "t" },
			instructions = string.rep("A", 4096) .. "\n… (instructions cut: 95904 bytes more)" } } })
		local many = {}
		for i = 1, 32 do many[#many + 1] = "line " .. i .. " " .. string.rep("x", 40) end
		local body = require("tai.consent").body({ transport = "stdio", argv = { "srv" }, instructions = table.concat(many, "\n") })
		return table.concat(out, "\n"), body`)
	summary, body := got[0].(string), got[1].(string)
	if !strings.Contains(summary, "1 tool: t") || strings.Contains(summary, "bytes in all") || !strings.Contains(summary, "instructions cut: 95904 bytes more") {
		t.Fatalf("add summary:\n%s", summary)
	}
	if strings.Count(body, "not shown") != 1 || strings.Contains(body, "more lines") || !strings.Contains(body, "line 32") {
		t.Fatalf("consent body:\n%s", body)
	}
}

// TestGrantedTextIsBounded: /mcp grant granting 95 prompts names ten and
// counts the rest, where it printed all 95 on one line.
func TestGrantedTextIsBounded(t *testing.T) {
	got := run(t, `
		local g = {}
		for i = 1, 95 do g[i] = string.format("prompt p%05d", i) end
		return require("tai.mcpcommand").granted_text(g), require("tai.mcpcommand").granted_text({ "echo" })`)
	if want := "prompt p00001, prompt p00002, prompt p00003, prompt p00004, prompt p00005, prompt p00006, prompt p00007, prompt p00008, prompt p00009, prompt p00010, and 85 more"; got[0] != want {
		t.Fatalf("granted_text = %q, want %q", got[0], want)
	}
	if got[1] != "echo" {
		t.Fatalf("granted_text of one = %q", got[1])
	}
}
