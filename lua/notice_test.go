package lua

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
)

// TestNotifyHearsGoMessages: a tai.notify of one's own receives, with
// their levels, the lines Go writes for the person: one said by the
// holder of the Lua state (a module of one's own overriding a built-in),
// one said inside a callback (a chat callback that failed), one from a
// goroutine while a turn lends the state (a retry), and one from a
// goroutine while the state is busy, which waits for the holder without
// holding up its sender (a server's warning). Nothing reaches stderr.
func TestNotifyHearsGoMessages(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.RateLimited("1"), llmtest.Say("at last"))
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": srv.BaseURL, "TAI_MODEL": "fake-model"}
	h := newHost(t, Options{
		Vault: openTestVault(t, "pw"),
		Engine: &engine.Options{
			Dir:    t.TempDir(),
			Getenv: func(k string) string { return env[k] },
			Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 2, Base: time.Second,
				Sleep: func(context.Context, time.Duration) error { return nil }}},
		},
	}, map[string]string{"lua/tai/inspect.lua": "return {}"})
	mustRun(t, h, `
		heard = {}
		tai.notify = function(text, level) heard[#heard + 1] = level .. " " .. text end
		require("tai.inspect")
		tai.chat("hi", {on_text = function() error("boom") end})`)

	said := make(chan struct{})
	go func() {
		h.mcpWarning("server x sends too many requests")
		close(said)
	}()
	select {
	case <-said:
	case <-time.After(10 * time.Second):
		t.Fatal("a server's warning waited for the Lua state")
	}
	got := mustRun(t, h, `local n = #heard tai.mcp.list() return table.concat(heard, "\0"), n`)
	lines := strings.Split(got[0].(string), "\x00")
	want := []string{
		"warn tai: " + h.config + "/lua/tai/inspect.lua overrides the built-in inspect.lua",
		"warn tai: rate limited (429); retrying in 1s, attempt 2/2",
		"error tai: chat callback failed (not called again this turn): ",
		"warn tai: server x sends too many requests",
	}
	if len(lines) != len(want) {
		t.Fatalf("heard %d lines, want %d:\n%s", len(lines), len(want), got[0])
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], w)
		}
	}
	if got[1] != int64(3) {
		t.Errorf("the server's warning was said while the state was busy (%v lines before the next turn)", got[1])
	}
	if h.errOut.Len() != 0 {
		t.Errorf("stderr got %q", h.errOut.String())
	}
}

// TestNotifyFallsBackToStderr: with no tai.notify to call, or one that
// fails, the line is written to stderr, never lost.
func TestNotifyFallsBackToStderr(t *testing.T) {
	h := newHost(t, Options{}, nil)
	mustRun(t, h, `tai.notify = function() error("mine is broken") end`)
	h.tell(h.L, "warn", "tai: a line")
	mustRun(t, h, `tai.notify = nil`)
	h.tell(h.L, "warn", "tai: another")
	if got := h.errOut.String(); !reflect.DeepEqual(strings.Split(got, "\n")[0], "tai: a line") || !strings.Contains(got, "tai.notify failed") ||
		!strings.HasSuffix(got, "tai: another\n") {
		t.Errorf("stderr = %q", got)
	}
}
