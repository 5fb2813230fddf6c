package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/vault/vaulttest"
)

func TestEngineBuildsClientsLazily(t *testing.T) {
	store := vaulttest.Open(t)
	if err := llm.SaveProfile(store, llm.Profile{Name: "p1", Provider: llm.ProviderOpenAI, Model: "m1", System: "sys one"}); err != nil {
		t.Fatal(err)
	}
	if err := llm.SaveProfile(store, llm.Profile{Name: "p2", Provider: llm.ProviderAnthropic, Model: "m2", System: "sys two", Tools: []string{"read_file"}}); err != nil {
		t.Fatal(err)
	}
	var built []string
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){say("one"), say("two")}}
	e, err := New(store, &Options{Profile: "p1", Getenv: noEnv, Dir: t.TempDir(), NewClient: func(p llm.Profile) (llm.ChatClient, error) {
		built = append(built, p.Name)
		return client, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 0 {
		t.Fatalf("New built clients %v before any model was needed", built)
	}
	s := newSession(t, e)
	a := s.Agent()
	if _, err := a.RunTurn(turnCtx(t), "hi", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UseProfile("p2"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RunTurn(turnCtx(t), "again", nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(built, ",") != "p1,p2" {
		t.Fatalf("clients built for %v, want p1 then p2", built)
	}
	reqs := client.requests()
	if reqs[0].Messages[0].Content != "sys one" || reqs[1].Messages[0].Content != "sys two" {
		t.Fatalf("system prompts %q, %q", reqs[0].Messages[0].Content, reqs[1].Messages[0].Content)
	}
	if len(reqs[1].Tools) != 1 || reqs[1].Tools[0].Name != "read_file" {
		t.Fatalf("profile p2 offers %v, want only read_file", names(reqs[1].Tools))
	}
}

func TestEngineDeleteCurrentProfile(t *testing.T) {
	e := newEngine(t, nil, nil)
	if err := e.SaveProfile(llm.Profile{Name: "tmp", Provider: llm.ProviderOpenAI, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, e)
	if _, err := s.UseProfile("tmp"); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteProfile("tmp"); err != nil {
		t.Fatal(err)
	}
	if p := s.Profile(); p.Name != llm.OllamaProfileName {
		t.Fatalf("after deleting the current profile the engine uses %q", p.Name)
	}
	if err := e.DeleteProfile("tmp"); !errors.Is(err, llm.ErrProfileNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
}

func TestEngineErrors(t *testing.T) {
	if _, err := New(nil, nil); err == nil {
		t.Fatal("New without a store succeeded")
	}
	_, err := New(vaulttest.Open(t), &Options{Profile: "missing", Getenv: noEnv})
	if !errors.Is(err, llm.ErrProfileNotFound) {
		t.Fatalf("a missing --profile: %v", err)
	}
	e := newEngine(t, nil, &Options{NewClient: func(llm.Profile) (llm.ChatClient, error) { return nil, llm.ErrNoModel }})
	_, err = newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "hi", nil)
	if !errors.Is(err, llm.ErrNoModel) {
		t.Fatalf("no model: %v", err)
	}
}

func TestNativeToolSafety(t *testing.T) {
	e := newEngine(t, nil, &Options{LuaRunner: func(context.Context, string) (string, []any, error) { return "", nil, nil }})
	safe := map[string]bool{
		"read_file": true, "list_dir": true, "glob": true, "grep": true, "record_read": true, "audit_tail": true,
		"secret_list": true, "profile_list": true, "profile_show": true, "tool_search": true, "ask_user": true,
	}
	want := []string{"ask_user", "audit_tail", "edit_file", "fork", "glob", "grep", "http_fetch", "list_dir", "lua",
		"profile_create", "profile_list", "profile_show", "profile_switch", "read_file", "record_read", "secret_delete",
		"secret_list", "secret_set", "shell", "tool_search", "write_file"}
	var got []string
	for _, tool := range e.Tools().NativeTools() {
		got = append(got, tool.Name)
		if tool.Safe != safe[tool.Name] {
			t.Errorf("%s: Safe = %v, want %v", tool.Name, tool.Safe, safe[tool.Name])
		}
		if tool.Description == "" || tool.Parameters["type"] != "object" {
			t.Errorf("%s: no description or no object schema", tool.Name)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("native tools = %v\nwant %v", got, want)
	}
}

func TestEngineCompleteIsStatelessWithoutTools(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Say("pong"))
	e := fakeProfileEngine(t, llm.ProviderAnthropic, srv.BaseURL, nil)
	resp, err := newSession(t, e).Complete(turnCtx(t), []llm.Message{{Role: "system", Content: "terse"}, {Role: "user", Content: "ping"}})
	if err != nil || resp.Message.Content != "pong" {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Tools) != 0 || reqs[0].LastUser() != "ping" || reqs[0].Messages[0].Text != "terse" {
		t.Fatalf("the fake received %+v", reqs)
	}
}
