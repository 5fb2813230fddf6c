package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	glua "github.com/yuin/gopher-lua"

	"tai/lua"
	"tai/mcp"
	"tai/stdlib"
)

// The manual (stdlib/help) names the command line's flags, the REPL's
// commands, the tai Lua module's functions and the MCP caps. Each name it
// gives must exist, and each that exists must be named, so that nothing
// is documented that is gone and nothing is there undocumented.

// shipped returns the shipped topics by name.
func shipped(t *testing.T) map[string]string {
	t.Helper()
	topics, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tp := range topics {
		out[tp.Name] = tp.Text
	}
	return out
}

// allText is every topic, one after another.
func allText(topics map[string]string) string {
	names := make([]string, 0, len(topics))
	for n := range topics {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(topics[n])
		b.WriteString("\n")
	}
	return b.String()
}

// backquoted is a span of text between backquotes, on one line.
var backquoted = regexp.MustCompile("`[^`\n]+`")

// topicFlags reads the flags a topic names in backquotes (the cli topic's
// list of them).
func topicFlags(text string) map[string]bool {
	flags := map[string]bool{}
	for _, span := range backquoted.FindAllString(text, -1) {
		for _, m := range spanFlag.FindAllStringSubmatch(span, -1) {
			flags[strings.TrimLeft(m[1], "-")] = true
		}
	}
	return flags
}

// flagWord is a flag as a command line gives it: -p, --serve-mcp,
// --vault=PATH.
var flagWord = regexp.MustCompile(`^-{1,2}[a-z][a-z-]*(=.*)?$`)

// invokedFlags reads the flags of every tai command line the text shows
// (tai --auto -p "…", tai --serve-mcp - < key-file): after each word tai
// (a backquote or parenthesis before it allowed), the words that start
// with "-", up to the first that does not (a script, a prompt, a topic),
// skipping the value of a flag that takes one. takes says whether a flag
// takes a value.
func invokedFlags(text string, takes func(string) bool) map[string]bool {
	flags := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		words := strings.Fields(line)
		for at, w := range words {
			if strings.TrimLeft(w, "`(") != "tai" {
				continue
			}
			for i := at + 1; i < len(words); i++ {
				w := strings.TrimRight(words[i], "`,.;)")
				if !flagWord.MatchString(w) {
					break
				}
				name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
				flags[name] = true
				if !hasValue && takes(name) {
					i++
				}
			}
		}
	}
	return flags
}

// flagTakesValue reports whether tai's flag name takes a value.
func flagTakesValue(name string) bool {
	f := newFlags(&options{}, io.Discard).Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// slashWord is a REPL command as the manual writes it: /word after a
// blank, a backquote, a parenthesis or a prompt, and not a path (no / or
// . right after it) nor a server's prompt (/SERVER:PROMPT: no : after it).
var slashWord = regexp.MustCompile("(?:^|[\\s`(>])/([a-z][a-z-]*)(?:[^a-z/.\\-:]|$)")

// notCommands are the words after a slash the manual uses that are
// paths, not commands: /tmp, /c (cmd /c), /sse (a URL's path; one with
// its host before it is no match of slashWord).
var notCommands = map[string]string{"tmp": "a folder", "proc": "a folder", "srv": "a folder", "c": "cmd /c", "sse": "a URL's path"}

// namedCommands reads the commands the text names.
func namedCommands(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		for _, m := range slashWord.FindAllStringSubmatch(line, -1) {
			if _, skip := notCommands[m[1]]; !skip {
				out[m[1]] = true
			}
		}
	}
	return out
}

// defined is a command defined in Lua: tai.command("name", ….
var defined = regexp.MustCompile(`tai\.command\("([a-z][a-z-]*)"`)

// exampleCommands returns the commands the topics' examples and the
// scripts in scripts/ define.
func exampleCommands(t *testing.T) map[string]bool {
	t.Helper()
	text := allText(shipped(t))
	scripts, err := filepath.Glob(filepath.Join("..", "..", "scripts", "*.lua"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text += string(b)
	}
	out := map[string]bool{}
	for _, m := range defined.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// luaName is a name in the tai module as the manual writes it (a constant in
// capitals last: tai.outcome.DENIED).
var luaName = regexp.MustCompile(`(?:^|[^\w./"-])(tai(?:\.[a-z_]+)+(?:\.[A-Z][A-Z_]*)?)`)

// namedLua reads the tai.… names the text gives (tai.vault.seal,
// tai.json.null); a module name in quotes (require("tai.repl")) is not one.
func namedLua(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range luaName.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// helpRef is a cross-reference: /help NAME.
var helpRef = regexp.MustCompile(`/help ([a-z][a-z-]*)`)

// capName is an MCP cap, as mcp/wire.go names it.
var capName = regexp.MustCompile(`\bMCP_[A-Z_]+\b`)

// repl builds a host as tai builds one, with the REPL's commands
// installed, and returns it.
func replHost(t *testing.T) *lua.Host {
	t.Helper()
	h, err := lua.New(&lua.Options{Clean: true, ConfigDir: t.TempDir(), StateDir: t.TempDir(), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.DoString(ctx, `require("repl").install_builtins()`, "install"); err != nil {
		t.Fatal(err)
	}
	return h
}

// liveCommands returns the names of the commands the REPL registers.
func liveCommands(t *testing.T, h *lua.Host) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := h.DoString(ctx, `local n = {} for _, c in ipairs(tai.commands()) do n[#n + 1] = c.name end return table.concat(n, " ")`, "commands")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range strings.Fields(got[0].(string)) {
		out[n] = true
	}
	return out
}

// liveLua walks the tai table: every function and value under its dotted
// name, and apart from them its sub-tables (tai.vault), which the manual
// names through their members.
func liveLua(h *lua.Host) (names, tables map[string]bool) {
	out := map[string]bool{"tai.profile": true} // answered by the module's __index
	tables = map[string]bool{}
	seen := map[*glua.LTable]bool{}
	var walk func(t *glua.LTable, prefix string)
	walk = func(t *glua.LTable, prefix string) {
		if seen[t] {
			return
		}
		seen[t] = true
		t.ForEach(func(k, v glua.LValue) {
			name := prefix + "." + k.String()
			if sub, ok := v.(*glua.LTable); ok {
				tables[name] = true
				walk(sub, name)
				return
			}
			out[name] = true
		})
	}
	walk(h.Module(), "tai")
	return out, tables
}

// builtinModule reports whether tai.x names a built-in Lua module (a file
// of the embedded stdlib), which require("tai.x") loads.
func builtinModule(name string) bool {
	x, ok := strings.CutPrefix(name, "tai.")
	if !ok || strings.Contains(x, ".") {
		return false
	}
	_, err := fs.Stat(stdlib.Files(), x+".lua")
	return err == nil
}

// declaredCaps returns the MCP_ constants mcp/*.go declares.
func declaredCaps(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "mcp", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, s := range gd.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "MCP_") {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// capValues is each cap's value as the limits topic writes it. A cap
// mcp/wire.go declares that this map lacks fails the test, so a new one
// is written down with its value.
func capValues() map[string]string {
	secs := func(d time.Duration) string { return fmt.Sprintf("%ds", int(d/time.Second)) }
	return map[string]string{
		"MCP_PROTOCOL_VERSION": mcp.MCP_PROTOCOL_VERSION,
		"MCP_CONNECT_TIMEOUT":  secs(mcp.MCP_CONNECT_TIMEOUT),
		"MCP_INSTALL_TIMEOUT":  secs(mcp.MCP_INSTALL_TIMEOUT),
		"MCP_CALL_TIMEOUT":     secs(mcp.MCP_CALL_TIMEOUT),
		"MCP_CALL_MAX_TOTAL":   secs(mcp.MCP_CALL_MAX_TOTAL),
		"MCP_RESULT_MAX":       fmt.Sprint(mcp.MCP_RESULT_MAX),
		"MCP_HTTP_MAX_BODY":    fmt.Sprint(mcp.MCP_HTTP_MAX_BODY),
		"MCP_MAX_SERVERS":      fmt.Sprint(mcp.MCP_MAX_SERVERS),
		"MCP_MAX_TOOLS":        fmt.Sprint(mcp.MCP_MAX_TOOLS),
		"MCP_SESSION_IDLE":     secs(mcp.MCP_SESSION_IDLE),
		"MCP_CHAT_TIMEOUT":     secs(mcp.MCP_CHAT_TIMEOUT),
		"MCP_RESOLVER_TIMEOUT": secs(mcp.MCP_RESOLVER_TIMEOUT),
		"MCP_RESOLVER_STEPS":   fmt.Sprint(mcp.MCP_RESOLVER_STEPS),
		"MCP_OAUTH_TIMEOUT":    secs(mcp.MCP_OAUTH_TIMEOUT),
		"MCP_DEFAULT_PORT":     fmt.Sprint(mcp.MCP_DEFAULT_PORT),
	}
}

// live is what exists: tai's flags, the REPL's commands, the tai module's
// names and the MCP caps with their values.
type live struct {
	flags, commands, lua, caps map[string]bool
	luaTables, examples        map[string]bool
	capValues                  map[string]string
}

func liveNow(t *testing.T) live {
	t.Helper()
	h := replHost(t)
	names, tables := liveLua(h)
	l := live{flags: definedFlags(), commands: liveCommands(t, h), lua: names, luaTables: tables, examples: exampleCommands(t), caps: declaredCaps(t), capValues: capValues()}
	if len(l.flags) < 10 || len(l.commands) < 10 || len(l.lua) < 90 || len(l.caps) < 10 {
		t.Fatalf("too few found to be right: %d flags, %d commands, %d Lua names, %d caps", len(l.flags), len(l.commands), len(l.lua), len(l.caps))
	}
	return l
}

// topicDrift compares the manual with what exists, both ways, and names
// each difference.
func topicDrift(topics map[string]string, l live) []string {
	var problems []string
	report := func(names map[string]bool, f string) {
		var sorted []string
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			problems = append(problems, fmt.Sprintf(f, n))
		}
	}
	text := allText(topics)

	// Flags: the cli topic names every flag and no other; any topic's tai
	// command line uses only flags that exist.
	cli := topicFlags(topics["cli"])
	report(minus(l.flags, cli), "the cli topic does not name the flag -%s, which tai parses")
	report(minus(cli, l.flags), "the cli topic names the flag -%s, which tai does not parse")
	report(minus(invokedFlags(text, flagTakesValue), l.flags), "a topic shows tai run with -%s, which tai does not parse")

	// Commands. An example command a topic or a script in scripts/
	// defines with tai.command (/greet, /note) is one.
	named := namedCommands(text)
	report(minus(l.commands, named), "no topic names the command /%s")
	report(minus(minus(named, l.commands), l.examples), "a topic names /%s, which is no command")

	// The tai module.
	lnamed := namedLua(text)
	functions := map[string]bool{}
	for n := range l.lua {
		functions[n] = true
	}
	report(minus(functions, lnamed), "no topic names %s, which the tai module has")
	gone := map[string]bool{}
	for n := range lnamed {
		if !l.lua[n] && !l.luaTables[n] && !builtinModule(n) {
			gone[n] = true
		}
	}
	report(gone, "a topic names %s, which the tai module does not have")

	// Cross-references: /help NAME names a topic, a command or search.
	for _, m := range helpRef.FindAllStringSubmatch(text, -1) {
		if _, ok := topics[m[1]]; !ok && !l.commands[m[1]] && m[1] != "search" {
			problems = append(problems, fmt.Sprintf("a topic says /help %s, but there is no such topic or command", m[1]))
		}
	}

	// Caps, with their values in the limits topic.
	caps := map[string]bool{}
	for _, c := range capName.FindAllString(text, -1) {
		caps[c] = true
	}
	report(minus(l.caps, caps), "no topic names the cap %s (mcp/wire.go)")
	report(minus(caps, l.caps), "a topic names the cap %s, which mcp/wire.go does not declare")
	for c := range l.caps {
		v, ok := l.capValues[c]
		if !ok {
			problems = append(problems, fmt.Sprintf("the cap %s has no value in this test's capValues: add it", c))
			continue
		}
		if !regexp.MustCompile(`(?m)^` + c + ` +` + regexp.QuoteMeta(v) + `$`).MatchString(topics["limits"]) {
			problems = append(problems, fmt.Sprintf("the limits topic does not give %s as %s", c, v))
		}
	}
	return problems
}

// minus returns what a has and b lacks.
func minus(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		if !b[k] {
			out[k] = true
		}
	}
	return out
}

// TestTopicsNameWhatExists: the manual names every flag, command, Lua
// function and cap there is, and nothing that is not.
func TestTopicsNameWhatExists(t *testing.T) {
	for _, p := range topicDrift(shipped(t), liveNow(t)) {
		t.Error(p)
	}
}

// TestTopicDriftIsFound: each kind of drift, both ways, is reported by
// name.
func TestTopicDriftIsFound(t *testing.T) {
	l := liveNow(t)
	with := func(m map[string]bool, k string) map[string]bool {
		out := map[string]bool{k: true}
		for n := range m {
			out[n] = true
		}
		return out
	}
	edit := func(name, old, new string) map[string]string {
		topics := shipped(t)
		if !strings.Contains(topics[name], old) {
			t.Fatalf("the %s topic does not hold %q: the test needs a new example", name, old)
		}
		topics[name] = strings.Replace(topics[name], old, new, -1)
		return topics
	}
	add := func(name, text string) map[string]string {
		topics := shipped(t)
		topics[name] += text
		return topics
	}
	tests := []struct {
		name   string
		topics map[string]string
		l      live
		want   string
	}{
		{"a new flag", shipped(t), live{with(l.flags, "sandbox"), l.commands, l.lua, l.caps, l.luaTables, l.examples, l.capValues}, "does not name the flag -sandbox"},
		{"a flag gone from cli", edit("cli", "`--clean`", "clean"), l, "does not name the flag -clean"},
		{"a flag named that is not", add("cli", "`--turbo` makes it fast\n"), l, "names the flag -turbo"},
		{"a flag used that is not", add("vault", "    tai --frobnicate -e 'x'\n"), l, "tai run with -frobnicate"},
		{"a new command", shipped(t), live{l.flags, with(l.commands, "teleport"), l.lua, l.caps, l.luaTables, l.examples, l.capValues}, "names the command /teleport"},
		{"a command named that is not", add("repl", "`/teleport HOST` moves you\n"), l, "names /teleport, which is no command"},
		{"a new function", shipped(t), live{l.flags, l.commands, with(l.lua, "tai.vault.shred"), l.caps, l.luaTables, l.examples, l.capValues}, "no topic names tai.vault.shred"},
		{"a function named that is not", add("api", "tai.vault.shred(name)\n"), l, "names tai.vault.shred, which"},
		{"a function gone from the topics", edit("api", "tai.vault.sealed()", "the seal's state"), l, "no topic names tai.vault.sealed"},
		{"a new cap", shipped(t), live{l.flags, l.commands, l.lua, with(l.caps, "MCP_MAX_PROMPTS"), l.luaTables, l.examples, l.capValues}, "MCP_MAX_PROMPTS has no value"},
		{"a cap named that is not", add("servers", "at most MCP_MAX_PROMPTS prompts\n"), l, "names the cap MCP_MAX_PROMPTS, which"},
		{"a reference to no topic", add("vault", "see /help vaults\n"), l, "says /help vaults, but"},
		{"a cap's value wrong", edit("limits", "MCP_MAX_TOOLS          100", "MCP_MAX_TOOLS          200"), l, "does not give MCP_MAX_TOOLS as 100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(topicDrift(tc.topics, tc.l), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("want a problem naming %q, got:\n%s", tc.want, got)
			}
		})
	}
}

// TestNameReadersReadTheManualsForms: the readers above find the forms
// the manual uses and skip paths and module names.
func TestNameReadersReadTheManualsForms(t *testing.T) {
	cmds := namedCommands("run `/mcp add URL`, then (/help) or\ntai:default> /profile use x\nnot /proc/1/cmdline, /tmp, `/c` nor http://h/mcp\n")
	if want := map[string]bool{"mcp": true, "help": true, "profile": true}; fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Errorf("commands = %v, want %v", cmds, want)
	}
	flags := invokedFlags("    tai --auto -p \"x\" --yolo\n`tai --profile NAME --clean` and `tai --serve-mcp - < k`, tai scripts/x.lua --enable\n", flagTakesValue)
	if want := map[string]bool{"auto": true, "p": true, "yolo": true, "profile": true, "clean": true, "serve-mcp": true}; fmt.Sprint(flags) != fmt.Sprint(want) {
		t.Errorf("flags = %v, want %v", flags, want)
	}
	names := namedLua("`tai.vault.seal()`, require(\"tai.repl\"), meta/tai.lua, tai.json.null and tai.mcp.call{…}")
	if want := map[string]bool{"tai.vault.seal": true, "tai.json.null": true, "tai.mcp.call": true}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("Lua names = %v, want %v", names, want)
	}
}
