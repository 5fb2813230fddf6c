package llm

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
	"tai/vault/vaulttest"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestPickModel(t *testing.T) {
	anthropic := []ModelInfo{
		{"claude-haiku-4-5-20251001", day("2025-10-01")},
		{"claude-opus-4-6", day("2026-02-05")},
		{"claude-sonnet-4-6", day("2026-02-17")},
		{"claude-sonnet-5", day("2026-09-30")},
		{"claude-opus-5", day("2026-10-20")},
	}
	openai := []ModelInfo{
		{"gpt-4o-mini", day("2024-07-18")},
		{"gpt-4.1-mini", day("2025-04-14")},
		{"gpt-4.1-mini-2025-04-14", day("2025-04-14")},
		{"gpt-5-mini", day("2025-08-07")},
		{"gpt-4o-mini-tts", day("2025-09-01")},
		{"gpt-5.1-codex-mini", day("2025-11-13")},
		{"gpt-realtime-mini", day("2025-10-06")},
		{"text-embedding-3-small", day("2024-01-25")},
		{"gpt-5", day("2025-08-07")},
	}
	cases := []struct {
		name     string
		models   []ModelInfo
		families []string
		model    string
		family   string
		ok       bool
	}{
		// Newest by date, not by name: claude-sonnet-5 > claude-sonnet-4-6.
		{"newest sonnet", anthropic, []string{"sonnet", "opus", "haiku"}, "claude-sonnet-5", "sonnet", true},
		{"order is preference", anthropic, []string{"opus", "sonnet"}, "claude-opus-5", "opus", true},
		{"first family missing", anthropic, []string{"fable", "haiku"}, "claude-haiku-4-5-20251001", "haiku", true},
		// Speech, realtime and codex models are never picked; the alias
		// wins over its dated snapshot.
		{"newest chat mini", openai, []string{"mini", "gpt"}, "gpt-5-mini", "mini", true},
		{"alias before snapshot", openai[:3], []string{"mini"}, "gpt-4.1-mini", "mini", true},
		{"a vendor prefix", []ModelInfo{{"openai/gpt-5-mini", day("2025-08-07")}, {"openai/gpt-4.1-mini", day("2025-04-14")}}, []string{"mini"}, "openai/gpt-5-mini", "mini", true},
		{"one model served", []ModelInfo{{"Qwen/Qwen3-32B", time.Time{}}}, []string{"mini"}, "Qwen/Qwen3-32B", "", true},
		{"no family listed", []ModelInfo{{"llama-3", time.Time{}}, {"mistral", time.Time{}}}, []string{"mini"}, "", "", false},
		{"empty list", nil, []string{"sonnet"}, "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model, family, ok := PickModel(tc.models, tc.families)
			if model != tc.model || family != tc.family || ok != tc.ok {
				t.Errorf("PickModel = %q, %q, %v; want %q, %q, %v", model, family, ok, tc.model, tc.family, tc.ok)
			}
		})
	}
}

// choices records what OnModelChosen is told.
type choices struct {
	mu  sync.Mutex
	got []ModelChoice
}

func (c *choices) add(m ModelChoice) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, m)
}

func (c *choices) all() []ModelChoice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ModelChoice(nil), c.got...)
}

func envWith(vars ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(vars); i += 2 {
			if vars[i] == k {
				return vars[i+1]
			}
		}
		return ""
	}
}

// TestDefaultModelFromTheList: with a key and no model, the model is the
// newest of the preferred family the provider lists, picked once, kept in
// the vault and said once. The fake lists only models newer than any name
// tai could have hard-coded, and refuses every other.
func TestDefaultModelFromTheList(t *testing.T) {
	cases := []struct {
		provider string
		fake     func(testing.TB, ...llmtest.Turn) *llmtest.Server
		models   []llmtest.Model
		want     string
		keyVar   string
		baseVar  string
	}{
		{ProviderAnthropic, llmtest.NewAnthropic, []llmtest.Model{
			{ID: "claude-haiku-5", Created: day("2026-11-02")},
			{ID: "claude-sonnet-5-1", Created: day("2026-11-24")},
			{ID: "claude-sonnet-5", Created: day("2026-09-30")},
			{ID: "claude-opus-5-1", Created: day("2026-11-25")},
		}, "claude-sonnet-5-1", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
		{ProviderOpenAI, llmtest.NewOpenAI, []llmtest.Model{
			{ID: "gpt-6", Created: day("2026-10-01")},
			{ID: "gpt-6-mini", Created: day("2026-10-01")},
			{ID: "gpt-6-mini-tts", Created: day("2026-11-01")},
		}, "gpt-6-mini", "OPENAI_API_KEY", "OPENAI_BASE_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			srv := tc.fake(t, llmtest.Say("hello"), llmtest.Say("again"))
			srv.RequireKey(testKey)
			srv.SetModelList(tc.models...)
			srv.RefuseUnlisted()
			store := vaulttest.Open(t)
			getenv := envWith(tc.keyVar, testKey, tc.baseVar, srv.BaseURL)
			p, ok := EnvProfile(getenv)
			if !ok || p.Model != "" {
				t.Fatalf("env profile %+v, want one without a model", p)
			}
			var said choices
			for run := range 2 { // a second run (process) uses what the first kept
				cl, err := NewChatClient(p, store, &ClientOptions{Getenv: getenv, OnModelChosen: said.add})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := cl.Complete(testCtx(t), userRequest("hi"), nil); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || reqs[0].Model != tc.want || reqs[1].Model != tc.want {
				t.Fatalf("models asked for: %v; want %s twice", reqs, tc.want)
			}
			got := said.all()
			if len(got) != 1 || got[0].Model != tc.want {
				t.Fatalf("told %+v; want one choice of %s", got, tc.want)
			}
			if s := got[0].String(); !strings.Contains(s, tc.want) || !strings.Contains(s, "/model") {
				t.Errorf("notice %q does not name the model and how to pick another", s)
			}
			if ChosenModel(store, p) != tc.want {
				t.Errorf("the vault keeps %q", ChosenModel(store, p))
			}
		})
	}
}

// TestDefaultModelRetiredIsPickedAgain: a model kept from an earlier pick
// that the provider retired is forgotten and picked again, and the turn
// goes through.
func TestDefaultModelRetiredIsPickedAgain(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Say("hello"))
	srv.SetModelList(llmtest.Model{ID: "claude-sonnet-5", Created: day("2026-09-30")})
	srv.RefuseUnlisted()
	store := vaulttest.Open(t)
	getenv := envWith("ANTHROPIC_API_KEY", testKey, "ANTHROPIC_BASE_URL", srv.BaseURL)
	p, _ := EnvProfile(getenv)
	if err := keepChosen(store, chosenSlot(p.Provider, p.BaseURLOrDefault()), "claude-sonnet-4-5"); err != nil {
		t.Fatal(err)
	}
	var said choices
	cl, err := NewChatClient(p, store, &ClientOptions{Getenv: getenv, OnModelChosen: said.add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Complete(testCtx(t), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if got := said.all(); len(got) != 1 || got[0].Model != "claude-sonnet-5" || ChosenModel(store, p) != "claude-sonnet-5" {
		t.Fatalf("told %+v, kept %q; want claude-sonnet-5", got, ChosenModel(store, p))
	}
}

// TestDefaultModelWithoutAList: offline or on a server without a model
// list (a local server), the model tai always used is tried, and nothing
// is kept.
func TestDefaultModelWithoutAList(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Say("hello"))
	store := vaulttest.Open(t)
	getenv := envWith("OPENAI_API_KEY", testKey, "OPENAI_BASE_URL", srv.BaseURL)
	p, _ := EnvProfile(getenv)
	var said choices
	cl, err := NewChatClient(p, store, &ClientOptions{Getenv: getenv, OnModelChosen: said.add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Complete(testCtx(t), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if m := srv.Requests()[0].Model; m != DefaultOpenAIModel {
		t.Errorf("model %q, want %q", m, DefaultOpenAIModel)
	}
	if got := said.all(); len(got) != 0 {
		t.Errorf("told %+v; want nothing said, as before", got)
	}
	if ChosenModel(store, p) != "" {
		t.Errorf("a fallback was kept: %q", ChosenModel(store, p))
	}
}

func TestModelGone(t *testing.T) {
	cases := []struct {
		err  error
		gone bool
	}{
		{&APIError{Status: 404, Type: "not_found_error", Message: "model: claude-sonnet-4-5"}, true},
		{&APIError{Status: 404, Type: "invalid_request_error/model_not_found", Message: "The model `gpt-9` does not exist or you do not have access to it."}, true},
		{&APIError{Status: 400, Type: "invalid_request_error", Message: "The model `text-davinci-003` has been deprecated"}, true},
		{&APIError{Status: 400, Type: "invalid_request_error", Message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}, false},
		{&APIError{Status: 404, Message: "404 page not found"}, false},
		{&APIError{Status: 500, Message: "model not found"}, false},
		{errors.New("model not found"), false},
	}
	for _, tc := range cases {
		if got := ModelGone(tc.err); got != tc.gone {
			t.Errorf("ModelGone(%v) = %v, want %v", tc.err, got, tc.gone)
		}
	}
}

// TestModelGoneNamesTheModels: a model the provider does not serve gets
// one line naming the models the key can use and how to pick one.
func TestModelGoneNamesTheModels(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			cl, srv, _ := p.start(t)
			srv.SetModelList(llmtest.Model{ID: "newer-model-2", Created: day("2026-11-01")}, llmtest.Model{ID: "newer-model-1", Created: day("2026-10-01")},
				llmtest.Model{ID: "evil\x1b]52;c;cHduZWQ=\x07", Created: day("2026-12-01")})
			srv.RefuseUnlisted()
			_, err := cl.Complete(testCtx(t), userRequest("hi"), nil)
			if !ModelGone(err) {
				t.Fatalf("err = %v; want one ModelGone recognises", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "the key can use newer-model-2, newer-model-1:") || !strings.Contains(msg, "/model NAME") || strings.ContainsAny(msg, "\n\x1b") || strings.Contains(msg, testKey) {
				t.Errorf("error %q; want one line naming the models, newest first, and /model", msg)
			}
		})
	}
}
