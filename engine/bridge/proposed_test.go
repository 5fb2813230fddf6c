package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"tai/engine/tool"
)

// TestModelProposedEntryStartsOnlyUnderTheDefault: an entry a model adds
// while nobody is asked (--auto, --yolo) starts for verification only
// under the default policy. One running inline code (sh -c), granting a
// folder (".") or setting a variable that changes what its runtime runs
// (NODE_OPTIONS) starts nothing, not even its script, and is stored
// nowhere; the refusal says what a person must do. The same entry added
// by a person starts.
func TestModelProposedEntryStartsOnlyUnderTheDefault(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "ran")
	exe := serverExe(t)
	entry := func(m map[string]any) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"p": m}})
		return string(b)
	}
	script := "touch " + mark + "; exec " + exe + " -test.run=^$"
	server := map[string]string{serverEnv: "1"}
	for _, mode := range []tool.Mode{tool.Auto, tool.Yolo} {
		for _, c := range []struct {
			name  string
			entry map[string]any
			want  string
		}{
			{"sh -c", map[string]any{"command": "sh", "args": []string{"-c", script}, "env": server}, "inline code (sh -c)"},
			{"bash -lc through env", map[string]any{"command": "env", "args": []string{"X=1", "bash", "-lc", script}, "env": server}, "inline code (bash -lc)"},
			{"a folder", map[string]any{"command": exe, "args": []string{"-test.run=^$", "."}, "env": server}, "access to "},
			{"a moved cache", map[string]any{"command": "npx", "args": []string{"-y", "x"}, "env": map[string]string{"npm_config_cache": "/tmp"}}, "access to /tmp"},
			{"NODE_OPTIONS", map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{serverEnv: "1", "NODE_OPTIONS": "--require=/tmp/x.js"}}, "env NODE_OPTIONS"},
		} {
			f := newFixture(t, mode, "")
			f.b.opts.RuntimeEnv = func() []string { return []string{"NODE_OPTIONS"} }
			byModel := tool.WithCaller(ctxT(t), tool.Caller{ByModel: true})
			rep, err := f.b.Add(byModel, AddRequest{Source: entry(c.entry)})
			if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Refused {
				t.Fatalf("%s, %s: %+v, %v", mode, c.name, rep, err)
			}
			mustContain(t, c.name, rep.Servers[0].Reason, "a person must add it at tai's prompt without --"+mode.String(), c.want)
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("%s, %s: the proposed script ran", mode, c.name)
			}
			if _, err := f.store.ServerGet("p"); err == nil {
				t.Fatalf("%s, %s: stored", mode, c.name)
			}
		}
	}
	// Asked in interactive mode, the person is told a model proposed it.
	f := newFixture(t, tool.Interactive, "")
	f.p.answer = "n"
	f.b.Add(tool.WithCaller(ctxT(t), tool.Caller{ByModel: true}), AddRequest{Source: entry(map[string]any{"command": "sh", "args": []string{"-c", script}})})
	if qs := f.p.questions(); len(qs) != 1 {
		t.Fatalf("interactive: %q", qs)
	} else {
		mustContain(t, "question", qs[0], "⚠ a model proposed this server, and it asks for inline code (sh -c)")
	}
	// A person's own add of the same entry starts it.
	f = newFixture(t, tool.Auto, "")
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: entry(map[string]any{"command": "sh", "args": []string{"-c", script}, "env": server,
		"sandbox": map[string]any{"write": []string{filepath.Dir(mark)}, "read": []string{filepath.Dir(exe)}}})})
	if err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("a person's add: %+v, %v", rep, err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("a person's add did not run the script: %v", err)
	}
}

// TestInlineCode: the command lines that run code written on them.
func TestInlineCode(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"sh", "-c", "x"}, "sh -c"},
		{[]string{"/bin/bash", "-ec", "x"}, "bash -ec"},
		{[]string{"python3", "-u", "-c", "x"}, "python3 -c"},
		{[]string{"uv", "run", "python", "-c", "x"}, "python -c"},
		{[]string{"node", "--eval=x"}, "node --eval"},
		{[]string{"node", "-e", "x"}, "node -e"},
		{[]string{"deno", "eval", "x"}, "deno eval"},
		{[]string{"perl", "-E", "x"}, "perl -E"},
		{[]string{"ruby", "-e", "x"}, "ruby -e"},
		{[]string{"npx", "-c", "x"}, "npx -c"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "."}, ""},
		{[]string{"python3", "-m", "server", "-c", "config.toml"}, ""},
		{[]string{"bash", "server.sh", "-c"}, ""},
		{[]string{"node", "dist/index.js", "-e", "prod"}, ""},
		{[]string{"deno", "run", "-A", "main.ts"}, ""},
	} {
		if got := inlineCode(c.argv); got != c.want {
			t.Errorf("inlineCode(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
}
