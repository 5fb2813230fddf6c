package lua

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	glua "github.com/yuin/gopher-lua"

	"tai/vault"
)

type testHost struct {
	*Host
	out, errOut *bytes.Buffer
	config      string
}

// newHost builds a host whose config folder is a fresh temp dir holding
// files (relative path → content).
func newHost(t testing.TB, opts Options, files map[string]string) *testHost {
	t.Helper()
	th := &testHost{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, config: t.TempDir()}
	for rel, content := range files {
		p := filepath.Join(th.config, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.ConfigDir = th.config
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	opts.Stdout, opts.Stderr = th.out, th.errOut
	h, err := New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	th.Host = h
	return th
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestTaiIsGlobalAndRequirable(t *testing.T) {
	h := newHost(t, Options{Version: "9.9"}, nil)
	got, err := h.DoString(ctxT(t), `return require("tai") == tai, tai.version, tai.profile`, "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{true, "9.9", "default"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestUserStateHasFullLibrary(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got, err := h.DoString(ctxT(t), `return type(io.open), type(os.execute), type(debug.traceback), type(dofile)`, "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"function", "function", "function", "function"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDeadlineStopsRunningScript(t *testing.T) {
	h := newHost(t, Options{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := h.DoString(ctx, `while true do end`, "loop")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	// The state stays usable afterwards.
	got, err := h.DoString(ctxT(t), `return 1`, "after")
	if err != nil || !reflect.DeepEqual(got, []any{int64(1)}) {
		t.Fatalf("after the deadline: %v, %v", got, err)
	}
}

// startedHost returns a host with a Go function started() that closes the
// returned channel, so a test can interrupt a script once it is running.
func startedHost(t *testing.T) (*testHost, chan struct{}) {
	h := newHost(t, Options{}, nil)
	started := make(chan struct{})
	h.L.SetGlobal("started", h.L.NewFunction(func(L *glua.LState) int {
		close(started)
		return 0
	}))
	return h, started
}

func TestInterruptStopsRunningScript(t *testing.T) {
	h, started := startedHost(t)
	go func() {
		<-started
		h.Interrupt()
	}()
	_, err := h.DoString(ctxT(t), `started() while true do end`, "loop")
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", err)
	}
	if h.Interrupt() {
		t.Fatal("Interrupt reported a run after the run ended")
	}
}

func TestProtectStopsOnlyTheInnerFunction(t *testing.T) {
	h, started := startedHost(t)
	go func() {
		<-started
		h.Interrupt()
	}()
	got, err := h.DoString(ctxT(t), `
		local ok, err = tai.term.protect(function() started() while true do end end)
		return ok, err, "outer still runs"`, "protect")
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{false, "interrupted", "outer still runs"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestProtectReturnsResultsAndTracebacks(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got, err := h.DoString(ctxT(t), `
		local a = {tai.term.protect(function(x, y) return x + y, "ok" end, 2, 3)}
		local ok, err = tai.term.protect(function() error("bad thing") end)
		return a[1], a[2], a[3], ok, err`, "protect")
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != true || got[1] != int64(5) || got[2] != "ok" || got[3] != false {
		t.Fatalf("got %v", got)
	}
	msg := got[4].(string)
	if !strings.Contains(msg, "bad thing") || !strings.Contains(msg, "stack traceback:\n\t[Go]: in function 'error'\n\tprotect:3:") {
		t.Fatalf("error lacks message or traceback: %q", msg)
	}
	if strings.Contains(msg, "'protect'") {
		t.Fatalf("traceback runs past the protected call into its caller: %q", msg)
	}
}

func TestErrorsCarryTraceback(t *testing.T) {
	h := newHost(t, Options{}, nil)
	_, err := h.DoString(ctxT(t), "local function deep()\n  local t = nil\n  return t.x\nend\ndeep()\n", "script.lua")
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("got %T %v, want *Error", err, err)
	}
	if !strings.Contains(le.Message, "script.lua:3:") {
		t.Errorf("message %q lacks the position", le.Message)
	}
	for _, want := range []string{"stack traceback:", "script.lua:3: in function 'deep'", "script.lua:5:"} {
		if !strings.Contains(le.Traceback, want) {
			t.Errorf("traceback lacks %q:\n%s", want, le.Traceback)
		}
	}
}

func TestLoaderPrecedence(t *testing.T) {
	files := map[string]string{
		"lua/inspect.lua":  `return function() return "user inspect" end`,
		"lua/mine.lua":     `return {name = "mine"}`,
		"lua/deep/mod.lua": `return "deep"`,
	}
	tests := []struct {
		name   string
		clean  bool
		chunk  string
		want   []any
		notice bool
	}{
		{"user file beats embedded", false, `return require("inspect")({})`, []any{"user inspect"}, false},
		{"user-only module", false, `return require("mine").name`, []any{"mine"}, false},
		{"dotted name is a folder", false, `return require("deep.mod")`, []any{"deep"}, false},
		{"clean uses the embedded file", true, `return require("inspect")({})`, []any{"{}"}, false},
		{"clean ignores user modules", true, `return (pcall(require, "mine"))`, []any{false}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, Options{Clean: tt.clean}, files)
			got, err := h.DoString(ctxT(t), tt.chunk, "t")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if has := strings.Contains(h.errOut.String(), "overrides the built-in inspect.lua"); has != tt.notice {
				t.Fatalf("override notice %v, want %v (stderr %q)", has, tt.notice, h.errOut.String())
			}
		})
	}
}

// TestBuiltinsAreTaiModules: the built-ins are tai.x. A user's module
// that happens to share a built-in's name is loaded for the user's own
// require and never replaces what tai runs (noted once, in case it was
// meant as an override); lua/tai/x.lua replaces tai.x on purpose, and so
// does the documented lua/repl.lua; a flat require of a built-in's name,
// old names included, is the very table tai uses.
func TestBuiltinsAreTaiModules(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		chunk  string
		want   []any
		notice string
	}{
		{"a module of one's own named like a built-in", map[string]string{"lua/chat.lua": `return {mine = true}`},
			`return require("chat").mine, require("tai.chatview").mine, type(require("tai.chatview").tool_line)`,
			[]any{true, nil, "function"}, "lua/chat.lua is a module of your own, not the built-in chatview.lua"},
		{"lua/tai/x.lua replaces the built-in", map[string]string{"lua/tai/inspect.lua": `return function() return "user inspect" end`},
			`return require("tai.inspect")({}), require("inspect")({})`,
			[]any{"user inspect", "user inspect"}, "lua/tai/inspect.lua overrides the built-in inspect.lua"},
		{"documented flat override", map[string]string{"lua/repl.lua": `return {mine = true}`},
			`return require("tai.repl").mine, require("repl") == require("tai.repl")`,
			[]any{true, true}, "lua/repl.lua overrides the built-in repl.lua"},
		{"flat and old names are the built-ins", nil,
			`return require("chat") == require("tai.chatview"), require("mcp") == require("tai.mcpcommand"), require("context") == require("tai.context"), require("builtin.context") ~= require("tai.context")`,
			[]any{true, true, true, true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, Options{}, tt.files)
			got, err := h.DoString(ctxT(t), tt.chunk, "t")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			stderr := h.errOut.String()
			if tt.notice == "" && stderr != "" || !strings.Contains(stderr, filepath.FromSlash(tt.notice)) {
				t.Fatalf("stderr %q, want %q", stderr, tt.notice)
			}
		})
	}
}

func TestMissingModuleSaysWhereItLooked(t *testing.T) {
	h := newHost(t, Options{}, nil)
	_, err := h.DoString(ctxT(t), `require("no.such")`, "t")
	if err == nil || !strings.Contains(err.Error(), "no built-in 'stdlib/no/such.lua'") || !strings.Contains(err.Error(), filepath.Join("lua", "no", "such.lua")) {
		t.Fatalf("got %v", err)
	}
}

func TestRunModesAndInit(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.lua")
	if err := os.WriteFile(script, []byte(`print("script", arg[0] ~= nil, arg[1], select("#", ...), greeting)`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		clean    bool
		init     string
		inv      Invocation
		status   int
		out, err string
	}{
		{"eval", false, "", Invocation{Mode: ModeEval, Chunk: `print("hi", ...)`, Args: []string{"a"}}, 0, "hi\ta\n", ""},
		{"eval error", false, "", Invocation{Mode: ModeEval, Chunk: `error("nope")`}, 1, "", "(command line):1: nope"},
		{"eval syntax error", false, "", Invocation{Mode: ModeEval, Chunk: `x(`}, 1, "", "(command line)"},
		{"script with args", false, "", Invocation{Mode: ModeScript, Script: script, Args: []string{"x", "y"}}, 0, "script\ttrue\tx\t2\tnil\n", ""},
		{"init runs first", false, `greeting = "hello"`, Invocation{Mode: ModeScript, Script: script}, 0, "script\ttrue\tnil\t0\thello\n", ""},
		{"clean skips init", true, `greeting = "hello"`, Invocation{Mode: ModeScript, Script: script}, 0, "script\ttrue\tnil\t0\tnil\n", ""},
		{"broken init is reported, run goes on", false, `error("init broke")`, Invocation{Mode: ModeEval, Chunk: `print("still")`}, 0, "still\n", "init broke"},
		{"exit status from main", false, "", Invocation{Mode: ModeEval, Chunk: `x = 1`}, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			if tt.init != "" {
				files["init.lua"] = tt.init
			}
			h := newHost(t, Options{Clean: tt.clean}, files)
			status := h.Run(ctxT(t), tt.inv)
			if status != tt.status {
				t.Fatalf("status %d, want %d (stderr %q)", status, tt.status, h.errOut.String())
			}
			if h.out.String() != tt.out {
				t.Errorf("stdout %q, want %q", h.out.String(), tt.out)
			}
			if !strings.Contains(h.errOut.String(), tt.err) {
				t.Errorf("stderr %q lacks %q", h.errOut.String(), tt.err)
			}
			// A run-time error shows the traceback of the user's code only; a
			// chunk that does not compile has none, and no tai file is named.
			if has := strings.Contains(h.errOut.String(), "stack traceback:"); tt.status == 1 && has == strings.Contains(tt.name, "syntax") {
				t.Errorf("traceback shown %v for %s: %q", has, tt.name, h.errOut.String())
			}
			if strings.Contains(h.errOut.String(), "stdlib/") {
				t.Errorf("stderr names tai's own files: %q", h.errOut.String())
			}
		})
	}
}

func TestRunInterruptedExitStatus(t *testing.T) {
	h, started := startedHost(t)
	go func() {
		<-started
		h.Interrupt()
	}()
	if status := h.Run(ctxT(t), Invocation{Mode: ModeEval, Chunk: `started() while true do end`}); status != ExitInterrupted {
		t.Fatalf("status %d, want %d", status, ExitInterrupted)
	}
}

func TestCommands(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got, err := h.DoString(ctxT(t), `
		tai.command("/hello", function(rest, words) return "hi " .. rest .. #words end, "says hi",
			function(word) return {"alpha", "beta"} end)
		tai.command("bye", function() end)
		local list = tai.commands()
		return #list, list[1].name, list[2].name, list[2].help, list[2].fn("a b", {"a", "b"}), type(list[2].complete), list[1].complete == nil`, "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(2), "bye", "hello", "says hi", "hi a b2", "function", true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if names := h.Commands(); !reflect.DeepEqual(names, []string{"bye", "hello"}) {
		t.Fatalf("Commands() = %v", names)
	}
	for _, bad := range []string{`tai.command("", print)`, `tai.command("a b", print)`, `tai.command("x")`, `tai.command("x", print, "h", 5)`} {
		if _, err := h.DoString(ctxT(t), bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
}

func openTestVault(t testing.TB, passphrase string) func() (*vault.Store, error) {
	path := filepath.Join(t.TempDir(), "vault.db")
	return func() (*vault.Store, error) {
		return vault.Open(path, &vault.Options{Passphrase: func() (string, error) { return passphrase, nil }})
	}
}

func TestVaultBinding(t *testing.T) {
	h := newHost(t, Options{Vault: openTestVault(t, "pw"), Passphrase: func() (string, error) { return "pw", nil }}, nil)
	ctx := ctxT(t)
	run := func(chunk string) []any {
		t.Helper()
		got, err := h.DoString(ctx, chunk, "t")
		if err != nil {
			t.Fatalf("%s: %v", chunk, err)
		}
		return got
	}
	if got := run(`return tai.vault.secret_set("gh", "tok-123", {scope = "repo"})`); got[0] != true {
		t.Fatalf("secret_set: %v", got)
	}
	if got := run(`return tai.vault.secret_get("gh")`); !reflect.DeepEqual(got, []any{"tok-123", map[string]any{"scope": "repo"}}) {
		t.Fatalf("secret_get: %v", got)
	}
	if got := run(`local l = tai.vault.secret_list() return #l, l[1].name, l[1].meta.scope, type(l[1].updated), l[1].value`); !reflect.DeepEqual(got, []any{int64(1), "gh", "repo", "string", nil}) {
		t.Fatalf("secret_list: %v", got)
	}
	if got := run(`return tai.vault.secret_get("missing")`); got[0] != nil || !strings.Contains(got[1].(string), "not found") {
		t.Fatalf("missing secret: %v", got)
	}
	got := run(`
		local a = tai.vault.record_put("first record", {tool = "x"})
		local b = tai.vault.record_put("second")
		local text, rec = tai.vault.record_get(a, 6, 3)
		local all = tai.vault.record_get(b)
		local list = tai.vault.record_list(10)
		return text, rec.size, rec.meta.tool, all, #list, list[1].id == b, list[2].id == a`)
	if want := []any{"rec", int64(12), "x", "second", int64(2), true, true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("records: got %v, want %v", got, want)
	}
	got = run(`
		local id = tai.vault.record_put("to be deleted")
		local ok = tai.vault.record_delete(id)
		local text, err = tai.vault.record_get(id)
		local again, err2 = tai.vault.record_delete(id)
		return ok, text, err ~= nil and err:match("deleted") ~= nil, again, err2 ~= nil, #tai.vault.record_list(10)`)
	if want := []any{true, nil, true, nil, true, int64(2)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("record_delete: got %v, want %v", got, want)
	}
	if got := run(`return tai.vault.secret_delete("gh"), (tai.vault.secret_get("gh"))`); !reflect.DeepEqual(got, []any{true, nil}) {
		t.Fatalf("secret_delete: %v", got)
	}
	if got := run(`return tai.vault.audit_verify()`); got[0] == nil {
		t.Fatalf("audit_verify: %v", got)
	}
	if got := run(`return type(tai.vault.audit_tail(5)), type(tai.vault.audit_tail(5, "secret"))`); !reflect.DeepEqual(got, []any{"table", "table"}) {
		t.Fatalf("audit_tail: %v", got)
	}
	if got := run(`
		local before = tai.vault.sealed()
		assert(tai.vault.secret_set("k", "v"))
		local ok, err = tai.vault.seal()
		return before, ok, err, tai.vault.sealed(), (tai.vault.secret_get("k"))`); !reflect.DeepEqual(got, []any{false, true, nil, true, "v"}) {
		t.Fatalf("seal: %v", got)
	}
	for _, bad := range []string{
		`tai.vault.secret_set("bad name", "v")`,
		`tai.vault.secret_set("n")`,
		`tai.vault.secret_set("n", "v", {1, 2})`,
		`tai.vault.record_get("r1", -1)`,
		`tai.vault.record_list(0)`,
		`tai.vault.audit_tail(-3)`,
	} {
		if _, err := h.DoString(ctx, bad, "bad"); err == nil || !strings.Contains(err.Error(), "bad argument") {
			t.Errorf("%s: got %v, want an argument error", bad, err)
		}
	}
}

func TestVaultUnavailableReturnsMessage(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got, err := h.DoString(ctxT(t), `return tai.vault.secret_list()`, "t")
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != nil || !strings.Contains(got[1].(string), "no vault") {
		t.Fatalf("got %v", got)
	}
}

func TestVaultIsOpenedLazily(t *testing.T) {
	opened := 0
	h := newHost(t, Options{Vault: func() (*vault.Store, error) {
		opened++
		return nil, errors.New("cannot open")
	}}, nil)
	if _, err := h.DoString(ctxT(t), `return tai.version`, "t"); err != nil {
		t.Fatal(err)
	}
	if opened != 0 {
		t.Fatalf("vault opened %d times before use", opened)
	}
	got, _ := h.DoString(ctxT(t), `local _, a = tai.vault.sealed() local _, b = tai.vault.sealed() return a, b`, "t")
	if opened != 1 || got[0] != "cannot open" || got[1] != "cannot open" {
		t.Fatalf("opened %d times, got %v", opened, got)
	}
}

func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		var out bytes.Buffer
		h, err := New(&Options{ConfigDir: dir, StateDir: dir, Stdout: &out, Stderr: &out})
		if err != nil {
			b.Fatal(err)
		}
		if status := h.Run(context.Background(), Invocation{Mode: ModeEval}); status != 0 {
			b.Fatalf("status %d: %s", status, out.String())
		}
		h.Close()
	}
}

func BenchmarkSandboxedChunk(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := RunSandboxed(ctx, `return 1 + 1`); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGoPanicInInterpreterIsAnError checks that a limit gopher-lua raises
// as a Go panic (registry overflow) comes back as an error and leaves the
// state usable.
func TestGoPanicInInterpreterIsAnError(t *testing.T) {
	h := newHost(t, Options{}, nil)
	_, err := h.DoString(ctxT(t), `return unpack({}, 1, 1e8)`, "t")
	if err == nil || !strings.Contains(err.Error(), "registry overflow") {
		t.Fatalf("got %v, want an error naming the registry overflow", err)
	}
	got, err := h.DoString(ctxT(t), `local t = {} for i = 1, 100 do t[i] = i end return #t, select("#", unpack(t))`, "t")
	if err != nil || !reflect.DeepEqual(got, []any{int64(100), int64(100)}) {
		t.Fatalf("after the overflow: got %v, %v", got, err)
	}
}
