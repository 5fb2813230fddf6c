package main

import (
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestModelNotListedIsWarnedAbout: /model NAME with a name the provider
// does not list switches, with a warning naming the closest listed ones.
func TestModelNotListedIsWarnedAbout(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetModels("gpt-4o", "gpt-4o-mini", "o3-mini")
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("/model gpt-4o-mni\r")
	s.expect("now using model gpt-4o-mni")
	s.expect("the provider does not list gpt-4o-mni; the closest it lists: gpt-4o-mini, gpt-4o, o3-mini")
	s.expect("tai:default> ")
	from := s.mark
	s.typeKeys("/model o3-mini\r")
	s.expect("now using model o3-mini")
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String()[from:], "does not list") {
		t.Fatal("a listed model was warned about")
	}
}

// TestPromptSaysWhichProfileAnswered: with a stored profile current and
// OPENAI_API_KEY set, tai -p says once on stderr which profile answered
// and how to use the environment instead; that advice works, and says
// nothing more then, nor with --profile given.
func TestPromptSaysWhichProfileAnswered(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn { return llmtest.Say("model " + r.Model) })
	vars := e.modelVars(srv)
	setup := `assert(tai.profiles.save{name = "work", provider = "openai", base_url = "` + srv.BaseURL + `/", model = "work-model", key_env = "OPENAI_API_KEY"}) assert(tai.profiles.use("work"))`
	if r := e.runInput(t, vars, "", "--clean", "-e", setup); r.status != 0 {
		t.Fatalf("setup: %d %s", r.status, r.stderr)
	}
	r := e.runInput(t, vars, "", "--clean", "-p", "hi")
	if r.status != 0 || !strings.Contains(r.stdout, "model work-model") {
		t.Fatalf("tai -p: %d\nstdout %s\nstderr %s", r.status, r.stdout, r.stderr)
	}
	want := `tai: profile "work" answered (the current one, kept in the vault), not the OPENAI_API_KEY set in the environment; tai --profile default uses that`
	if strings.Count(r.stderr, want) != 1 {
		t.Fatalf("stderr %q; want once %q", r.stderr, want)
	}
	r = e.runInput(t, vars, "", "--clean", "--profile", "default", "-p", "hi")
	if r.status != 0 || !strings.Contains(r.stdout, "model fake-model") || strings.Contains(r.stderr, "answered") {
		t.Fatalf("tai --profile default -p: %d\nstdout %s\nstderr %s", r.status, r.stdout, r.stderr)
	}
	r = e.runInput(t, vars, "", "--clean", "--profile", "work", "-p", "hi")
	if r.status != 0 || strings.Contains(r.stderr, "answered") {
		t.Fatalf("tai --profile work -p: %d\nstderr %s", r.status, r.stderr)
	}
}
