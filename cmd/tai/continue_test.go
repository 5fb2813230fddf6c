package main

import (
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestContinueTakesTheLastUsedConversation: tai -c continues the
// conversation last used in the folder, and resuming one is using it,
// even before a new turn: not the one created or updated last.
func TestContinueTakesTheLastUsedConversation(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn { return llmtest.Say("noted: " + r.LastUser()) })
	vars := e.modelVars(srv)
	for _, topic := range []string{"alpha topic", "beta topic"} {
		if r := e.runInput(t, vars, "", "--clean", "-p", topic); r.status != 0 {
			t.Fatalf("tai -p %q: %d\n%s", topic, r.status, r.stderr)
		}
	}

	s := startREPLIn(t, e.root, vars, "--clean")
	s.expect("tai:default> ")
	s.typeKeys("/resume\r")
	s.expect("beta topic")
	s.expect("alpha topic")
	s.expect("tai:default> ")
	s.typeKeys("/resume 2\r")
	s.expect("(resumed")
	s.expect("alpha topic")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()

	if r := e.runInput(t, vars, "", "--clean", "-c", "-p", "go on"); r.status != 0 {
		t.Fatalf("tai -c -p: %d\n%s", r.status, r.stderr)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	var said []string
	for _, m := range last.Messages {
		if m.Role == "user" {
			said = append(said, m.Text)
		}
	}
	if len(said) != 2 || !strings.Contains(said[0], "alpha topic") || said[1] != "go on" {
		t.Fatalf("tai -c continued %q; want the alpha conversation resumed last", said)
	}
}

// TestFailedFirstTurnKeepsNoConversation: a first turn that fails (no
// model to talk to) starts no conversation, in tai -p and in the REPL;
// @word naming no file says it goes as text.
func TestFailedFirstTurnKeepsNoConversation(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "--clean", "-p", "hello"); r.status == 0 || !strings.Contains(r.stderr, "no model is configured") {
		t.Fatalf("tai -p with no model: %d %q", r.status, r.stderr)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("look at @nosuchfile\r")
	s.expect("(no file nosuchfile here: @nosuchfile is sent as text)")
	s.expect("no model is configured")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	s.wait()
	r := e.run(t, "--clean", "-e", `print(#assert(tai.conversations.list(50)))`)
	if r.status != 0 || r.stdout != "0\n" {
		t.Fatalf("conversations kept: %d %q %q", r.status, r.stdout, r.stderr)
	}
}
