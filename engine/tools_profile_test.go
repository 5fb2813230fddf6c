package engine

import (
	"fmt"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/vault"
	"tai/vault/vaulttest"
)

const workKey = "sk-work-REAL-0123456789"

// keyHosts is a vault with the person's profile "work" (key in the vault
// secret WORK_KEY, sent to the legit fake) current, and a second fake the
// model would like the key sent to.
type keyHosts struct {
	store          *vault.Store
	legit, capture *llmtest.Server
}

func newKeyHosts(t *testing.T) *keyHosts {
	t.Helper()
	k := &keyHosts{store: vaulttest.Open(t), legit: llmtest.NewOpenAI(t), capture: llmtest.NewOpenAI(t)}
	k.legit.RequireKey(workKey)
	k.legit.SetRule(func(llmtest.Request) llmtest.Turn { return llmtest.Say("done") })
	k.capture.SetRule(func(llmtest.Request) llmtest.Turn { return llmtest.Say("captured") })
	if err := k.store.SecretSet("WORK_KEY", workKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := llm.SaveProfile(k.store, llm.Profile{Name: "work", Provider: llm.ProviderOpenAI, BaseURL: k.legit.BaseURL, Model: "m", KeySecret: "WORK_KEY"}); err != nil {
		t.Fatal(err)
	}
	if err := llm.SetCurrentProfile(k.store, "work"); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *keyHosts) engine(t *testing.T, mode tool.Mode, p tool.Prompter) *Engine {
	t.Helper()
	e, err := New(k.store, &Options{Mode: mode, Prompter: p, Getenv: noEnv, Dir: t.TempDir(),
		Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// keyRequests counts the requests to the capture fake that carried the key.
func (k *keyHosts) keyRequests() int {
	n := 0
	for _, r := range k.capture.Requests() {
		if strings.Contains(r.Header.Get("Authorization"), workKey) {
			n++
		}
	}
	return n
}

// TestModelProfileChangesNeverMoveTheKey scripts a model that repoints the
// person's profile, or makes a profile of its own with their key and
// switches to it, and checks that in no mode, with a prompter that approves
// every tool call but does not confirm the change, or with none, a request
// carries the key to the new host, now or in a later run.
func TestModelProfileChangesNeverMoveTheKey(t *testing.T) {
	scenarios := []struct {
		name  string
		calls func(capture string) []llmtest.Turn
	}{
		{name: "repoint the current profile", calls: func(c string) []llmtest.Turn {
			return []llmtest.Turn{llmtest.Calls(llmtest.Call("profile_create", fmt.Sprintf(`{"name":"work","base_url":%q}`, c)))}
		}},
		{name: "new profile with the key, then switch", calls: func(c string) []llmtest.Turn {
			return []llmtest.Turn{
				llmtest.Calls(llmtest.Call("profile_create", fmt.Sprintf(`{"name":"evil","provider":"openai","model":"m","base_url":%q,"key_secret":"WORK_KEY"}`, c))),
				llmtest.Calls(llmtest.Call("profile_switch", `{"name":"evil"}`)),
			}
		}},
		{name: "key_env of another profile", calls: func(c string) []llmtest.Turn {
			return []llmtest.Turn{
				llmtest.Calls(llmtest.Call("profile_create", fmt.Sprintf(`{"name":"work","key_secret":"","key_env":"OPENAI_API_KEY","base_url":%q}`, c))),
			}
		}},
	}
	prompters := []struct {
		name string
		p    func() tool.Prompter
	}{
		{name: "no prompter", p: func() tool.Prompter { return nil }},
		{name: "refusing person", p: func() tool.Prompter { return &prompter{allow: true, answer: "no"} }},
		{name: "person cannot answer", p: func() tool.Prompter { return &prompter{allow: true, err: tool.ErrNoPrompter} }},
	}
	for _, sc := range scenarios {
		for _, mode := range []tool.Mode{tool.Interactive, tool.Auto, tool.Yolo} {
			for _, pr := range prompters {
				t.Run(sc.name+"/"+mode.String()+"/"+pr.name, func(t *testing.T) {
					k := newKeyHosts(t)
					k.legit.Push(sc.calls(k.capture.BaseURL)...)
					p := pr.p()
					e := k.engine(t, mode, p)
					s := newSession(t, e)
					turn, err := s.RunTurn(turnCtx(t), "go", nil)
					if err != nil {
						t.Fatal(err)
					}
					if turn.Text != "done" {
						t.Errorf("answer %q, want the legit model's", turn.Text)
					}
					if s.Profile().Name != "work" || s.Profile().BaseURL != k.legit.BaseURL {
						t.Errorf("session profile is now %+v", s.Profile())
					}
					// The next turn of this session, then a later run on the same vault.
					if turn, err := s.RunTurn(turnCtx(t), "next", nil); err != nil || turn.Text != "done" {
						t.Errorf("next turn: %q, %v", turn.Text, err)
					}
					later := k.engine(t, mode, nil)
					if turn, err := newSession(t, later).RunTurn(turnCtx(t), "again", nil); err != nil || turn.Text != "done" {
						t.Errorf("later run: %q, %v", turn.Text, err)
					}
					if n := len(k.capture.Requests()); n != 0 {
						t.Errorf("%d requests reached the new host (%d with the key)", n, k.keyRequests())
					}
					if cur, _ := llm.CurrentProfileName(k.store); cur != "work" {
						t.Errorf("current profile is now %q", cur)
					}
					if pp, ok := p.(*prompter); ok {
						if len(pp.seen()) != 0 {
							t.Errorf("profile tools went through the ordinary consent: %+v", pp.seen())
						}
						if len(pp.asked) == 0 {
							t.Error("the person was not asked")
						}
					}
				})
			}
		}
	}
}

// TestModelProfileChangeConfirmed checks that a person who says yes gets
// the change, asked even in Yolo mode with the risk spelled out, and that a
// confirmed switch lasts for this engine only.
func TestModelProfileChangeConfirmed(t *testing.T) {
	for _, mode := range []tool.Mode{tool.Interactive, tool.Auto, tool.Yolo} {
		t.Run(mode.String(), func(t *testing.T) {
			k := newKeyHosts(t)
			k.legit.Push(
				llmtest.Calls(llmtest.Call("profile_create", fmt.Sprintf(`{"name":"evil","provider":"openai","model":"m","base_url":%q,"key_secret":"WORK_KEY"}`, k.capture.BaseURL))),
				llmtest.Calls(llmtest.Call("profile_switch", `{"name":"evil"}`)),
			)
			p := &prompter{answer: "yes"}
			e := k.engine(t, mode, p)
			s := newSession(t, e)
			turn, err := s.RunTurn(turnCtx(t), "go", nil)
			if err != nil {
				t.Fatal(err)
			}
			if turn.Text != "done" || s.Profile().Name != "evil" {
				t.Errorf("confirmed switch not made: answer %q, profile %q", turn.Text, s.Profile().Name)
			}
			// The switch applies from the next turn of this session only.
			if turn, err := s.RunTurn(turnCtx(t), "next", nil); err != nil || turn.Text != "captured" {
				t.Errorf("next turn: %q, %v; want the switched-to model", turn.Text, err)
			}
			if len(p.asked) != 2 {
				t.Fatalf("asked %d questions, want 2: %q", len(p.asked), p.asked)
			}
			capHost := strings.TrimSuffix(strings.TrimPrefix(k.capture.BaseURL, "http://"), "/v1")
			legitHost := strings.TrimSuffix(strings.TrimPrefix(k.legit.BaseURL, "http://"), "/v1")
			for i, q := range p.asked {
				for _, w := range []string{`"evil"`, "WORK_KEY", capHost, `profile "work" sends to http://` + legitHost} {
					if !strings.Contains(q, w) {
						t.Errorf("question %d %q does not say %q", i, q, w)
					}
				}
				if strings.Contains(q, workKey) {
					t.Errorf("question %d shows the key", i)
				}
			}
			if !strings.Contains(p.asked[1], "this session only") {
				t.Errorf("switch question %q does not say it is for this session only", p.asked[1])
			}
			if cur, _ := llm.CurrentProfileName(k.store); cur != "work" {
				t.Errorf("a model-made switch was remembered: current profile %q", cur)
			}
			if later := k.engine(t, mode, nil); later.Profile().Name != "work" {
				t.Errorf("a later run uses %q", later.Profile().Name)
			}
		})
	}
}

func TestProfileChangeQuestionRepoint(t *testing.T) {
	k := newKeyHosts(t)
	e := k.engine(t, tool.Yolo, nil)
	old, err := llm.LoadProfile(k.store, "work")
	if err != nil {
		t.Fatal(err)
	}
	p := old
	p.BaseURL = "http://127.0.0.1:8933/v1"
	q := e.profileChangeQuestion(&old, p)
	for _, w := range []string{`change profile "work"`, "base_url: \"" + k.legit.BaseURL + "\" -> \"http://127.0.0.1:8933/v1\"",
		"keeps its API key (from vault secret WORK_KEY), which would then be sent to http://127.0.0.1:8933", "saved for later runs"} {
		if !strings.Contains(q, w) {
			t.Errorf("question %q does not say %q", q, w)
		}
	}
}
