package lua

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
)

// TestModelFamilies: with a key and no model, the order tai.model_families
// sets decides the model; the choice is said once on stderr and shown by
// tai.profiles.current().model_chosen.
func TestModelFamilies(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Say("one"), llmtest.Say("two"))
	srv.SetModelList(
		llmtest.Model{ID: "claude-sonnet-5-1", Created: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)},
		llmtest.Model{ID: "claude-opus-5", Created: time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)},
	)
	srv.RefuseUnlisted()
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test-key", "ANTHROPIC_BASE_URL": srv.BaseURL}
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Engine: &engine.Options{
			Dir:    t.TempDir(),
			Getenv: func(k string) string { return env[k] },
			Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}},
		},
	}, nil)
	got := mustRun(t, h, `
		local before = table.concat(tai.model_families("anthropic"), ",")
		local now = table.concat(tai.model_families("anthropic", {"opus", "sonnet"}), ",")
		assert(tai.chat("hi"))
		assert(tai.chat("again"))
		local bad = pcall(tai.model_families, "anthropic", {"claude-opus"})
		return before, now, tai.profiles.current().model_chosen, bad`)
	if want := []any{"sonnet,opus,haiku", "opus,sonnet", "claude-opus-5", false}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, r := range srv.Requests() {
		if r.Model != "claude-opus-5" {
			t.Errorf("request for %q, want claude-opus-5", r.Model)
		}
	}
	if n := strings.Count(h.errOut.String(), "using claude-opus-5, the newest opus"); n != 1 {
		t.Errorf("stderr %q: the choice is said %d times, want once", h.errOut.String(), n)
	}
}

// TestProviders: tai.profiles.providers lists engine/llm's table, and
// tai.model_families refuses a provider that picks no model by family.
func TestProviders(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, `
		local names, takes = {}, {}
		for _, p in ipairs(tai.profiles.providers()) do
			names[#names + 1] = p.name .. (p.picks_by_family and "+" or "")
			takes[#takes + 1] = table.concat(p.takes, ",")
		end
		local ok, err = pcall(tai.model_families, "ollama")
		return table.concat(names, " "), table.concat(takes, " "), ok, tostring(err):match('use .*') `)
	want := []any{"openai+ anthropic+ ollama", "text,images,audio text,images text,images", false, `use "openai" or "anthropic")`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
