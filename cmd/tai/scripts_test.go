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

// TestScriptImportServers runs scripts/import-servers.lua on a Claude
// Desktop config kept where Claude Desktop keeps it.
func TestScriptImportServers(t *testing.T) {
	e := newEnv(t)
	cfg := filepath.Join(e.config, "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := withPath(e.vars(), fakeNpx(t))
	r := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), "claude-desktop", "--enable")
	if r.status != 0 || !strings.Contains(r.stdout, "added    memory") || !strings.Contains(r.stdout, "enabled  memory") ||
		!strings.Contains(r.stdout, "1 added, 0 skipped") {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	again := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), "claude-desktop")
	if again.status != 0 || !strings.Contains(again.stdout, "0 added, 1 skipped") {
		t.Fatalf("second run: status %d\n%s%s", again.status, again.stdout, again.stderr)
	}
	if bad := e.runEnv(t, vars, repoScript("import-servers.lua")); bad.status != 2 || !strings.Contains(bad.stderr, "usage:") {
		t.Fatalf("no argument: status %d, %s", bad.status, bad.stderr)
	}
}

// TestScriptAddServers runs scripts/add-servers.lua on a JSON and a TOML
// file.
func TestScriptAddServers(t *testing.T) {
	e := newEnv(t)
	js := filepath.Join(e.root, "servers.json")
	toml := filepath.Join(e.root, "more.toml")
	if err := os.WriteFile(js, []byte(`{"mcpServers": {"one": {"command": "npx", "args": ["one"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, []byte("[mcp_servers.two]\ncommand = \"npx\"\nargs = [\"two\"]\nenabled = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.runEnv(t, withPath(e.vars(), fakeNpx(t)), "--yolo", repoScript("add-servers.lua"), js, toml)
	// No key is set, so the profile adding them is the local Ollama one.
	for _, want := range []string{"added one", "added two", "enabled for: none", "enabled for: ollama"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d: stdout lacks %q:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
		}
	}
	if r.status != 0 {
		t.Fatalf("status %d", r.status)
	}
}
