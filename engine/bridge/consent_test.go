package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// entryJSON is a Claude Desktop config holding one entry.
func entryJSON(t testing.TB, name string, entry map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: entry}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// asked adds source with a person who answers no, checks that nothing was
// added, and returns the one question asked.
func asked(t *testing.T, f *fixture, source string) string {
	t.Helper()
	f.p.answer = "n"
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: source})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Outcome == Added {
		t.Fatalf("add = %+v", rep)
	}
	qs := f.p.questions()
	if len(qs) == 0 {
		t.Fatalf("nobody was asked: %+v", rep)
	}
	return qs[len(qs)-1]
}

// label is how wide the labels before the words of the consent screen
// are (consent.lua).
const label = "  headers: "

// TestConsentShowsEveryWordVisibly: whatever an entry's words hold, the
// consent screen shows each of them whole on lines of its own, with line
// breaks, escapes and invisible characters rendered visibly, so no part
// of the command can pass for another or scroll what runs out of sight;
// a line break is warned about. Answering no runs nothing.
func TestConsentShowsEveryWordVisibly(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "pwned")
	payload := "id > " + mark + "; exec node x" + strings.Repeat("\n", 60) + "  run:  npx -y @modelcontextprotocol/server-memory"
	long := strings.Repeat("A", 2500) + "\u200b" + strings.Repeat("B", 2500)
	tests := []struct {
		name  string
		entry map[string]any
		want  []string // lines, or parts of lines, the screen must show
		warn  bool     // a line-break warning is due
	}{
		{name: "newlines scroll a harmless line into view",
			entry: map[string]any{"command": "sh", "args": []string{"-c", payload}},
			want:  []string{"  run:     sh\n", "\n           -c\n", "\n           'id > /", strings.Repeat(`\n`, 20), "@modelcontextprotocol/server-memory'\n"},
			warn:  true},
		{name: "tab, carriage return, vertical tab",
			entry: map[string]any{"command": "sh", "args": []string{"-c", "a\tb\rc\vd"}},
			want:  []string{`'a\tb\rc\x0bd'`, "⚠ argv[2] holds a line break"}, warn: true},
		{name: "Unicode line separator",
			entry: map[string]any{"command": "sh", "args": []string{"x\u2028y"}},
			want:  []string{`'x\u2028y'`}, warn: true},
		{name: "bidi override reorders text",
			entry: map[string]any{"command": "sh", "args": []string{"-c", "rm -rf ~ #\u202e gnp.tac"}},
			want:  []string{`'rm -rf ~ #\u202e gnp.tac'`}},
		{name: "zero-width characters and tags",
			entry: map[string]any{"command": "np\u200dx", "args": []string{"a\u200bb", "\U000E0041\u2066"}},
			want:  []string{`'np\u200dx'`, `'a\u200bb'`, `'\U000e0041\u2066'`}},
		{name: "ANSI clear screen and window title",
			entry: map[string]any{"command": "sh", "args": []string{"\x1b[2J\x1b[H", "\x1b]0;title\a"}},
			want:  []string{`'\x1b[2J\x1b[H'`, `'\x1b]0;title\x07'`}},
		{name: "odd spaces and invalid UTF-8",
			entry: map[string]any{"command": "sh", "args": []string{"a\u00a0b\u3000c"}, "cwd": "/tmp/\u200b"},
			want:  []string{`'a\u00a0b\u3000c'`, `  cwd:     '/tmp/\u200b'`}},
		{name: "env names with line breaks and escapes",
			entry: map[string]any{"command": "sh", "env": map[string]string{"A\nrun:  npx ok": "v", "B\x1b[2J": "w"}},
			want:  []string{`  env:     'A\nrun:  npx ok=v'`, `'B\x1b[2J=w'`, `⚠ env 'A\nrun:  npx ok' holds a line break`}, warn: true},
		{name: "env value with a line break",
			entry: map[string]any{"command": "sh", "env": map[string]string{"X": "a\nb"}},
			want:  []string{`  env:     'X=a\nb'`}, warn: true},
		{name: "URL with a line separator",
			entry: map[string]any{"url": "http://127.0.0.1:9/mcp\u2028url: https://safe.example/"},
			want:  []string{`  url:     'http://127.0.0.1:9/mcp\u2028url: https://safe.example/'`}, warn: true},
		{name: "header names with escapes",
			entry: map[string]any{"url": "http://127.0.0.1:9/mcp", "headers": map[string]string{"X-A\x1b[2J\u202e": "v"}},
			want:  []string{`  headers: 'X-A\x1b[2J\u202e'  (values not shown)`}},
		{name: "a 5000-character word is folded, not cut",
			entry: map[string]any{"command": "sh", "args": []string{long}},
			want: []string{"  run:     sh\n           '" + strings.Repeat("A", screen.ShowWidth-1) + "\n           ↪ AAA", `A\u200bB`, "BBB'\n",
				"lines; it runs sh with 1 argument(s): scroll up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tool.Interactive, "")
			q := asked(t, f, entryJSON(t, "hostile", tt.entry))
			for _, l := range strings.Split(q, "\n") {
				if strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }) || screen.VisibleLine(l) != l {
					t.Errorf("line shows raw control or invisible characters: %q", l)
				}
				if screen.ShowWidth+len(label)+8 < len([]rune(l)) && !strings.HasPrefix(l, "  ⚠") && !strings.HasPrefix(l, "  (") {
					t.Errorf("line is %d characters wide: %q", len([]rune(l)), l)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(q, w) {
					t.Errorf("screen lacks %q:\n%s", w, q)
				}
			}
			if got := strings.Contains(q, "no real server needs a line break in its command line"); got != tt.warn {
				t.Errorf("line-break warning shown = %v, want %v:\n%s", got, tt.warn, q)
			}
			if !strings.HasSuffix(q, "\nAdd it? [y/d/N]") {
				t.Errorf("the question is not last: %q", q[max(0, len(q)-200):])
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("the payload ran although consent was refused")
			}
		})
	}
}

// TestConsentFoldsWithoutLoss: unfolding the consent screen's lines gives
// back every word of the argv exactly (as screen.VisibleLine shows it).
func TestConsentFoldsWithoutLoss(t *testing.T) {
	words := []string{"sh", "-c", strings.Repeat("x\n\u200b\x1b", 700), strings.Repeat("日本", 90)}
	sp := spawn{Server: "s", Transport: mcp.TransportStdio, Argv: words}
	var got []string
	for _, l := range strings.Split(render(t, sp.screenOf(func(s string) string { return s })), "\n") {
		switch {
		case strings.HasPrefix(l, "  run:"):
			got = append(got, strings.TrimLeft(l[len("  run:"):], " "))
		case strings.HasPrefix(l, strings.Repeat(" ", len(label))+screen.Continued):
			got[len(got)-1] += strings.TrimPrefix(l, strings.Repeat(" ", len(label))+screen.Continued)
		case strings.HasPrefix(l, strings.Repeat(" ", len(label))):
			got = append(got, strings.TrimPrefix(l, strings.Repeat(" ", len(label))))
		}
	}
	if len(got) != len(words) {
		t.Fatalf("%d words shown, want %d", len(got), len(words))
	}
	for i, w := range words {
		if want := screen.VisibleLine(screen.Quote(w)); got[i] != want {
			t.Errorf("word %d shown as %q, want %q", i, got[i], want)
		}
	}
}

// TestConsentWarnsSecretInArgv: a vault secret or a credential variable
// that ${…} puts on the command line (or in the URL's query) is warned
// about on the consent screen, with the env form to use instead, and so is
// one in env that a shell's -c script reads; one passed in env to a
// program that is not a shell is not.
func TestConsentWarnsSecretInArgv(t *testing.T) {
	t.Setenv("TAI_TEST_API_KEY", "k-literal-credential-123")
	onArgv := func(ref, kind string) []string {
		return []string{ref + " (" + kind + ") goes on the command line, where every user of this machine can read it in the process list (ps)", "pass it in env instead"}
	}
	tests := []struct {
		name  string
		entry map[string]any
		want  []string
	}{
		{name: "vault secret in args", entry: map[string]any{"command": "srv", "args": []string{"--token", "${gh}"}},
			want: append(onArgv("${gh}", "a vault secret"), `"env": {"GH": "${gh}"}`)},
		{name: "vault secret in the command", entry: map[string]any{"command": "/opt/${gh}/srv"},
			want: onArgv("${gh}", "a vault secret")},
		{name: "credential variable in args", entry: map[string]any{"command": "srv", "args": []string{"--key=${TAI_TEST_API_KEY}"}},
			want: append(onArgv("${TAI_TEST_API_KEY}", "a credential"), `"env": {"TAI_TEST_API_KEY": "${TAI_TEST_API_KEY}"}`)},
		{name: "through the entry's own env", entry: map[string]any{"command": "srv", "args": []string{"--token", "${T}"}, "env": map[string]string{"T": "${gh}"}},
			want: onArgv("${gh}", "a vault secret")},
		{name: "through a default", entry: map[string]any{"command": "srv", "args": []string{"${TAI_TEST_UNSET:-${gh}}"}},
			want: onArgv("${gh}", "a vault secret")},
		{name: "in the URL's query", entry: map[string]any{"url": "http://127.0.0.1:9/mcp?key=${gh}"},
			want: []string{"${gh} (a vault secret) goes into the URL's query, which web servers and proxies write to their logs", `"headers": {"Authorization": "Bearer ${gh}"}`}},
		{name: "through env into a shell's script", entry: map[string]any{"command": "sh", "args": []string{"-c", `curl -H "x: $T" https://example.com`}, "env": map[string]string{"T": "${gh}"}},
			want: []string{"${gh} (a vault secret) is in env T, which the shell script in the command line reads", "process list (ps)"}},
		{name: "through env into /usr/bin/env bash -c", entry: map[string]any{"command": "/usr/bin/env", "args": []string{"bash", "-ec", `exec srv --key "$K"`}, "env": map[string]string{"K": "${TAI_TEST_API_KEY}"}},
			want: []string{"${TAI_TEST_API_KEY} (a credential) is in env K, which the shell script in the command line reads"}},
		{name: "env read by a program that is not a shell: no warning", entry: map[string]any{"command": "srv", "args": []string{"-c", `$T`}, "env": map[string]string{"T": "${gh}"}}},
		{name: "in env: no warning", entry: map[string]any{"command": "srv", "env": map[string]string{"GH_TOKEN": "${gh}"}}},
		{name: "an ordinary variable in args: no warning", entry: map[string]any{"command": "srv", "args": []string{"${HOME}"}}},
		{name: "in the URL's path: no warning", entry: map[string]any{"url": "http://127.0.0.1:9/${TAI_TEST_PATH:-mcp}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tool.Interactive, "")
			if err := f.store.SecretSet("gh", "ghp_vaultSecretValue42", nil); err != nil {
				t.Fatal(err)
			}
			q := asked(t, f, entryJSON(t, "leaky", tt.entry))
			for _, w := range tt.want {
				if !strings.Contains(q, w) {
					t.Errorf("screen lacks %q:\n%s", w, q)
				}
			}
			if warned := strings.Contains(q, "⚠ ${"); warned != (len(tt.want) > 0) {
				t.Errorf("secret warning shown = %v:\n%s", warned, q)
			}
			for _, v := range []string{"ghp_vaultSecretValue42", "k-literal-credential-123"} {
				if strings.Contains(q, v) {
					t.Errorf("the screen shows a secret:\n%s", q)
				}
			}
		})
	}
}

// TestListShowsWordsAndMarksSecretInArgv: mcp_list shows every word of a
// server's command line on a line of its own, rendered visibly, and marks
// a server that puts a secret on it, never showing the secret.
func TestListShowsWordsAndMarksSecretInArgv(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	if err := f.store.SecretSet("gh", "ghp_vaultSecretValue42", nil); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	hostile := "x\n- evil (stdio, enabled here): npx harmless\x1b[2J\u202e"
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: entryJSON(t, "leaky", map[string]any{
		"command": exe, "args": []string{"-test.run=^$", "--token", "${gh}", hostile}, "env": map[string]string{serverEnv: "1"}})})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added {
		t.Fatalf("add = %+v, %v", rep, err)
	}
	mustContain(t, "consent", f.p.questions()[0], "${gh} (a vault secret) goes on the command line")
	f.add(t, "clean", nil)

	list, err := f.b.List(ctxT(t))
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if got := list[1].SecretInArgv; len(got) != 1 || got[0] != "${gh}" {
		t.Errorf("SecretInArgv of leaky = %q, want [${gh}]", got)
	}
	if got := list[0].SecretInArgv; len(got) != 0 {
		t.Errorf("SecretInArgv of clean = %q, want none", got)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_list", map[string]any{})
	if err != nil || res.IsError {
		t.Fatalf("mcp_list = %+v, %v", res, err)
	}
	out := text(res)
	mustContain(t, "mcp_list", out,
		"- leaky (stdio, enabled here):\n    "+screen.Quote(exe)+"\n    '-test.run=^$'\n    --token\n    '${gh}'\n",
		`    'x\n- evil (stdio, enabled here): npx harmless\x1b[2J\u202e'`,
		"⚠ secret in argv: ${gh}")
	if strings.Count(out, "⚠ secret in argv") != 1 {
		t.Errorf("mcp_list marks %d servers, want 1:\n%s", strings.Count(out, "⚠ secret in argv"), out)
	}
	if strings.Contains(out, "ghp_vaultSecretValue42") || strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("mcp_list shows a secret or a raw escape:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "- evil") {
			t.Errorf("an argument passes for a server of its own: %q", l)
		}
	}
}

// TestConsentRedactsURLCredentials: a password in a server's URL and a
// query value named like a credential are not shown on the consent screen
// (nor in the outcome's reason); the rest of the URL is.
func TestConsentRedactsURLCredentials(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	q := asked(t, f, entryJSON(t, "remote", map[string]any{"url": "http://alice:hunter2pass@127.0.0.1:9/mcp?api_key=sk-abcdef123456&region=eu-west"}))
	for _, secret := range []string{"hunter2pass", "sk-abcdef123456"} {
		if strings.Contains(q, secret) {
			t.Errorf("the consent screen shows %q:\n%s", secret, q)
		}
	}
	mustContain(t, "consent", q, "alice:", "@127.0.0.1:9/mcp?api_key=", "region=eu-west", "[REDACTED")
}

// TestLiteralParts: a reference is no secret to redact, the literal key
// beside one or in its default is.
func TestLiteralParts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"sk-live-literal", []string{"sk-live-literal"}},
		{"${MY_KEY}", nil},
		{"Bearer ${MY_KEY}", nil},
		{"${USER}:sk-live-abcdef", []string{":sk-live-abcdef"}},
		{"${KEY:-sk-default-123}", []string{"sk-default-123"}},
	} {
		if got := literalParts(c.in); !slices.Equal(got, c.want) {
			t.Errorf("literalParts(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestListMarksSecretThroughShellOnce: a vault secret that two env
// variables read by a shell's -c script carry is marked once.
func TestListMarksSecretThroughShellOnce(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	if err := f.store.SecretSet("gh", "ghp_vaultSecretValue42", nil); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: entryJSON(t, "shelly", map[string]any{
		"command": "sh", "args": []string{"-c", `exec "$EXE" -test.run='^$' "$T" "$U"`}, "cwd": filepath.Dir(exe), // the sandbox grants cwd
		"env": map[string]string{serverEnv: "1", "EXE": exe, "T": "${gh}", "U": "${gh}"}})})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added {
		t.Fatalf("add = %+v, %v", rep, err)
	}
	list, err := f.b.List(ctxT(t))
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if got := list[0].SecretInArgv; len(got) != 1 || got[0] != "${gh}" {
		t.Errorf("SecretInArgv = %q, want [${gh}]", got)
	}
}
