package lua

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"tai/mcp/config"
	"tai/stdlib"
	"tai/vault"
)

// TestNormalizeRulesLua runs each function of each testdata/rules/*.lua
// file as a subtest, with tai.mcp.normalize and the shipped rules.
func TestNormalizeRulesLua(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.lua"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule tests (%v)", err)
	}
	for _, f := range files {
		h := newHost(t, Options{Clean: true}, nil)
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fn, err := h.L.Load(strings.NewReader(string(src)), f)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.L.CallByParam(glua.P{Fn: fn, NRet: 1, Protect: true}); err != nil {
			t.Fatal(err)
		}
		tests, ok := h.L.Get(-1).(*glua.LTable)
		h.L.Pop(1)
		if !ok {
			t.Fatalf("%s does not return a table of tests", f)
		}
		var names []string
		tests.ForEach(func(k, _ glua.LValue) { names = append(names, k.String()) })
		slices.Sort(names)
		for _, name := range names {
			t.Run(strings.TrimSuffix(filepath.Base(f), ".lua")+"/"+name, func(t *testing.T) {
				if _, err := h.Call(ctxT(t), tests.RawGetString(name)); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestNormalizeUserOverride: a user's lua/normalize.lua replaces the
// shipped rules, and one that wraps require("builtin.normalize") changes
// only the step it overrides.
func TestNormalizeUserOverride(t *testing.T) {
	paste := `{"mcpServers": {"mem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`
	t.Run("wrap", func(t *testing.T) {
		h := newHost(t, Options{}, map[string]string{"lua/normalize.lua": `
local base = require("builtin.normalize")
local M = setmetatable({}, { __index = base })
function M:entry(name, raw, ctx)
  local e = base.entry(self, name, raw, ctx)
  e.args[#e.args + 1] = "--from-user-rule"
  ctx:note(name, "info", "user rule ran")
  return e
end
return M
`})
		entries, notes, err := h.Normalizer()(paste, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name != "mem" || entries[0].Args[len(entries[0].Args)-1] != "--from-user-rule" {
			t.Errorf("entries = %+v", entries)
		}
		if !slices.ContainsFunc(notes, func(n config.Note) bool { return n.Text == "user rule ran" }) {
			t.Errorf("notes = %+v", notes)
		}
		if !strings.Contains(h.errOut.String(), "overrides the built-in normalize.lua") {
			t.Errorf("stderr = %q", h.errOut.String())
		}
	})
	t.Run("replace", func(t *testing.T) {
		h := newHost(t, Options{}, map[string]string{"lua/normalize.lua": `
return { normalize = function(self, doc)
  return { { name = "only", transport = "stdio", command = "mine" } }, {}
end }
`})
		entries, _, err := h.Normalizer()(paste, "")
		if err != nil || len(entries) != 1 || entries[0].Name != "only" || entries[0].Command != "mine" {
			t.Errorf("entries = %+v, err = %v", entries, err)
		}
	})
	t.Run("clean ignores it", func(t *testing.T) {
		h := newHost(t, Options{Clean: true}, map[string]string{"lua/normalize.lua": `return { normalize = function() error("user file ran") end }`})
		entries, _, err := h.Normalizer()(paste, "")
		if err != nil || len(entries) != 1 || entries[0].Name != "mem" {
			t.Errorf("entries = %+v, err = %v", entries, err)
		}
	})
	t.Run("a broken rule is an error naming the file", func(t *testing.T) {
		h := newHost(t, Options{}, map[string]string{"lua/normalize.lua": `return { normalize = function() error("boom") end }`})
		_, _, err := h.Normalizer()(paste, "")
		if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "normalize.lua") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a rule that loops is stopped", func(t *testing.T) {
		if testing.Short() {
			return
		}
		h := newHost(t, Options{}, map[string]string{"lua/normalize.lua": `return { normalize = function() while true do end end }`})
		_, _, err := h.Normalizer()(paste, "")
		if err == nil || !strings.Contains(err.Error(), "stopped") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestNormalizeGOOS: the Go side passes the target OS to the rules.
func TestNormalizeGOOS(t *testing.T) {
	h := newHost(t, Options{Clean: true}, nil)
	paste := `{"mcpServers": {"m": {"command": "npx", "args": ["x"]}}}`
	for _, goos := range []string{"windows", "linux"} {
		entries, _, err := config.Normalize(paste, &config.Options{GOOS: goos, Rules: h.NormalizeRules()})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"windows": "cmd", "linux": "npx"}[goos]
		if entries[0].Command != want {
			t.Errorf("GOOS=%s: command %q, want %q", goos, entries[0].Command, want)
		}
	}
	if runtime.GOOS != "windows" {
		entries, _, _ := h.Normalizer()(paste, "")
		if entries[0].Command != "npx" {
			t.Errorf("Normalizer on %s: command %q", runtime.GOOS, entries[0].Command)
		}
	}
}

// TestMCPExpandLua: tai.mcp.expand resolves from the environment, then
// the vault; what it resolved from the environment is redacted from then
// on; what nothing resolves is returned and keeps its literal; connect is
// refused naming it.
func TestMCPExpandLua(t *testing.T) {
	dir := t.TempDir()
	var store *vault.Store
	open := func() (*vault.Store, error) {
		var err error
		store, err = vault.Open(filepath.Join(dir, "vault.db"), nil)
		return store, err
	}
	t.Setenv("TAI_TEST_EXPAND_TOKEN", "env-value-93817")
	h := newHost(t, Options{Vault: open, Engine: nil}, nil)
	res, err := h.DoString(ctxT(t), `
tai.vault.secret_set("vault_key", "vault-value-55120")
local e, missing = tai.mcp.expand({ name = "x", command = "srv",
  args = { "${TAI_TEST_EXPAND_TOKEN}", "${input:vault_key}", "${NOPE_NOT_SET}", "${workspaceFolder}" },
  headers = { Authorization = "Bearer ${env:TAI_TEST_EXPAND_TOKEN}" } })
local c, err = tai.mcp.connect({ name = "x", command = "srv", args = { "${NOPE_NOT_SET}" } })
return e.args[1], e.args[2], e.args[3], e.args[4], e.headers.Authorization, missing[1], #missing, c, err,
  tai.vault.redact("leak env-value-93817 here")
`, "expand")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	want := []any{"env-value-93817", "vault-value-55120", "${NOPE_NOT_SET}", wd, "Bearer env-value-93817", "NOPE_NOT_SET", int64(1), nil}
	for i, w := range want {
		if res[i] != w {
			t.Errorf("result %d = %#v, want %#v", i+1, res[i], w)
		}
	}
	if msg, _ := res[8].(string); !strings.Contains(msg, "${NOPE_NOT_SET}") || !strings.Contains(msg, `tai.vault.secret_set("NOPE_NOT_SET"`) {
		t.Errorf("connect error = %#v", res[8])
	}
	if red, _ := res[9].(string); strings.Contains(red, "env-value-93817") {
		t.Errorf("resolved value not redacted: %q", red)
	}
}

// TestNormalizerDocDrift: the key table of mcp/README.md and the shipped
// rules name the same keys: every key in the table's first column is one
// normalize.lua reads, and every key the rules ignore is in the table.
func TestNormalizerDocDrift(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "mcp", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## Normalizer (`mcp/config`)")
	if start < 0 {
		t.Fatal("mcp/README.md has no Normalizer section")
	}
	section := text[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	src, err := fs.ReadFile(stdlib.Files(), "normalize.lua")
	if err != nil {
		t.Fatal(err)
	}
	rules := string(src)
	tick := regexp.MustCompile("`([^`]+)`")
	var keys []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range tick.FindAllStringSubmatch(first, -1) {
			for _, k := range strings.Split(m[1], "/") {
				if strings.HasPrefix(k, "_") && k != "_comment" {
					k = strings.TrimSuffix(keys[len(keys)-1], "_sec") + k // startup_timeout_sec/_ms
				}
				keys = append(keys, k)
			}
		}
	}
	if len(keys) < 30 {
		t.Fatalf("read only %d keys from the table: %q", len(keys), keys)
	}
	for _, k := range keys {
		last := k[strings.LastIndex(k, ".")+1:]
		if k == "_comment" {
			continue // comments are any key starting with _
		}
		if !strings.Contains(rules, `"`+k+`"`) && !strings.Contains(rules, "\n  "+k+" = ") && !strings.Contains(rules, `"`+last+`"`) {
			t.Errorf("mcp/README.md's normalizer table names %q, which normalize.lua does not read", k)
		}
	}
	h := newHost(t, Options{Clean: true}, nil)
	res, err := h.DoString(ctxT(t), `local out = {} for k in pairs(require("normalize").ignored) do out[#out+1] = k end return out`, "ignored")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range res[0].([]any) {
		if !slices.Contains(keys, k.(string)) {
			t.Errorf("normalize.lua ignores %q, but mcp/README.md's normalizer table does not say so", k)
		}
	}
}

// TestNormalizeStoredName: a bare word naming a stored server returns its
// entry; an unknown word says so.
func TestNormalizeStoredName(t *testing.T) {
	dir := t.TempDir()
	open := func() (*vault.Store, error) { return vault.Open(filepath.Join(dir, "vault.db"), nil) }
	h := newHost(t, Options{Vault: open}, nil)
	store, err := h.Vault()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ServerPut(vault.Server{Name: "memory", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Source: "config-json"}); err != nil {
		t.Fatal(err)
	}
	res, err := h.DoString(ctxT(t), `
local es = assert(tai.mcp.normalize("memory"))
local none, err = tai.mcp.normalize("nosuch")
return es[1].name, es[1].command, es[1].args[2], es[1].source, none, err`, "stored")
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != "memory" || res[1] != "npx" || res[2] != "@modelcontextprotocol/server-memory" || res[3] != "config-json" || res[4] != nil {
		t.Errorf("results = %#v", res)
	}
	if msg, _ := res[5].(string); !strings.Contains(msg, "no stored server") {
		t.Errorf("unknown word: %#v", res[5])
	}
}

// TestNormalizeKeyGivenTwice: where two keys name one thing (type and
// transport, url and serverUrl), the first wins and each other one is
// noted (info for the transport, a warning for the URL) and dropped.
func TestNormalizeKeyGivenTwice(t *testing.T) {
	h := newHost(t, Options{Clean: true}, nil)
	paste := `{"mcpServers": {"web": {"type": "http", "transport": "streamable-http", "url": "https://a.example/mcp", "serverUrl": "https://b.example/mcp"}}}`
	entries, notes, err := h.Normalizer()(paste, "")
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries %+v, notes %+v, err %v", entries, notes, err)
	}
	if entries[0].URL != "https://a.example/mcp" {
		t.Errorf("url = %q, want the first one given", entries[0].URL)
	}
	want := map[string]string{
		`"transport" is given as well as "type"; tai went by "type"`: config.LevelInfo,
		`"serverUrl" is given as well as "url"; tai went by "url"`:   config.LevelWarn,
	}
	for text, level := range want {
		if !slices.ContainsFunc(notes, func(n config.Note) bool { return strings.Contains(n.Text, text) && n.Level == level }) {
			t.Errorf("no %v note %q in %+v", level, text, notes)
		}
	}
}

// TestNormalizeCommandLineLua: a pasted "claude mcp add" line comes through
// tai.mcp.normalize with the shipped rules as the entry it describes, and
// an unknown flag is a refusal note naming it.
func TestNormalizeCommandLineLua(t *testing.T) {
	h := newHost(t, Options{Clean: true}, nil)
	res, err := h.DoString(ctxT(t), `
local es, notes = assert(tai.mcp.normalize([[$ claude mcp add memory \
    -e MEMORY_FILE_PATH=/tmp/m.json -- npx -y @modelcontextprotocol/server-memory]]))
local none, refused = tai.mcp.normalize("codex mcp add x --yolo -- srv")
return es[1].name, es[1].command, table.concat(es[1].args, " "), es[1].env.MEMORY_FILE_PATH, es[1].source, #none, refused[1].level, refused[1].text`, "cli")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"memory", "npx", "-y @modelcontextprotocol/server-memory", "/tmp/m.json", "explicit", "0", "refused"}
	for i, w := range want {
		if fmt.Sprint(res[i]) != w {
			t.Errorf("result %d = %#v, want %#v", i+1, res[i], w)
		}
	}
	if text, _ := res[7].(string); !strings.Contains(text, "--yolo") {
		t.Errorf("refusal %q does not name the flag", text)
	}
}
