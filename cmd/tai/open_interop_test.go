//go:build interop

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInteropOpenTheTinyImage: at the REPL, the fake model calls the
// official server-everything's get-tiny-image; the pty shows its numbered
// line, and /open 1 writes a file holding the very PNG the model got.
func TestInteropOpenTheTinyImage(t *testing.T) {
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e := newEnv(t)
	tmp := filepath.Join(e.root, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	s := startREPLWith(t, e, append(e.modelVars(srv), "TMPDIR="+tmp), "--clean")
	s.expect("tai:default> ")
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}}}}, "", "  ")
	s.typeKeys("\x1b[200~" + string(cfg) + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added everything (stdio), enabled for profile default")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("mcp_everything_get_tiny_image", `{}`)), llmtest.Say("a tiny image"))
	s.typeKeys("show me the tiny image\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y\r")
	s.expect("[image 1: png ")
	s.expect("a tiny image")
	s.expect("tai:default> ")
	s.typeKeys("/open 1\r")
	s.expect("(saved to ")
	s.expect("tai:default> ")
	m := regexp.MustCompile(`\(saved to (\S+image-1\.png)\)`).FindStringSubmatch(s.seen.String())
	if m == nil {
		t.Fatalf("no path in:\n%s", s.seen.String())
	}
	saved, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	imgs := srv.Requests()[1].Images()
	if len(imgs) != 1 || !bytes.Equal(saved, imgs[0].Data) {
		t.Fatalf("the saved file holds %d bytes; the model got %d images", len(saved), len(imgs))
	}
	s.typeKeys("\x04")
	s.wait()
}
