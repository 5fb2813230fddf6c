//go:build interop

package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/mcp/github/githubtest"
)

// TestInteropResolveVerifyCall pastes a GitHub URL at the REPL on a
// terminal: the resolver reads the folder of the official server-memory
// through a fake contents API, the consent screen says where the entry was
// found and is the one question (y adds it enabled), the server (npx, from
// the pinned node_modules) is verified live and stored with source
// github:<owner>/<repo>, and one of its tools is called from the REPL.
func TestInteropResolveVerifyCall(t *testing.T) {
	root, node := nodeModules(t)
	api := httptest.NewServer(githubtest.Handler(filepath.Join("testdata", "repos"), nil))
	t.Cleanup(api.Close)
	e := newEnv(t)
	path := filepath.Dir(node) + string(os.PathListSeparator) + filepath.Join(root, ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	vars := append(e.vars(), "TAI_GITHUB_API="+api.URL, "PATH="+path, "GITHUB_TOKEN=")
	// npx finds the pinned package in the node_modules of the folder tai
	// (and so the server) runs in
	s := startREPLIn(t, filepath.Dir(root), vars)
	s.expect("> ")
	s.typeKeys("https://github.com/modelcontextprotocol/servers/tree/main/src/memory\r")
	s.expect("found by the deterministic pass in src/memory/")
	// the preview names the server; the consent screen says where it was
	// found, then what runs
	s.expect("from:")
	s.expect("github.com/modelcontextprotocol/servers")
	s.expect("@modelcontextprotocol/server-memory")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added memory (stdio), enabled for profile")
	s.expect("read_graph")
	// a person's own /mcp call is not put to them again
	s.typeKeys("/mcp call memory read_graph {}\r")
	s.expect(`"entities"`)
	s.typeKeys("/quit\r")
	s.wait()

	out := e.runEnv(t, vars, "-e", `for _, s in ipairs(assert(tai.mcp.list())) do print(s.name, s.source) end`)
	if !strings.Contains(out.stdout, "memory\tgithub:modelcontextprotocol/servers") {
		t.Fatalf("stored: %q %q", out.stdout, out.stderr)
	}
}
