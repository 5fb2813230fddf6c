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
