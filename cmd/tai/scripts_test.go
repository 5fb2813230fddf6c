package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNpx puts an npx on a PATH it returns that starts this test binary's
// MCP server, so configs naming npx verify for real.
func fakeNpx(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q -test.run=^$\n", mcpServerEnv, exe)
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

func withPath(vars []string, path string) []string {
	out := make([]string, 0, len(vars))
	for _, v := range vars {
		if !strings.HasPrefix(v, "PATH=") {
			out = append(out, v)
		}
	}
	return append(out, "PATH="+path)
}

// repoScript is the absolute path of one of the repository's scripts (tai
// runs in the test's own folder).
func repoScript(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "scripts", name))
	if err != nil {
		panic(err)
	}
	return p
}

// copyFixture copies testdata/import/name to dst, creating its folder.
func copyFixture(t *testing.T, name, dst string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestScriptImportServers runs scripts/import-servers.lua on configs of
// five clients, as their documentation shows them, each kept where that
// client keeps it under HOME: with no argument it imports them all,
// reporting each file, what was added (the npx servers, which verify) and
// what was refused (the python ones, whose programs do not exist), then
// skips them all on a second run; a client or a file may be named.
func TestScriptImportServers(t *testing.T) {
	e := newEnv(t)
	places := map[string]string{
		"001-claude-desktop-memory.json":                     filepath.Join(e.config, "Claude", "claude_desktop_config.json"),
		"118-cursor-interpolation-workspacefolder-env.json":  filepath.Join(e.root, ".cursor", "mcp.json"),
		"005-vscode-filesystem-workspacefolder.json":         filepath.Join(e.config, "Code", "User", "mcp.json"),
		"022-codex-toml-playwright.toml":                     filepath.Join(e.root, ".codex", "config.toml"),
		"062-gemini-settings-cwd-dollar-and-braced-env.json": filepath.Join(e.root, ".gemini", "settings.json"),
	}
	for name, dst := range places {
		copyFixture(t, name, dst)
	}
	vars := withPath(e.vars(), fakeNpx(t))
	r := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), "--enable")
	for _, want := range []string{
		places["001-claude-desktop-memory.json"], "added    memory", "enabled  memory for profile ollama",
		places["005-vscode-filesystem-workspacefolder.json"], "added    filesystem",
		places["022-codex-toml-playwright.toml"], "added    playwright",
		places["118-cursor-interpolation-workspacefolder-env.json"], "refused  local-server: ", "needs ${API_KEY}",
		places["062-gemini-settings-cwd-dollar-and-braced-env.json"], "refused  pythontools: ", "needs ${EXTERNAL_API_KEY}",
		"claude-code: import: no claude-code config found",
		"3 added, 0 skipped (already there), 2 refused",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d: stdout lacks %q\nstdout:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
		}
	}
	if r.status != 1 {
		t.Fatalf("status %d with servers refused, want 1", r.status)
	}
	list := e.run(t, "-e", `for _, s in ipairs(assert(tai.mcp.list())) do print(s.name, s.enabled) end`)
	for _, want := range []string{"memory\ttrue", "filesystem\ttrue", "playwright\ttrue"} {
		if !strings.Contains(list.stdout, want) {
			t.Fatalf("tai.mcp.list lacks %q:\n%s%s", want, list.stdout, list.stderr)
		}
	}
	if strings.Contains(list.stdout, "local-server") || strings.Contains(list.stdout, "pythontools") {
		t.Fatalf("a refused server was stored:\n%s", list.stdout)
	}
	again := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), "claude-desktop", "vscode", "codex")
	if again.status != 0 || !strings.Contains(again.stdout, "0 added, 3 skipped") {
		t.Fatalf("second run: status %d\n%s%s", again.status, again.stdout, again.stderr)
	}
	file := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), places["001-claude-desktop-memory.json"])
	if file.status != 0 || !strings.Contains(file.stdout, "skipped  memory") {
		t.Fatalf("a file named: status %d\n%s%s", file.status, file.stdout, file.stderr)
	}
	if bad := e.runEnv(t, vars, repoScript("import-servers.lua"), "--bogus"); bad.status != 2 || !strings.Contains(bad.stderr, "usage:") {
		t.Fatalf("bad flag: status %d, %s", bad.status, bad.stderr)
	}
	if none := newEnv(t).run(t, repoScript("import-servers.lua")); none.status != 1 || !strings.Contains(none.stderr, "no config file found") {
		t.Fatalf("no config anywhere: status %d, %s%s", none.status, none.stdout, none.stderr)
	}
}

// TestScriptAddServers runs scripts/add-servers.lua on a JSON and a TOML
// file with --profile: both are added and enabled for that profile only;
// without --profile, for the current one; a profile that does not exist
// is refused before anything is added.
func TestScriptAddServers(t *testing.T) {
	e := newEnv(t)
	js := filepath.Join(e.root, "servers.json")
	toml := filepath.Join(e.root, "more.toml")
	if err := os.WriteFile(js, []byte(`{"mcpServers": {"one": {"command": "npx", "args": ["one"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, []byte("[mcp_servers.two]\ncommand = \"npx\"\nargs = [\"two\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "-e", `assert(tai.profiles.save{name = "work", provider = "openai", model = "m", key_env = "WORK_KEY"})`); r.status != 0 {
		t.Fatalf("saving the profile: %d %s", r.status, r.stderr)
	}
	vars := withPath(e.vars(), fakeNpx(t))
	if bad := e.runEnv(t, vars, "--yolo", repoScript("add-servers.lua"), "--profile", "wrok", js); bad.status != 2 || !strings.Contains(bad.stderr, "wrok") {
		t.Fatalf("unknown profile: status %d\n%s%s", bad.status, bad.stdout, bad.stderr)
	}
	r := e.runEnv(t, vars, "--yolo", repoScript("add-servers.lua"), "--profile", "work", js, toml)
	for _, want := range []string{"added one", "added two", "  enabled for work", "one              stdio 1 tools, enabled for: work", "two              stdio 1 tools, enabled for: work"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d: stdout lacks %q:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
		}
	}
	if r.status != 0 {
		t.Fatalf("status %d", r.status)
	}
	three := filepath.Join(e.root, "three.json")
	if err := os.WriteFile(three, []byte(`{"mcpServers": {"three": {"command": "npx", "args": ["three"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// No key is set, so the current profile is the local Ollama one.
	r = e.runEnv(t, vars, "--yolo", repoScript("add-servers.lua"), three, js)
	if r.status != 0 || !strings.Contains(r.stdout, "three            stdio 1 tools, enabled for: ollama") || !strings.Contains(r.stdout, "skipped one") {
		t.Fatalf("status %d:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
}
