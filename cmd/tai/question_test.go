package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestConsentAnswersAtAKeypress: y, n and a answer the consent screen as
// they are pressed, without Enter.
func TestConsentAnswersAtAKeypress(t *testing.T) {
	e := newEnv(t)
	made := madeIn(t, e)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"touch `+made+`"}`)))
	s.typeKeys("make it\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("✓")
	s.expect("tai:default> ")
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("y without Enter did not allow the call: %v", err)
	}

	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"rm `+made+`"}`)))
	s.typeKeys("remove it\r")
	s.expect("[s]how everything: ")
	s.typeKeys("n")
	s.expect("✗ denied")
	s.expect("tai:default> ")
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("n without Enter let the call run: %v", err)
	}
}

// TestTypeAheadNeverAnswersConsent: what the person types while the model
// is still thinking is not taken as the answer to the consent question
// that appears afterwards.
func TestTypeAheadNeverAnswersConsent(t *testing.T) {
	e := newEnv(t)
	made := madeIn(t, e)
	release := make(chan struct{})
	srv := llmtest.NewOpenAI(t)
	first := true
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		if first {
			first = false
			<-release
			return llmtest.Calls(llmtest.Call("shell", `{"command":"touch `+made+`"}`))
		}
		return fromToolResults(r)
	})
	s := startREPLIn(t, e.root, e.modelVars(srv))
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	s.expect("tai:default> ")
	s.typeKeys("make it\r")
	s.expect("thinking…")
	// Typed while the turn runs; the terminal echoes it once it has it.
	s.typeKeys("yes please\r")
	s.expect("yes please")
	close(release)
	s.expect("[s]how everything: ")
	s.typeKeys("n")
	s.expect("✗ denied")
	s.expect("tai:default> ")
	if _, err := os.Stat(made); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("keys typed before the question answered it: the call ran (%v)", err)
	}
}

// TestScriptsOwnCallIsNotAskedAgain: a script's own tai.call runs without
// a consent question (the person wrote it), with no terminal at all; a Lua
// tool the model calls that calls tai.call is still asked about, so with
// no terminal its call is denied.
func TestScriptsOwnCallIsNotAskedAgain(t *testing.T) {
	e := newEnv(t)
	own := filepath.Join(e.root, "own")
	relayed := filepath.Join(e.root, "relayed")
	r := e.runInput(t, e.vars(), "", "--clean", "-e", `local r = assert(tai.call("shell", {command = "touch `+own+`"})) print(r.isError)`)
	if _, err := os.Stat(own); err != nil {
		t.Fatalf("the script's own call did not run: %v\nstdout %s\nstderr %s", err, r.stdout, r.stderr)
	}

	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("relay", `{}`)))
	srv.SetRule(fromToolResults)
	r = e.runInput(t, e.modelVars(srv), "", "--clean", "-e", `tai.tool{name = "relay", description = "relays", safe = true,
  run = function() local res, err = tai.call("shell", {command = "touch `+relayed+`"}) return res or ("refused: " .. err) end}
print(tai.chat("go"))`)
	if _, err := os.Stat(relayed); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a Lua tool the model called ran a shell command without consent (%v)\nstdout %s\nstderr %s", err, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "refused: ") {
		t.Fatalf("the relayed call was not refused; stdout %s\nstderr %s", r.stdout, r.stderr)
	}
}

// TestKeysTypedAsTheQuestionShowsNeverAnswerIt: a key typed the moment
// the consent screen appears (someone typing on, their next line) is not
// taken as the answer: "a" then would let the tool run for the whole
// session. The question's prompt shows once such keys are dropped.
func TestKeysTypedAsTheQuestionShowsNeverAnswerIt(t *testing.T) {
	e := newEnv(t)
	made := madeIn(t, e)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", `{"command":"touch `+made+`"}`)))
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("make it\r")
	s.expect("wants to run")
	s.typeKeys("a")
	s.expect("[s]how everything: ")
	s.typeKeys("n")
	s.expect("✗ denied")
	s.expect("tai:default> ")
	if _, err := os.Stat(made); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key typed as the question showed answered it: the call ran (%v)", err)
	}
	if strings.Contains(s.seen.String(), "without asking for the rest of this session") {
		t.Fatal("a key typed as the question showed allowed the tool for the session")
	}
}

// TestLineTypedAsAskUserShowsNeverAnswersIt: a line typed the moment an
// ask_user question appears (someone typing on) is not taken as the
// answer; the prompt that takes it shows once the keyboard has rested.
func TestLineTypedAsAskUserShowsNeverAnswersIt(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("ask_user", `{"question":"delete everything?"}`)))
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("tidy up\r")
	s.expect("? delete everything?")
	s.typeKeys("yes\r")
	s.expect("answer> ")
	s.typeKeys("no\r")
	s.expect("the tool said: no")
	s.expect("tai:default> ")
	for _, req := range srv.Requests() {
		for _, res := range req.ToolResults() {
			if strings.Contains(res.Text, "yes") {
				t.Fatalf("a line typed as the question showed answered it: %q", res.Text)
			}
		}
	}
}

// madeIn returns the file the model's shell command makes in these tests:
// in a folder of the home (root), not directly in it, where the sandbox
// lets no command make anything (the home holds ~/.ssh).
func madeIn(t *testing.T, e env) string {
	t.Helper()
	dir := filepath.Join(e.root, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "made")
}
