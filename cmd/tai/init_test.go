package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInitWritesAgentsAfterShowingIt: /init has the model write an
// AGENTS.md from the project's files, shows it, and writes it once the
// person agrees; with no model it offers a skeleton from the files and
// says so; an existing AGENTS.md is left alone.
func TestInitWritesAgentsAfterShowingIt(t *testing.T) {
	e := newEnv(t)
	proj := filepath.Join(e.root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module example.com/demo\n\ngo 1.22\n"), 0o644)
	srv := llmtest.NewOpenAI(t, llmtest.Say("# AGENTS.md\n\nRun `go test ./...` before you finish.\n"))
	s := startREPLIn(t, proj, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("/init\r")
	s.expect("Run `go test ./...` before you finish.")
	s.expect("(written by the model from the project's files; read it before you keep it)")
	s.expect("AGENTS.md? [y/N] ")
	if _, err := os.Stat(filepath.Join(proj, "AGENTS.md")); err == nil {
		t.Fatal("AGENTS.md was written before the person agreed")
	}
	s.typeKeys("y")
	s.expect("(wrote " + filepath.Join(proj, "AGENTS.md"))
	s.expect("tai:default> ")
	if b, _ := os.ReadFile(filepath.Join(proj, "AGENTS.md")); !strings.Contains(string(b), "go test ./...") {
		t.Fatalf("AGENTS.md: %q", b)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].LastUser(), "module example.com/demo") {
		t.Fatalf("the model was not given the project's files")
	}
	s.typeKeys("/init\r")
	s.expect("AGENTS.md exists here; /init leaves it as it is")
	s.typeKeys("/quit\r")
	s.wait()

	// no model: a skeleton from the files, said to be one
	os.Remove(filepath.Join(proj, "AGENTS.md"))
	s = startREPLIn(t, proj, e.vars(), "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/init\r")
	s.expect("- Go: `go build ./...`, `go test ./...`")
	s.expect("(a skeleton from the project's files: no model answered")
	s.expect("AGENTS.md? [y/N] ")
	s.typeKeys("\r")
	s.expect("(nothing written)")
	s.typeKeys("/quit\r")
	s.wait()
	if _, err := os.Stat(filepath.Join(proj, "AGENTS.md")); err == nil {
		t.Fatal("AGENTS.md was written after a no")
	}
}
