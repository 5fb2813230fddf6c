package bridge

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"tai/engine/tool"
)

// TestPlainValueNotRedacted: a variable that holds a file's path
// (MEMORY_FILE_PATH, with PATH in its name) is no credential, so a
// server's error that names its value shows it, while a credential's
// value (GITHUB_TOKEN's) stays hidden in the same error.
func TestPlainValueNotRedacted(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	const token = "ghp_notshown0123456789"
	src, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": map[string]any{
		"command": "sh",
		"args":    []string{"-c", `echo "cannot open $MEMORY_FILE_PATH (token $GITHUB_TOKEN)" >&2; exit 3`},
		"env":     map[string]string{"MEMORY_FILE_PATH": "/path/to/memory.json", "GITHUB_TOKEN": token},
	}}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: string(src)})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Refused {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	reason := rep.Servers[0].Reason
	mustContain(t, "reason", reason, "cannot open /path/to/memory.json")
	if strings.Contains(reason, token) || strings.Contains(reason, "REDACTED:MEMORY_FILE_PATH") {
		t.Errorf("reason = %q: the token shown, or the path hidden", reason)
	}
}

// TestConsentShowsResolvedFolders: an entry that names "." is shown with
// the folder it means, where tai works, on its cwd line and in its
// sandbox line; the same entry started from another folder is asked
// about again, since it would grant another folder.
func TestConsentShowsResolvedFolders(t *testing.T) {
	project := t.TempDir()
	f := newFixture(t, tool.Interactive, "")
	f.b.opts.Dir = project
	exe := serverExe(t)
	src, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"command": exe, "args": []string{"-test.run=^$", "."}, "env": map[string]string{serverEnv: "1"},
	}}})
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: string(src)})
	if err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	qs := f.p.questions()
	if len(qs) != 1 {
		t.Fatalf("questions: %q", qs)
	}
	mustContain(t, "question", qs[0], "cwd:     "+project+" (tai's working directory)", "writes: its own state,\n           "+project+",")
	if strings.Contains(qs[0], " ., ") {
		t.Errorf("a relative grant shown: %s", qs[0])
	}
	f.b.Close()
	g := newFixture(t, tool.Interactive, f.path)
	g.b.opts.Dir = t.TempDir()
	if _, err := g.b.SetEnabled(ctxT(t), "fs", "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := g.reg.Dispatch(ctxT(t), "mcp_fs_echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if qs := g.p.questions(); len(qs) != 1 || !strings.Contains(qs[0], g.b.opts.Dir) {
		t.Fatalf("started from another folder, asked %q", qs)
	}
}

func serverExe(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestConsentShowsEnvValues: the consent screen shows each env value,
// visibly, but a secret's (a credential's name, or a value built from a
// vault secret), and warns of the variables that change what the
// runtime runs, NODE_OPTIONS among them, by the list in force.
func TestConsentShowsEnvValues(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	if err := f.store.SecretSet("DB_URL", "postgres://u:hunter2hunter2@db/x", nil); err != nil {
		t.Fatal(err)
	}
	f.p.answer = "n"
	const code = "--import=data:text/javascript,import('fs').then(f=>f.writeFileSync('/tmp/x','pwned'))"
	src, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem"},
		"env": map[string]string{"NODE_OPTIONS": code, "MEMORY_FILE_PATH": "/srv/memory.json",
			"GITHUB_TOKEN": "ghp_hidden0123456789", "DATABASE": "${DB_URL}", "MY_SETTING": "x\x1b[2J"},
	}}})
	if _, err := f.b.Add(ctxT(t), AddRequest{Source: string(src)}); err != nil {
		t.Fatal(err)
	}
	qs := f.p.questions()
	if len(qs) != 1 {
		t.Fatalf("questions: %q", qs)
	}
	q := qs[0]
	mustContain(t, "question", q, "'NODE_OPTIONS=--import=data:text/javascript,", "MEMORY_FILE_PATH=/srv/memory.json",
		"GITHUB_TOKEN  (value not shown: a secret)", "DATABASE (from ${DB_URL})  (value not shown: a secret)",
		`'MY_SETTING=x\x1b[2J'`, "⚠ env NODE_OPTIONS changes what the server's runtime runs")
	for _, bad := range []string{"ghp_hidden", "hunter2", "\x1b"} {
		if strings.Contains(q, bad) {
			t.Errorf("the screen shows %q:\n%s", bad, q)
		}
	}

	// The list is a setting: without NODE_OPTIONS in it, no warning.
	f.b.opts.RuntimeEnv = func() []string { return []string{"PYTHON*"} }
	f.p.asked = nil
	f.b.Add(ctxT(t), AddRequest{Source: string(src)})
	if qs := f.p.questions(); len(qs) != 1 || strings.Contains(qs[0], "⚠ env NODE_OPTIONS") {
		t.Errorf("warned with NODE_OPTIONS out of the list: %q", qs)
	}
}

// TestChangedRuntimeEnvAsksAgain: a stored server whose NODE_OPTIONS
// value changes is asked about again before it starts, showing the new
// value; another variable's value changing does not ask.
func TestChangedRuntimeEnvAsksAgain(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	src, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{
		"command": serverExe(t), "args": []string{"-test.run=^$"},
		"env": map[string]string{serverEnv: "1", "NODE_OPTIONS": "--max-old-space-size=64", "DATA_DIR": "/srv/a"},
	}}})
	if rep, err := f.b.Add(ctxT(t), AddRequest{Source: string(src)}); err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	f.b.Close()
	// Each start from a tai of its own, after the row changed.
	start := func(k, v string) []string {
		t.Helper()
		row, err := f.store.ServerGet("srv")
		if err != nil {
			t.Fatal(err)
		}
		row.Env[k] = v
		if err := f.store.ServerPut(row); err != nil {
			t.Fatal(err)
		}
		g := newFixture(t, tool.Interactive, f.path)
		defer g.b.Close()
		if _, err := g.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		return g.p.questions()
	}
	if qs := start("DATA_DIR", "/srv/b"); len(qs) != 0 {
		t.Fatalf("a changed DATA_DIR asked: %q", qs)
	}
	qs := start("NODE_OPTIONS", "--require=/tmp/evil.js")
	if len(qs) != 1 {
		t.Fatalf("a changed NODE_OPTIONS was not asked about: %q", qs)
	}
	mustContain(t, "question", qs[0], "NODE_OPTIONS=--require=/tmp/evil.js", "⚠ env NODE_OPTIONS")
}
