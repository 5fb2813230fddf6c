//go:build interop

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sandboxedServers runs lua under tai --yolo -e with a throwaway home
// (HOME) and vault, with the pinned node first on PATH, and returns what
// it printed.
func sandboxedServers(t *testing.T, home, lua string) string {
	t.Helper()
	return sandboxedServersIn(t, home, home, lua)
}

// sandboxedServersIn is sandboxedServers with tai started in dir.
func sandboxedServersIn(t *testing.T, home, dir, lua string) string {
	t.Helper()
	root, node := nodeModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	e := newEnv(t)
	cmd := exec.CommandContext(ctx, taiBin, "--yolo", "-e", lua)
	cmd.Env = append(e.vars(), "HOME="+home,
		"PATH="+filepath.Dir(node)+":"+filepath.Join(root, ".bin")+":/usr/bin:/bin")
	if ca, ok := os.LookupEnv("NODE_EXTRA_CA_CERTS"); ok {
		cmd.Env = append(cmd.Env, "NODE_EXTRA_CA_CERTS="+ca) // a registry behind a proxy of its own
	}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// TestInteropSandboxedFilesystemServer: server-filesystem, started through
// tai's sandbox with a folder granted, reads it and is refused elsewhere,
// a link out of it included.
func TestInteropSandboxedFilesystemServer(t *testing.T) {
	root, node := nodeModules(t)
	home := t.TempDir()
	data := filepath.Join(home, "data")
	for f, body := range map[string]string{filepath.Join(data, "a.txt"): "granted text", filepath.Join(home, "secret.txt"): "SECRET"} {
		os.MkdirAll(filepath.Dir(f), 0o700)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, "secret.txt"), filepath.Join(data, "link.txt")); err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(root, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	out := sandboxedServers(t, home, fmt.Sprintf(`
local cfg = [==[{"mcpServers":{"fs":{"command":%q,"args":[%q,%q]}}}]==]
assert(tai.mcp.add{source = cfg}) assert(tai.mcp.enable{server = "fs"})
for _, p in ipairs{%q, %q, %q} do
  local r = assert(tai.mcp.call{server = "fs", tool = "read_text_file", args = {path = p}})
  print(p, r.isError and "refused" or "read", r.content[1].text)
end`, node, server, data, filepath.Join(data, "a.txt"), filepath.Join(home, "secret.txt"), filepath.Join(data, "link.txt")))
	if !strings.Contains(out, "read\tgranted text") {
		t.Errorf("the granted folder could not be read:\n%s", out)
	}
	if strings.Contains(out, "SECRET") || strings.Count(out, "refused") != 2 {
		t.Errorf("the server read outside its folder:\n%s", out)
	}
}

// TestInteropFilesystemDotReadsItsFolder: server-filesystem given "." (a
// common README line), with no cwd, started by tai in a project folder,
// reads that folder and nothing above it: its sandbox grants the project,
// resolved, and neither the home folder above it nor the ssh keys.
func TestInteropFilesystemDotReadsItsFolder(t *testing.T) {
	root, node := nodeModules(t)
	home := t.TempDir()
	project := filepath.Join(home, "work", "proj")
	for f, body := range map[string]string{filepath.Join(project, "a.txt"): "project text",
		filepath.Join(home, "work", "above.txt"): "ABOVE", filepath.Join(home, ".ssh", "id_ed25519"): "SECRET KEY"} {
		os.MkdirAll(filepath.Dir(f), 0o700)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	server := filepath.Join(root, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	out := sandboxedServersIn(t, home, project, fmt.Sprintf(`
local cfg = [==[{"mcpServers":{"fs":{"command":%q,"args":[%q,"."]}}}]==]
assert(tai.mcp.add{source = cfg}) assert(tai.mcp.enable{server = "fs"})
for _, s in ipairs(assert(tai.mcp.list())) do print("sandbox", s.sandbox) end
for _, p in ipairs{"a.txt", %q, %q, %q} do
  local r = assert(tai.mcp.call{server = "fs", tool = "read_text_file", args = {path = p}})
  print(p, r.isError and "refused" or "read", r.content[1].text)
end`, node, server, filepath.Join(project, "a.txt"), filepath.Join(home, "work", "above.txt"), filepath.Join(home, ".ssh", "id_ed25519")))
	if strings.Count(out, "read\tproject text") != 2 {
		t.Errorf("the project folder could not be read:\n%s", out)
	}
	if strings.Contains(out, "ABOVE") || strings.Contains(out, "SECRET") || strings.Count(out, "refused") != 2 {
		t.Errorf("the server read above its folder:\n%s", out)
	}
	if !strings.Contains(out, "~/work/proj") || strings.Contains(out, "reads: everything") {
		t.Errorf("the sandbox line does not name the project folder:\n%s", out)
	}
}

// TestInteropSandboxedNpxServers: server-memory and server-everything,
// started with npx -y through tai's sandbox, work as they do without it;
// each npx installs into a cache of its own, in its server's state folder,
// on its first start (from the registry, within the start-up rule for
// launchers), and the person's npm cache is left alone.
func TestInteropSandboxedNpxServers(t *testing.T) {
	home := t.TempDir()
	ca := ""
	if os.Getenv("NODE_EXTRA_CA_CERTS") != "" {
		ca = `,"env":{"NODE_EXTRA_CA_CERTS":"${NODE_EXTRA_CA_CERTS}"}`
	}
	out := sandboxedServers(t, home, fmt.Sprintf(`
local cfg = [==[{"mcpServers":{
  "mem":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory@2026.8.31"]%[1]s},
  "ev":{"command":"npx","args":["-y","@modelcontextprotocol/server-everything@2026.8.31"]%[1]s}}}]==]
for _, s in ipairs(assert(tai.mcp.add{source = cfg}).servers) do print(s.server, s.outcome, s.reason) end
assert(tai.mcp.enable{server = "mem"}) assert(tai.mcp.enable{server = "ev"})
assert(tai.mcp.call{server = "mem", tool = "create_entities", args = {entities = {{name = "tai", entityType = "program", observations = {"sandboxed"}}}}})
print("graph", assert(tai.mcp.call{server = "mem", tool = "read_graph", args = {}}).content[1].text)
print("echo", assert(tai.mcp.call{server = "ev", tool = "echo", args = {message = "through the sandbox"}}).content[1].text)`, ca))
	for _, want := range []string{"mem\tadded", "ev\tadded", `"sandboxed"`, "Echo: through the sandbox"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
	for _, server := range []string{"mem", "ev"} {
		if m, _ := filepath.Glob(filepath.Join(home, ".local", "state", "tai", "servers", server, "cache", "npm", "_npx", "*")); len(m) == 0 {
			t.Errorf("npx installed nothing into %s's own npm cache", server)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".npm")); !os.IsNotExist(err) {
		t.Errorf("a sandboxed npx used the person's npm cache: %v", err)
	}
}
