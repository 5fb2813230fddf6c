package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// TestSessionsOwnTheirState runs two sessions of one engine at once, on two
// profiles with their own clients, and checks that each turn reaches its
// own model with its own history, that a profile switch the model makes in
// one leaves the other alone, and that each session's approver decides its
// own calls.
func TestSessionsOwnTheirState(t *testing.T) {
	store := vaulttest.Open(t)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if err := llm.SaveProfile(store, llm.Profile{Name: name, Provider: llm.ProviderOpenAI, Model: "m-" + name, System: "you are " + name}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	clients := map[string]*scripted{}
	client := func(name string) *scripted {
		mu.Lock()
		defer mu.Unlock()
		if clients[name] == nil {
			clients[name] = &scripted{}
		}
		return clients[name]
	}
	// Every model answers with its own name and the message it was sent;
	// alpha first asks to switch to gamma.
	echo := func(name string) func(context.Context, llm.Request, func(string)) (llm.Response, error) {
		return func(_ context.Context, req llm.Request, _ func(string)) (llm.Response, error) {
			last := req.Messages[len(req.Messages)-1]
			return llm.Response{Message: llm.Message{Role: "assistant", Content: name + " heard " + last.Content}, FinishReason: "stop"}, nil
		}
	}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		c := client(name)
		for range 4 {
			c.steps = append(c.steps, echo(name))
		}
	}
	e, err := New(store, &Options{Getenv: noEnv, Dir: t.TempDir(), NewClient: func(p llm.Profile) (llm.ChatClient, error) { return client(p.Name), nil }})
	if err != nil {
		t.Fatal(err)
	}
	person := &prompter{answer: "yes"}
	a, err := e.NewSession(&SessionOptions{Name: "a", Profile: "alpha", Approver: tool.NewApprover(tool.Interactive, person)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.NewSession(&SessionOptions{Name: "b", Profile: "beta", Approver: tool.NewApprover(tool.Yolo, nil)})
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	turns := make([]Turn, 2)
	errs := make([]error, 2)
	for i, s := range []*Session{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turns[i], errs[i] = s.RunTurn(turnCtx(t), "hello from "+s.Name(), nil)
		}()
	}
	wg.Wait()
	for i, want := range []string{"alpha heard hello from a", "beta heard hello from b"} {
		if errs[i] != nil || turns[i].Text != want {
			t.Fatalf("session %d: %q, %v; want %q", i, turns[i].Text, errs[i], want)
		}
	}
	for name, wantSys := range map[string]string{"alpha": "you are alpha", "beta": "you are beta"} {
		reqs := client(name).requests()
		if len(reqs) != 1 || reqs[0].Messages[0].Content != wantSys || len(reqs[0].Messages) != 2 {
			t.Fatalf("%s received %+v", name, reqs)
		}
	}

	// A switch in session a (the person says yes) moves a only.
	if r, err := a.Dispatch(turnCtx(t), "profile_switch", map[string]any{"name": "gamma"}); err != nil || r.IsError {
		t.Fatalf("profile_switch in a: %v, %v", r.Text(), err)
	}
	if a.Profile().Name != "gamma" || b.Profile().Name != "beta" {
		t.Fatalf("after a's switch: a on %q, b on %q", a.Profile().Name, b.Profile().Name)
	}
	if turn, err := b.RunTurn(turnCtx(t), "still there?", nil); err != nil || turn.Text != "beta heard still there?" {
		t.Fatalf("b after a's switch: %q, %v", turn.Text, err)
	}
	if turn, err := a.RunTurn(turnCtx(t), "and now?", nil); err != nil || turn.Text != "gamma heard and now?" {
		t.Fatalf("a after its switch: %q, %v", turn.Text, err)
	}
	// gamma sees a's history, never b's.
	g := client("gamma").requests()
	var seen []string
	for _, m := range g[0].Messages {
		seen = append(seen, m.Content)
	}
	if strings.Contains(strings.Join(seen, "|"), "from b") || !strings.Contains(strings.Join(seen, "|"), "hello from a") {
		t.Fatalf("gamma's request holds %q", seen)
	}

	// Each session's approver decides its calls: b's Yolo runs, a asks its
	// person (who refuses here), a session-less call is denied.
	addTool(t, e.Tools(), textTool("act", "does something", false, "acted"))
	person.allow = false
	if r, err := b.Dispatch(turnCtx(t), "act", nil); err != nil || r.Text() != "acted" {
		t.Fatalf("b (yolo): %q, %v", r.Text(), err)
	}
	if _, err := a.Dispatch(turnCtx(t), "act", nil); !errors.Is(err, tool.ErrDenied) || len(person.seen()) != 1 {
		t.Fatalf("a (interactive, refused): %v, %d consents", err, len(person.seen()))
	}
	if _, err := e.Tools().Dispatch(turnCtx(t), "act", nil); !errors.Is(err, tool.ErrDenied) {
		t.Fatalf("outside of any session: %v", err)
	}
	if len(person.seen()) != 1 {
		t.Fatalf("a's person was asked for another session's call: %+v", person.seen())
	}
}

// TestToolLearnsItsSession checks that a tool run by a turn, by
// Session.Dispatch or under WithSession finds the calling session, and
// that the session-bound tools refuse to run outside of one.
func TestToolLearnsItsSession(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){calls("whoami", `{}`), say("done")}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	var mu sync.Mutex
	var seen []string
	addTool(t, e.Tools(), tool.Tool{Name: "whoami", Description: "names the session", Safe: true, Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
		s, ok := SessionFrom(ctx)
		mu.Lock()
		defer mu.Unlock()
		if !ok {
			seen = append(seen, "none")
			return tool.TextResult("none"), nil
		}
		seen = append(seen, s.Name())
		return tool.TextResult(s.Name()), nil
	}})
	s1, err := e.NewSession(&SessionOptions{Name: "one"})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := e.NewSession(&SessionOptions{Name: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.RunTurn(turnCtx(t), "who?", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Dispatch(turnCtx(t), "whoami", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Tools().Dispatch(WithSession(turnCtx(t), s1), "whoami", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Tools().Dispatch(turnCtx(t), "whoami", nil); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(seen); got != "[one two one none]" {
		t.Fatalf("sessions seen by the tool: %s", got)
	}
	for _, toolName := range []string{"profile_switch", "fork"} {
		args := map[string]any{"name": "default", "task": "x"}
		if toolName == "fork" {
			delete(args, "name")
		} else {
			delete(args, "task")
		}
		e.Tools().Approver().SetMode(tool.Yolo)
		r, err := e.Tools().Dispatch(turnCtx(t), toolName, args)
		e.Tools().Approver().SetMode(tool.Interactive)
		if err != nil || !r.IsError || !strings.Contains(r.Text(), "outside of a session") {
			t.Errorf("%s outside of a session: %q, %v", toolName, r.Text(), err)
		}
	}
}

// TestSessionFollowsSavedProfile checks that a profile saved or deleted
// through the engine reaches the sessions on it at their next call, and
// that UseProfile remembers the choice for sessions made later without
// moving those already running.
func TestSessionFollowsSavedProfile(t *testing.T) {
	e := newEngine(t, nil, nil)
	if err := e.SaveProfile(llm.Profile{Name: "work", Provider: llm.ProviderOpenAI, Model: "m1"}); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, e)
	other := newSession(t, e)
	if _, err := s.UseProfile("work"); err != nil {
		t.Fatal(err)
	}
	if other.Profile().Name == "work" {
		t.Fatal("UseProfile in one session moved another")
	}
	if later := newSession(t, e); later.Profile().Name != "work" {
		t.Fatalf("a session made after UseProfile starts on %q", later.Profile().Name)
	}
	if err := e.SaveProfile(llm.Profile{Name: "work", Provider: llm.ProviderOpenAI, Model: "m2"}); err != nil {
		t.Fatal(err)
	}
	if p := s.Profile(); p.Model != "m2" {
		t.Fatalf("after saving, the session has model %q", p.Model)
	}
	if err := e.DeleteProfile("work"); err != nil {
		t.Fatal(err)
	}
	if p := s.Profile(); p.Name == "work" {
		t.Fatalf("after deleting, the session is still on %+v", p)
	}
}
