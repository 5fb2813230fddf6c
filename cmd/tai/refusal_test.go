package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/engine/sandbox"
)

// TestShellRefusalFitsThreeLines: a shell command the sandbox refused
// says so in its result in at most three lines, the way to allow it
// first, then what was refused.
func TestShellRefusalFitsThreeLines(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	e := newEnv(t)
	key := filepath.Join(e.root, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", `{"command":"cat ~/.ssh/id_ed25519"}`)), llmtest.Say("done reading"))
	s := startREPLWith(t, e, e.modelVars(srv), "--clean", "--yolo")
	s.expect("> ")
	s.typeKeys("read my key\r")
	s.expect("done reading")
	s.typeKeys("\x04")
	s.wait()
	screen := s.seen.String()
	var result string
	for _, req := range srv.Requests() {
		for _, r := range req.ToolResults() {
			result += r.Text
		}
	}
	var refusal []string
	for _, l := range strings.Split(result, "\n") {
		if strings.Contains(l, "[sandbox]") {
			refusal = append(refusal, l)
		}
	}
	if len(refusal) == 0 || len(refusal) > 3 {
		t.Fatalf("the refusal takes %d lines:\n%s", len(refusal), result)
	}
	if !strings.Contains(refusal[0], "to allow it") || !strings.Contains(refusal[len(refusal)-1], "refused this command access to ~/.ssh/id_ed25519") {
		t.Errorf("the fix is not first, or what was refused not said:\n%s", strings.Join(refusal, "\n"))
	}
	if strings.Contains(screen, "PRIVATE KEY") {
		t.Error("the key was read")
	}
}

// TestServerRefusalAndMCPAllow: a stored server the sandbox refuses a
// file as it starts says so at the REPL in at most three lines: the
// path, the server, /mcp allow and the exact line for the entry's
// sandbox; /mcp allow asks again with the new sandbox line, and the
// server then starts and answers.
func TestServerRefusalAndMCPAllow(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	e := newEnv(t)
	data := filepath.Join(e.root, "settings", "echoer.json")
	if err := os.MkdirAll(filepath.Dir(data), 0o700); err != nil {
		t.Fatal(err)
	}
	s := startREPL(t, e, "--clean")
	s.expect("> ")
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: "1", mcpNeedsEnv: data})
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y")
	s.expect("added echoer")
	s.expect("> ")
	// The file the server reads appears; the server starts again.
	if err := os.WriteFile(data, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.typeKeys("/mcp disable echoer\r")
	s.expect("disabled for profile")
	s.typeKeys("/mcp enable echoer\r")
	s.expect("enabled for profile")
	start := s.seen.Len()
	s.typeKeys(`/mcp call echoer echo {"text": "hi"}` + "\r")
	s.expect(`"sandbox": {"read":["~/settings/echoer.json"]}`)
	s.expect("> ")
	shown := s.seen.String()[start:]
	var lines []string
	for _, l := range strings.Split(shown, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "tai:ollama>") && !strings.Contains(l, "/mcp call echoer") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		t.Errorf("the refusal takes %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, want := range []string{"tai's sandbox refused ~/settings/echoer.json to mcp server echoer", "/mcp allow echoer ~/settings/echoer.json"} {
		if !strings.Contains(shown, want) {
			t.Errorf("%q not shown:\n%s", want, shown)
		}
	}
	s.typeKeys("/mcp allow echoer ~/settings/echoer.json\r")
	s.expect("~/settings/echoer.json")
	s.expect("Start it? [y/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("may now read " + data)
	s.typeKeys(`/mcp call echoer echo {"text": "hi"}` + "\r")
	s.expect("echoed: hi")
	s.typeKeys("\x04")
	s.wait()
}
