package stdlib_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"tai/lua"
	"tai/stdlib"
)

func TestDumpWritesEveryFileAndRefusesToOverwrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	written, err := stdlib.Dump(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := fs.ReadDir(stdlib.Files(), ".")
	if len(written) != len(entries) || len(entries) < 3 {
		t.Fatalf("wrote %v for %d embedded files", written, len(entries))
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
	want := []any{"/greet,/help,/lua,/new,/profile,/profiles,/quit", "/help", "alice,albert", "greet", ""}
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
			o.on_tool_end({ id = "1", name = "read_file", outcome = "ok", duration_ms = 12.4 })
			o.on_tool_start({ id = "2", name = "shell", args = { command = string.rep("x", 80) } })
			o.on_tool_start({ id = "3", name = "write_file", args = {} })
			o.on_tool_end({ id = "2", name = "shell", outcome = "denied", duration_ms = 0 })
			o.on_tool_end({ id = "3", name = "write_file", outcome = "error", duration_ms = 1500 })
			o.on_text("Done.")
			v.finish()
			return table.concat(out), table.concat(note)
		end
		local one = render(false)
		local answer, notes = render(true)
		return one, answer, notes`
	got := run(t, script)
	one := "\r⠋ thinking…\r⠙ thinking…\r\x1b[KLet me look\n⚙ read_file limit=5 path=a.txt ✓ 12 ms\n⚙ shell command=" + strings.Repeat("x", 39) + "…\n⚙ write_file\n  shell ✗ denied 0 ms\n  write_file ✗ 1.5 s\nDone.\n"
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

func TestConsentPrompter(t *testing.T) {
	// A fake line editor answers a, then y; then n; then a question.
	got := run(t, `
		local chat = require("chat")
		local answers = { "a", "y", "maybe", "", "blue" }
		local asked, said = {}, {}
		local rl = { read = function(_, prompt) asked[#asked + 1] = prompt return table.remove(answers, 1) end }
		local p = chat.prompter(function() return rl end, function(s) said[#said + 1] = s end)
		local c = { tool = "shell", origin = "", digest = "abc123", args = { command = "rm -rf build", env = { A = "1" } } }
		local first = p.confirm(c)
		local second = p.confirm(c)
		local answer = p.ask("colour?")
		return first, second, answer, #asked, table.concat(said, "\n")`)
	if got[0] != true || got[1] != false || got[2] != "blue" || got[3] != int64(5) {
		t.Fatalf("got %v", got)
	}
	said := got[4].(string)
	for _, want := range []string{"⚠ shell wants to run · args abc123", "  command = rm -rf build", `  env = {"A":"1"}`, "answer y, n or a", "? colour?"} {
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
