package bridge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// npxConfig writes a stand-in npx (a shell script running body) into a
// temp folder and returns a Claude Desktop config running it from PATH,
// as a person's config runs npx, with the test server's variables.
func npxConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "npx"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The server the stand-in runs is the test binary: the sandbox grants
	// its folder, as it grants a real npx its cache.
	entry := map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-memory"},
		"env":     map[string]string{serverEnv: "1", "PATH": dir + ":/usr/bin:/bin"},
		"sandbox": map[string]any{"read": []string{filepath.Dir(exe)}}}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
	return string(b)
}

// A server npx starts runs through the sandbox keeper like any other:
// the launcher prints its progress, then runs the server, which is added.
func TestAddNpxUnderSandbox(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, tool.Yolo, "")
	src := npxConfig(t, fmt.Sprintf("echo 'npm http fetch GET 200 https://registry.npmjs.org/@modelcontextprotocol%%2fserver-memory 812ms' >&2\nexec '%s' -test.run='^$'", exe))
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added || len(rep.Servers[0].Tools) == 0 {
		t.Fatalf("add: %+v", rep)
	}
}

// A stand-in npx that shows no sign of work and never answers is given up
// on at the connect cap under the sandbox too, and the refusal says what
// happened, that nothing was stored, and how to try again; the vault has
// no row for it.
func TestAddQuietNpxRefused(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.b.opts.Client = &mcp.ClientOptions{ConnectTimeout: time.Second}
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: npxConfig(t, "exec sleep 3600")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Outcome != Refused {
		t.Fatalf("add: %+v", rep)
	}
	mustContain(t, "the refusal", rep.Servers[0].Reason,
		"nothing stored", `mcp server "memory": npx showed no sign of work`,
		// with the server's own npm cache, which a run by hand fills for it
		"`npm_config_cache="+screen.Quote(filepath.Join(sandbox.StateDir("memory", mcp.SafeEnv()), "cache", "npm"))+" npx -y @modelcontextprotocol/server-memory` in a terminal",
		"(to add it once more: the same paste, /mcp add")
	list, err := f.b.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
		}
		t.Fatalf("a refused add stored %s", strings.Join(names, ", "))
	}
}
