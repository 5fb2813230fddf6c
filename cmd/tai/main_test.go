package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/sandbox"
	"tai/lua"
	"tai/stdlib"
)

// taiBin is the binary built once for all tests in this package.
var taiBin string

func TestMain(m *testing.M) {
	// The keeper and the sandbox, for the tests that run tai in process.
	sandbox.RunKeeperIfAsked()
	lua.RunSandboxIfAsked()
	if os.Getenv(mcpServerEnv) != "" {
		os.Exit(runMCPServer()) // the test binary as an MCP server (mcp_test.go)
	}
	dir, err := os.MkdirTemp("", "tai-bin-")
	if err != nil {
		panic(err)
	}
	taiBin = filepath.Join(dir, "tai")
	build := exec.Command("go", "build", "-o", taiBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building tai: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is an isolated environment: every folder tai may touch is under root.
type env struct {
	root, config, state, data, vault string
}

func newEnv(t *testing.T) env {
	t.Helper()
	root := t.TempDir()
	e := env{
		root:   root,
		config: filepath.Join(root, "config"),
		state:  filepath.Join(root, "state"),
		data:   filepath.Join(root, "data"),
		// A folder of its own: the sandbox keeps the vault's folder from
		// every command and server, and root is where they work.
		vault: filepath.Join(root, "vault", "vault.db"),
	}
	return e
}

func (e env) vars() []string {
	return []string{
		"HOME=" + e.root,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + e.config,
		"XDG_STATE_HOME=" + e.state,
		"XDG_DATA_HOME=" + e.data,
		"TAI_VAULT=" + e.vault,
		"NO_COLOR=1",
		"TERM=xterm",
	}
}

// write puts content at a path under the user's tai config folder.
func (e env) write(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(e.config, "tai", filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type result struct {
	status         int
	stdout, stderr string
}

func (e env) run(t *testing.T, args ...string) result {
	t.Helper()
	return e.runEnv(t, e.vars(), args...)
}

func TestExitStatusAndOutput(t *testing.T) {
	e := newEnv(t)
	script := filepath.Join(e.root, "script.lua")
	if err := os.WriteFile(script, []byte(`print(arg[0] == ..., arg[1], arg[2], select("#", ...))`), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := filepath.Join(e.root, "fail.lua")
	if err := os.WriteFile(failing, []byte("local function f()\n  error('script failed')\nend\nf()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shebang := filepath.Join(e.root, "shebang.lua")
	if err := os.WriteFile(shebang, []byte("#!/usr/bin/env tai\nprint('ran')\nerror('on line 3')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name             string
		args             []string
		status           int
		stdout, stderr   string
		noStdout, noLeak string
	}{
		{name: "version", args: []string{"--version"}, status: 0, stdout: "tai 0.1.0\n"},
		{name: "help", args: []string{"--help"}, status: 0, stdout: "tai SCRIPT.lua [ARGS…]"},
		{name: "short help", args: []string{"-h"}, status: 0, stdout: "Exit status:"},
		{name: "eval", args: []string{"-e", `print(1 + 1, tai.version)`}, status: 0, stdout: "2\t0.1.0\n"},
		{name: "empty eval", args: []string{"-e", ""}, status: 0},
		{name: "eval args", args: []string{"-e", `print(...)`, "a", "b"}, status: 0, stdout: "a\tb\n"},
		{name: "eval error", args: []string{"-e", `error("kaput")`}, status: 1, stderr: "kaput", noStdout: "kaput"},
		{name: "eval syntax error", args: []string{"-e", `print(`}, status: 1, stderr: "(command line)", noLeak: "main.lua"},
		{name: "eval error names no tai file", args: []string{"-e", `error("kaput")`}, status: 1, stderr: "(command line):1: in main chunk", noLeak: "stdlib/"},
		{name: "a bare word is not a subcommand", args: []string{"help"}, status: 2, stderr: "tai --help"},
		{name: "script", args: []string{script, "x", "y"}, status: 0, stdout: "false\tx\ty\t2\n"},
		{name: "script error has traceback", args: []string{failing}, status: 1, stderr: "fail.lua:2: in function 'f'"},
		{name: "shebang line is skipped, lines still count", args: []string{shebang}, status: 1, stdout: "ran\n", stderr: "shebang.lua:3: on line 3"},
		{name: "unknown flag", args: []string{"--bogus"}, status: 2, stderr: "unknown flag -bogus"},
		{name: "prompt without a model says how to configure one", args: []string{"-p", "hi"}, status: 1, stderr: "OPENAI_API_KEY"},
		{name: "prompt and eval", args: []string{"-p", "hi", "-e", "x"}, status: 2, stderr: "-p and -e exclude each other"},
		{name: "empty prompt", args: []string{"-p", " "}, status: 2, stderr: "-p needs a prompt"},
		{name: "unquoted prompt", args: []string{"-p", "read", "the", "file"}, status: 2, stderr: "quote the whole prompt"},
		{name: "auto and yolo", args: []string{"--auto", "--yolo", "-e", ""}, status: 2, stderr: "--auto and --yolo exclude each other"},
		{name: "unknown profile", args: []string{"--profile", "nope", "-e", ""}, status: 2, stderr: `profile not found: "nope"`},
		{name: "bad profile name", args: []string{"--profile", "a b", "-e", ""}, status: 2, stderr: `--profile "a b"`},
		{name: "mode is visible to Lua", args: []string{"--auto", "-e", "print(tai.mode)"}, status: 0, stdout: "auto\n"},
		{name: "missing -e argument", args: []string{"-e"}, status: 2, stderr: "needs an argument"},
		{name: "missing script", args: []string{"nope.lua"}, status: 2, stderr: `cannot run "nope.lua"`},
		{name: "vault flag", args: []string{"--vault", "/tmp/elsewhere/v.db", "-e", `print((tai.vault.path and "x"))`}, status: 0, stdout: "x\n"},
		{name: "vault from env", args: []string{"-e", `print(tai.vault.path())`}, status: 0, stdout: e.vault + "\n"},
		{name: "secret round trip", args: []string{"-e", `assert(tai.vault.secret_set("k", "hunter2")) print((tai.vault.secret_get("k")) == "hunter2")`}, status: 0, stdout: "true\n", noLeak: "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(t, tt.args...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d\nstdout: %s\nstderr: %s", r.status, tt.status, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.stdout) {
				t.Errorf("stdout %q lacks %q", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.stderr)
			}
			if tt.noStdout != "" && strings.Contains(r.stdout, tt.noStdout) {
				t.Errorf("error went to stdout: %q", r.stdout)
			}
			if tt.noLeak != "" && strings.Contains(r.stdout+r.stderr, tt.noLeak) {
				t.Errorf("output leaks %q", tt.noLeak)
			}
			if tt.status == 1 && len(tt.args) > 0 && tt.args[0] != "-p" && !strings.Contains(tt.name, "syntax") && !strings.Contains(r.stderr, "stack traceback:") {
				t.Errorf("stderr lacks a traceback: %q", r.stderr)
			}
		})
	}
}

func TestVaultFlagPlacesTheFile(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.root, "sub", "my.db")
	r := e.run(t, "--vault", path, "-e", `print(tai.vault.path()) assert(tai.vault.record_put("x"))`)
	if r.status != 0 || r.stdout != path+"\n" {
		t.Fatalf("status %d stdout %q stderr %q", r.status, r.stdout, r.stderr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("vault file not created: %v", err)
	}
	if _, err := os.Stat(e.vault); err == nil {
		t.Fatal("TAI_VAULT was used although --vault was given")
	}
}

func TestEmptyEvalDoesNotTouchTheVault(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "-e", ""); r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	if _, err := os.Stat(e.vault); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("vault file exists after tai -e '': %v", err)
	}
}

func TestSealedVaultPassphraseFromEnv(t *testing.T) {
	e := newEnv(t)
	seal := e.run(t, "-e", `assert(tai.vault.secret_set("k", "v")) assert(tai.vault.seal()) print(tai.vault.sealed())`)
	if seal.status == 0 {
		t.Fatalf("seal without a passphrase succeeded: %q", seal.stdout)
	}
	if !strings.Contains(seal.stderr, "TAI_VAULT_PASSPHRASE") {
		t.Fatalf("seal error does not say how to give a passphrase: %q", seal.stderr)
	}
	withPass := func(pass string, chunk string) result {
		t.Helper()
		return e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE="+pass), "-e", chunk)
	}
	if r := withPass("correct horse", `assert(tai.vault.seal()) print(tai.vault.sealed())`); r.status != 0 || r.stdout != "true\n" {
		t.Fatalf("seal: %d %q %q", r.status, r.stdout, r.stderr)
	}
	if r := withPass("correct horse", `print((tai.vault.secret_get("k")))`); r.status != 0 || r.stdout != "v\n" {
		t.Fatalf("read sealed: %d %q %q", r.status, r.stdout, r.stderr)
	}
	if r := withPass("wrong", `print(tai.vault.secret_get("k"))`); r.status != 0 || !strings.Contains(r.stdout, "wrong passphrase") {
		t.Fatalf("wrong passphrase: %d %q %q", r.status, r.stdout, r.stderr)
	}
}

func (e env) runEnv(t *testing.T, vars []string, args ...string) result {
	t.Helper()
	return e.runInDir(t, e.root, vars, args...)
}

func TestDumpStdlib(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.root, "dump")
	r := e.run(t, "--dump-stdlib", dir)
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	entries, err := fs.ReadDir(stdlib.Files(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"main.lua", "repl.lua", "inspect.lua"} {
		if _, err := fs.Stat(stdlib.Files(), want); err != nil {
			t.Errorf("embedded stdlib lacks %s", want)
		}
	}
	for _, ent := range entries {
		got, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatalf("%s not dumped: %v", ent.Name(), err)
		}
		want, _ := fs.ReadFile(stdlib.Files(), ent.Name())
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the embedded file", ent.Name())
		}
		if !strings.Contains(r.stdout, ent.Name()) {
			t.Errorf("stdout does not list %s: %q", ent.Name(), r.stdout)
		}
	}
	// The LuaLS definitions go to meta/, the folder an editor is pointed at.
	want, err := fs.ReadFile(stdlib.Meta(), "meta/tai.lua")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "meta", "tai.lua"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("meta/tai.lua not dumped as embedded: %v", err)
	}
	if !strings.Contains(r.stdout, filepath.Join("meta", "tai.lua")) {
		t.Errorf("stdout does not list meta/tai.lua: %q", r.stdout)
	}
	again := e.run(t, "--dump-stdlib", dir)
	if again.status != 1 || !strings.Contains(again.stderr, "already exists") {
		t.Fatalf("second dump: status %d stderr %q, want a refusal", again.status, again.stderr)
	}
}

// TestDumpedStdlibRunsAsOverride copies the dump into the user's lua/
// folder, edits main.lua, and checks the user file wins unless --clean.
func TestDumpedStdlibRunsAsOverride(t *testing.T) {
	e := newEnv(t)
	luaDir := filepath.Join(e.config, "tai", "lua")
	if r := e.run(t, "--dump-stdlib", luaDir); r.status != 0 {
		t.Fatalf("dump: %s", r.stderr)
	}
	p := filepath.Join(luaDir, "main.lua")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "return function(inv)", "return function(inv)\n  print(\"user main\")", 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "-e", `print("chunk")`); r.stdout != "user main\nchunk\n" || !strings.Contains(r.stderr, "overrides the built-in main.lua") {
		t.Fatalf("override: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// Files left as dumped change nothing and say nothing.
	fresh := newEnv(t)
	if r := fresh.run(t, "--dump-stdlib", filepath.Join(fresh.config, "tai", "lua")); r.status != 0 {
		t.Fatalf("dump: %s", r.stderr)
	}
	if r := fresh.run(t, "-e", `require("inspect") require("chat")`); r.status != 0 || r.stderr != "" {
		t.Fatalf("unedited copies: status %d stderr %q, want no notice", r.status, r.stderr)
	}
	if r := e.run(t, "--clean", "-e", `print("chunk")`); r.stdout != "chunk\n" || r.stderr != "" {
		t.Fatalf("--clean: stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestInitLuaRunsUnlessClean(t *testing.T) {
	e := newEnv(t)
	e.write(t, "init.lua", `greeting = "from init"`)
	if r := e.run(t, "-e", `print(greeting)`); r.stdout != "from init\n" {
		t.Fatalf("init: %q %q", r.stdout, r.stderr)
	}
	if r := e.run(t, "--clean", "-e", `print(greeting)`); r.stdout != "nil\n" {
		t.Fatalf("--clean: %q %q", r.stdout, r.stderr)
	}
}

func TestScriptCanLoadUserModules(t *testing.T) {
	e := newEnv(t)
	e.write(t, "lua/helpers.lua", `return {twice = function(x) return 2 * x end}`)
	if r := e.run(t, "-e", `print(require("helpers").twice(21))`); r.stdout != "42\n" {
		t.Fatalf("got %q %q", r.stdout, r.stderr)
	}
}
