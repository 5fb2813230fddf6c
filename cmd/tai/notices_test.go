package main

import (
	"strings"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
)

// An answer that is not a complete answer (withheld by a filter, refused,
// empty) or a wait the API imposes is told to the person: on stderr with
// exit status 1 in -p, as a note in the REPL.

func TestPromptIncompleteAnswers(t *testing.T) {
	tests := []struct {
		name   string
		start  func(testing.TB, ...llmtest.Turn) *llmtest.Server
		turn   llmtest.Turn
		stdout string
		notice string
	}{
		{"openai content filter", llmtest.NewOpenAI, llmtest.Turn{Text: "Here is how", Finish: "content_filter"},
			"Here is how\n", `withheld or refused by the provider (finish reason "content_filter")`},
		{"openai content filter, no text", llmtest.NewOpenAI, llmtest.Turn{Finish: "content_filter"},
			"", `withheld or refused by the provider (finish reason "content_filter")`},
		{"anthropic refusal", llmtest.NewAnthropic, llmtest.Turn{Text: "I can't", Finish: "refusal"},
			"I can't\n", "the model refused to answer"},
		{"openai refusal", llmtest.NewOpenAI, llmtest.Turn{Refusal: "I can't help with that."},
			"I can't help with that.\n", "the model refused to answer"},
		{"openai empty answer", llmtest.NewOpenAI, llmtest.Say(""),
			"", "the model returned an empty answer"},
		{"anthropic empty answer", llmtest.NewAnthropic, llmtest.Say(""),
			"", "the model returned an empty answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			srv := tt.start(t, tt.turn)
			vars := e.modelVars(srv)
			if strings.Contains(tt.name, "anthropic") {
				vars = append(e.vars(), "ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL="+srv.BaseURL, "TAI_MODEL=fake-model")
			}
			r := e.runEnv(t, vars, "-p", "tell me")
			if r.status != 1 {
				t.Fatalf("status %d, want 1\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
			}
			if r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.notice) {
				t.Fatalf("stdout %q (want %q)\nstderr %q (want it to hold %q)", r.stdout, tt.stdout, r.stderr, tt.notice)
			}
		})
	}
}

func TestPromptShowsRetries(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.RateLimited("0"), llmtest.Say("at last"))
	r := e.runEnv(t, e.modelVars(srv), "-p", "hi")
	if r.status != 0 || r.stdout != "at last\n" {
		t.Fatalf("status %d\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "rate limited (429)") || !strings.Contains(r.stderr, "attempt 2/") {
		t.Fatalf("stderr does not report the retry: %q", r.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestPromptLongRateLimitFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.RateLimited("3600"), llmtest.Say("never"))
	r := e.runEnv(t, e.modelVars(srv), "-p", "hi")
	if r.status != 1 || r.stdout != "" {
		t.Fatalf("status %d\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "1h0m0s") {
		t.Fatalf("stderr does not say how long the API asks to wait: %q", r.stderr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry when the wait is too long)", n)
	}
}

func TestREPLIncompleteAnswersAreNoted(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")

	srv.Push(llmtest.Turn{Text: "Here is how", Finish: "content_filter"})
	s.typeKeys("tell me\r")
	s.expect("Here is how")
	s.expect(`(the answer was withheld or refused by the provider`)
	s.expect("tai:default> ")

	srv.Push(llmtest.Say(""))
	s.typeKeys("say nothing\r")
	s.expect("(the model returned an empty answer")
	s.expect("tai:default> ")

	srv.Push(llmtest.RateLimited("0"))
	s.typeKeys("again\r")
	s.expect("rate limited (429)")
	s.expect("you said: again")
	s.expect("tai:default> ")

	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// TestPromptSaysTheModelPicked: with a key and no TAI_MODEL, tai -p takes
// the newest model of the preferred family the provider lists and says so
// on stderr, once: a second run uses the model kept in the vault and says
// nothing.
func TestPromptSaysTheModelPicked(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewAnthropic(t, llmtest.Say("hello"), llmtest.Say("again"))
	srv.SetModelList(
		llmtest.Model{ID: "claude-sonnet-5-1", Created: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)},
		llmtest.Model{ID: "claude-sonnet-5", Created: time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC)},
	)
	srv.RefuseUnlisted()
	vars := append(e.vars(), "ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL="+srv.BaseURL)
	first := e.runEnv(t, vars, "-p", "hi")
	if first.status != 0 || first.stdout != "hello\n" {
		t.Fatalf("status %d\nstdout %q\nstderr %q", first.status, first.stdout, first.stderr)
	}
	if n := strings.Count(first.stderr, "tai: no model named: using claude-sonnet-5-1, the newest sonnet"); n != 1 {
		t.Fatalf("stderr %q: the choice said %d times, want once", first.stderr, n)
	}
	second := e.runEnv(t, vars, "-p", "hi again")
	if second.status != 0 || second.stdout != "again\n" || strings.Contains(second.stderr, "no model named") {
		t.Fatalf("second run: status %d\nstdout %q\nstderr %q", second.status, second.stdout, second.stderr)
	}
	for _, r := range srv.Requests() {
		if r.Model != "claude-sonnet-5-1" {
			t.Errorf("a request for %q", r.Model)
		}
	}
}
