package bridge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/oauth"
	"tai/vault"
)

// prompter is a person who answers every question with answer and
// approves every call, keeping what was asked.
type prompter struct {
	mu       sync.Mutex
	answer   string
	asked    []string
	consents []tool.Consent
	// onConfirm, when set, runs first while a call waits for approval.
	onConfirm func(tool.Consent)
}

func (p *prompter) Confirm(_ context.Context, c tool.Consent) (bool, error) {
	if p.onConfirm != nil {
		p.onConfirm(c)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.consents = append(p.consents, c)
	return true, nil
}

func (p *prompter) Ask(_ context.Context, q string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, q)
	return p.answer, nil
}

func (p *prompter) questions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// jsonNormalize reads {"mcpServers": {name: {command, args, env, cwd, url,
// headers, oauth}}} (the Claude Desktop shape), the one shape these tests paste.
func jsonNormalize(text, _ string) ([]mcp.Entry, []config.Note, error) {
	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			Cwd     string            `json:"cwd"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
			OAuth   *mcp.OAuth        `json:"oauth"`
			Sandbox *mcp.Sandbox      `json:"sandbox"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, nil, err
	}
	var out []mcp.Entry
	for name, s := range doc.MCPServers {
		e := mcp.Entry{Name: name, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: s.URL, Headers: s.Headers, OAuth: s.OAuth, Sandbox: s.Sandbox, Source: "config-json"}
		e.Transport = mcp.TransportStdio
		if s.URL != "" {
			e.Transport = mcp.TransportHTTP
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil, nil
}

// serverJSON is a Claude Desktop config running the test server as name,
// with env laid over its own variables.
func serverJSON(t testing.TB, name string, env map[string]string) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	e := map[string]string{serverEnv: "1"}
	for k, v := range env {
		e[k] = v
	}
	entry := map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": e}
	if state, ok := env[serverStateEnv]; ok {
		// The server's sandbox grants its cwd: the folder of its state.
		entry["cwd"] = filepath.Dir(state)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: entry}})
	return string(b)
}

// replHints are the REPL's words after a login error (lua.Host sets its
// own), which these tests look for in what reaches a person or a model.
var replHints = oauth.Hints{Login: func(s string) string { return "run /mcp login " + s + " in tai's REPL" }}

type fixture struct {
	store *vault.Store
	reg   *tool.Registry
	b     *Bridge
	p     *prompter
	path  string
}

// newFixture builds a registry and bridge in mode over a fresh vault (or
// the one at path), with a person who answers "y".
func newFixture(t testing.TB, mode tool.Mode, path string) *fixture {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "vault.db")
	}
	store, err := vault.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &prompter{answer: "y"}
	reg := tool.NewRegistry(store, tool.NewApprover(mode, p))
	b, err := New(reg, store, &Options{
		Normalize:  jsonNormalize,
		Profile:    func() string { return "work" },
		Client:     &mcp.ClientOptions{ConnectTimeout: 20 * time.Second, CallTimeout: 20 * time.Second},
		Screen:     luaScreen(t),
		OAuthHints: replHints,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})
	return &fixture{store: store, reg: reg, b: b, p: p, path: path}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// add registers the test server as name and fails the test unless it was
// added.
func (f *fixture) add(t testing.TB, name string, env map[string]string) ServerOutcome {
	t.Helper()
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, name, env)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added {
		t.Fatalf("add %s: %+v", name, rep)
	}
	return rep.Servers[0]
}

func text(r tool.Result) string { return r.Text() }

func specNames(specs []llm.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func mustContain(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}

func auditKinds(t testing.TB, s *vault.Store, kind string) []vault.AuditEntry {
	t.Helper()
	all, err := s.AuditTail(100, kind)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
