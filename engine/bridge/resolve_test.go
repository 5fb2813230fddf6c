package bridge

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/github"
)

// TestAddGitHubResolves adds a GitHub URL: the resolver's entry goes
// through the same consent (which names the pass, file and line) and live
// verification as a paste, and is stored with source github:<owner>/<repo>.
func TestAddGitHubResolves(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	exe, _ := os.Executable()
	var asked []string
	f.b.opts.Resolve = func(ctx context.Context, url string) (github.Resolution, error) {
		asked = append(asked, url)
		src, err := github.Parse(url)
		if err != nil {
			return github.Resolution{}, err
		}
		return github.Resolution{
			Source: src,
			Entry: mcp.Entry{Name: "thing", Transport: mcp.TransportStdio, Command: exe, Args: []string{"-test.run=^$"},
				Env: map[string]string{serverEnv: "1"}, Source: src.ID()},
			Notes: []config.Note{{Server: "thing", Level: config.LevelInfo, Text: "also offered: https://mcp.example.org/mcp"}},
			Pass:  github.PassDeterministic, File: "README.md", Line: 42, Via: "run line, a package",
		}, nil
	}
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: "https://github.com/acme/thing?tab=readme-ov-file#install", Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added || rep.Servers[0].Server != "mine" {
		t.Fatalf("asked %v, report %+v", asked, rep)
	}
	mustContain(t, "found", rep.Servers[0].Found, "github.com/acme/thing", "deterministic pass", "README.md line 42")
	if len(rep.Notes) != 1 {
		t.Fatalf("notes = %+v", rep.Notes)
	}
	qs := f.p.questions()
	if len(qs) != 1 {
		t.Fatalf("questions = %q", qs)
	}
	mustContain(t, "consent", qs[0], "from:    github.com/acme/thing: found by the deterministic pass in README.md line 42", exe)
	st, err := f.store.ServerGet("mine")
	if err != nil || st.Source != "github:acme/thing" {
		t.Fatalf("stored %+v, %v", st, err)
	}

	// A resolver's failure is the add's error; nothing is stored or asked.
	f.b.opts.Resolve = func(ctx context.Context, url string) (github.Resolution, error) {
		return github.Resolution{}, errors.New("github.com/acme/none: the deterministic pass found no server entry")
	}
	_, err = f.b.Add(ctxT(t), AddRequest{Source: "github.com/acme/none"})
	if err == nil || !strings.Contains(err.Error(), "found no server entry") {
		t.Fatalf("err = %v", err)
	}
	if len(f.p.questions()) != 1 {
		t.Fatalf("a failed resolution asked: %q", f.p.questions())
	}

	// Without a resolver a GitHub URL is refused by name, never normalized.
	f.b.opts.Resolve = nil
	_, err = f.b.Add(ctxT(t), AddRequest{Source: "github.com/acme/thing"})
	if err == nil || !strings.Contains(err.Error(), "no resolver") {
		t.Fatalf("err = %v", err)
	}
}
