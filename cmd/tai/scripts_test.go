package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/mcp/oauth/oauthtest"
)

// fakeNpx puts an npx on a PATH it returns that starts this test binary's
// MCP server, so configs naming npx verify for real.
func fakeNpx(t *testing.T) string {
	t.Helper()
	return fakeNpxAs(t, "1")
}

// fakeNpxAs is fakeNpx with the server's mode (mcpServerEnv's value).
func fakeNpxAs(t *testing.T, mode string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The binary sits beside the script, in the folder a server's sandbox
	// grants as the runtime it runs with.
	bin := t.TempDir()
	server := filepath.Join(bin, "server")
	if err := os.Link(exe, server); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %q -test.run=^$\n", mcpServerEnv, mode, server)
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

func withPath(vars []string, path string) []string {
	out := make([]string, 0, len(vars))
	for _, v := range vars {
		if !strings.HasPrefix(v, "PATH=") {
			out = append(out, v)
		}
	}
	return append(out, "PATH="+path)
}

// repoScript is the absolute path of one of the repository's scripts (tai
// runs in the test's own folder).
func repoScript(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "scripts", name))
	if err != nil {
		panic(err)
	}
	return p
}

// copyFixture copies testdata/import/name to dst, creating its folder.
func copyFixture(t *testing.T, name, dst string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestScriptImportServers runs scripts/import-servers.lua on configs of
// five clients, as their documentation shows them, each kept where that
// client keeps it under HOME: with no argument it imports them all,
// reporting each file, what was added (the npx servers, which verify) and
// what was refused (the python ones, whose programs do not exist), then
// skips them all on a second run; a client or a file may be named.
func TestScriptImportServers(t *testing.T) {
	e := newEnv(t)
	places := map[string]string{
		"001-claude-desktop-memory.json":                     filepath.Join(e.config, "Claude", "claude_desktop_config.json"),
		"118-cursor-interpolation-workspacefolder-env.json":  filepath.Join(e.root, ".cursor", "mcp.json"),
		"005-vscode-filesystem-workspacefolder.json":         filepath.Join(e.config, "Code", "User", "mcp.json"),
		"022-codex-toml-playwright.toml":                     filepath.Join(e.root, ".codex", "config.toml"),
		"062-gemini-settings-cwd-dollar-and-braced-env.json": filepath.Join(e.root, ".gemini", "settings.json"),
	}
	for name, dst := range places {
		copyFixture(t, name, dst)
	}
	vars := withPath(e.vars(), fakeNpx(t))
	r := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), "--enable")
	for _, want := range []string{
		places["001-claude-desktop-memory.json"], "added    memory", "enabled  memory for profile ollama",
		places["005-vscode-filesystem-workspacefolder.json"], "added    filesystem",
		places["022-codex-toml-playwright.toml"], "added    playwright",
		places["118-cursor-interpolation-workspacefolder-env.json"], "refused  local-server: ", "needs ${API_KEY}",
		places["062-gemini-settings-cwd-dollar-and-braced-env.json"], "refused  pythontools: ", "needs ${EXTERNAL_API_KEY}",
		"claude-code: import: no claude-code config found",
		"3 added, 0 skipped (already there), 2 refused",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d: stdout lacks %q\nstdout:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
		}
	}
	if r.status != 1 {
		t.Fatalf("status %d with servers refused, want 1", r.status)
	}
	list := e.run(t, "-e", `for _, s in ipairs(assert(tai.mcp.list())) do print(s.name, s.enabled) end`)
	for _, want := range []string{"memory\ttrue", "filesystem\ttrue", "playwright\ttrue"} {
		if !strings.Contains(list.stdout, want) {
			t.Fatalf("tai.mcp.list lacks %q:\n%s%s", want, list.stdout, list.stderr)
		}
	}
	if strings.Contains(list.stdout, "local-server") || strings.Contains(list.stdout, "pythontools") {
		t.Fatalf("a refused server was stored:\n%s", list.stdout)
	}
	again := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), "claude-desktop", "vscode", "codex")
	if again.status != 0 || !strings.Contains(again.stdout, "0 added, 3 skipped") {
		t.Fatalf("second run: status %d\n%s%s", again.status, again.stdout, again.stderr)
	}
	file := e.runEnv(t, vars, "--yolo", repoScript("import-servers.lua"), places["001-claude-desktop-memory.json"])
	if file.status != 0 || !strings.Contains(file.stdout, "skipped  memory") {
		t.Fatalf("a file named: status %d\n%s%s", file.status, file.stdout, file.stderr)
	}
	if bad := e.runEnv(t, vars, repoScript("import-servers.lua"), "--bogus"); bad.status != 2 || !strings.Contains(bad.stderr, "usage:") {
		t.Fatalf("bad flag: status %d, %s", bad.status, bad.stderr)
	}
	if none := newEnv(t).run(t, repoScript("import-servers.lua")); none.status != 1 || !strings.Contains(none.stderr, "no config file found") {
		t.Fatalf("no config anywhere: status %d, %s%s", none.status, none.stdout, none.stderr)
	}
}

// TestScriptAddServers runs scripts/add-servers.lua on a JSON and a TOML
// file with --profile: both are added and enabled for that profile only;
// without --profile, for the current one; a profile that does not exist
// is refused before anything is added.
func TestScriptAddServers(t *testing.T) {
	e := newEnv(t)
	js := filepath.Join(e.root, "servers.json")
	toml := filepath.Join(e.root, "more.toml")
	if err := os.WriteFile(js, []byte(`{"mcpServers": {"one": {"command": "npx", "args": ["one"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, []byte("[mcp_servers.two]\ncommand = \"npx\"\nargs = [\"two\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "-e", `assert(tai.profiles.save{name = "work", provider = "openai", model = "m", key_env = "WORK_KEY"})`); r.status != 0 {
		t.Fatalf("saving the profile: %d %s", r.status, r.stderr)
	}
	vars := withPath(e.vars(), fakeNpx(t))
	if bad := e.runEnv(t, vars, "--yolo", repoScript("add-servers.lua"), "--profile", "wrok", js); bad.status != 2 || !strings.Contains(bad.stderr, "wrok") {
		t.Fatalf("unknown profile: status %d\n%s%s", bad.status, bad.stdout, bad.stderr)
	}
	r := e.runEnv(t, vars, "--yolo", repoScript("add-servers.lua"), "--profile", "work", js, toml)
	for _, want := range []string{"added one", "added two", "  enabled for work", "one              stdio 1 tools, enabled for: work", "two              stdio 1 tools, enabled for: work"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d: stdout lacks %q:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
		}
	}
	if r.status != 0 {
		t.Fatalf("status %d", r.status)
	}
	three := filepath.Join(e.root, "three.json")
	if err := os.WriteFile(three, []byte(`{"mcpServers": {"three": {"command": "npx", "args": ["three"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// No key is set, so the current profile is the local Ollama one.
	r = e.runEnv(t, vars, "--yolo", repoScript("add-servers.lua"), three, js)
	if r.status != 0 || !strings.Contains(r.stdout, "three            stdio 1 tools, enabled for: ollama") || !strings.Contains(r.stdout, "skipped one") {
		t.Fatalf("status %d:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
}

// TestScriptLuaTool runs scripts/lua-tool.lua against the fake model,
// which calls the script's word_stats tool on a file, on one that does
// not exist and on one outside the folder: the counts, and the errors as
// failed tools' results, reach the model, and the answer is printed.
func TestScriptLuaTool(t *testing.T) {
	e := newEnv(t)
	e.writeRoot(t, "notes.txt", "one two\nthree\n")
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("word_stats", `{"path":"notes.txt"}`)),
		llmtest.Calls(llmtest.Call("word_stats", `{"path":"missing.txt"}`)),
		llmtest.Calls(llmtest.Call("word_stats", `{"path":"sub/../../secret.txt"}`)),
		llmtest.Say("notes.txt has 3 words."),
	)
	vars := append(e.vars(), "OPENAI_API_KEY=sk-test-key", "OPENAI_BASE_URL="+srv.BaseURL, "TAI_MODEL=fake-model")
	r := e.runEnv(t, vars, repoScript("lua-tool.lua"), "How many words are in notes.txt?")
	if r.status != 0 || r.stdout != "notes.txt has 3 words.\n" || !strings.Contains(r.stderr, `→ word_stats {"path":"notes.txt"}`) {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests to the model, want 4", len(reqs))
	}
	if names := reqs[0].ToolNames(); len(names) != 1 || names[0] != "word_stats" {
		t.Fatalf("tools offered: %v, want word_stats alone", names)
	}
	if got := reqs[1].ToolResults(); len(got) != 1 || got[0].IsError || got[0].Text != "notes.txt: 2 lines, 3 words, 14 bytes" {
		t.Fatalf("first tool result: %+v", got)
	}
	// OpenAI's wire has no error flag: tai marks a failed tool's text.
	if got := reqs[2].ToolResults(); len(got) != 1 || !strings.HasPrefix(got[0].Text, "Error: word_stats failed: ") || !strings.Contains(got[0].Text, "no such file") {
		t.Fatalf("second tool result: %+v", got)
	}
	if got := reqs[3].ToolResults(); len(got) != 1 || !strings.Contains(got[0].Text, "give a path inside the working directory") {
		t.Fatalf("a path out of the folder: %+v", got)
	}
	if bad := e.runEnv(t, vars, repoScript("lua-tool.lua")); bad.status != 2 || !strings.Contains(bad.stderr, "usage:") {
		t.Fatalf("no question: status %d, %s", bad.status, bad.stderr)
	}
}

// TestScriptNoteCommand loads scripts/note-command.lua from init.lua, as
// its header says, and drives /note at the REPL on a terminal: keeping a
// note, listing it, completing "rm" and deleting one; run as a script it
// does the same from the shell.
func TestScriptNoteCommand(t *testing.T) {
	e := newEnv(t)
	e.write(t, "init.lua", fmt.Sprintf("dofile(%q)\n", repoScript("note-command.lua")))
	if r := e.run(t, repoScript("note-command.lua"), "from", "the", "shell"); r.status != 0 || !strings.Contains(r.stdout, "noted (r1)") {
		t.Fatalf("as a script: status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	s := startREPL(t, e)
	s.expect("tai:ollama> ")
	s.typeKeys("/note buy milk\r")
	s.expect("noted (r2)")
	s.expect("tai:ollama> ")
	s.typeKeys("/note\r")
	s.expect("r2  ")
	s.expect("buy milk")
	s.expect("r1  ")
	s.expect("from the shell")
	s.expect("tai:ollama> ")
	s.typeKeys("/note r\t")
	s.expect("/note rm")
	s.typeKeys(" r2\r")
	s.expect("deleted r2")
	s.expect("tai:ollama> ")
	s.typeKeys("/note rm r9\r")
	s.expect("/note: vault: not found: record r9 was never stored")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	r := e.run(t, repoScript("note-command.lua"))
	if r.status != 0 || strings.Contains(r.stdout, "buy milk") || !strings.Contains(r.stdout, "from the shell") {
		t.Fatalf("listing after the REPL: status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
}

// TestScriptLogin runs scripts/login.lua against the in-process OAuth
// fakes, with $BROWSER following the authorization redirects to tai's
// loopback listener: the server is added (stored disabled, needing a
// login), logged in to, enabled, and its tool listed; then its tool
// answers with the login's scope.
func TestScriptLogin(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{PRMScopes: []string{"notes:read"}})
	e := newEnv(t)
	vars := append(e.vars(), "BROWSER="+browserScript(t, `exec curl -sL -o /dev/null "$1"`))
	r := e.runEnv(t, vars, "--auto", repoScript("login.lua"), srv.URL(), "notes")
	for _, want := range []string{"added notes", `Logged in to notes (scope notes:read); 1 tools; enabled for profile "ollama".`, "  whoami"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d: stdout lacks %q\nstdout:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
		}
	}
	if r.status != 0 || !strings.Contains(r.stderr, "Log in to notes in your browser: "+strings.SplitN(srv.Issuer(), "/", 3)[0]) {
		t.Fatalf("status %d, stderr:\n%s", r.status, r.stderr)
	}
	call := e.run(t, "-e", `local r = assert(tai.mcp.call{server = "notes", tool = "whoami"}) print(r.content[1].text)`)
	if call.status != 0 || !strings.Contains(call.stdout, "scope: notes:read") {
		t.Fatalf("calling the tool after the login: status %d\n%s%s", call.status, call.stdout, call.stderr)
	}
	if again := e.runEnv(t, vars, repoScript("login.lua"), "notes"); again.status != 0 || !strings.Contains(again.stdout, "Logged in to notes") {
		t.Fatalf("logging in again by name: status %d\n%s%s", again.status, again.stdout, again.stderr)
	}
	if bad := e.run(t, repoScript("login.lua"), "notes", "--callback-port", "x"); bad.status != 2 || !strings.Contains(bad.stderr, "usage:") {
		t.Fatalf("bad flag: status %d, %s", bad.status, bad.stderr)
	}
}

// TestScriptsAreDocumentedAndRun holds every script in scripts/ to its
// promises: a header saying how to run it, an entry in the manual's
// scripts topic, and a test here that runs it.
func TestScriptsAreDocumentedAndRun(t *testing.T) {
	dir := filepath.Join("..", "..", "scripts")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	listed := shipped(t)["scripts"]
	tests, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var testSrc strings.Builder
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		testSrc.Write(b)
	}
	n := 0
	for _, ent := range entries {
		name := ent.Name()
		if !strings.HasSuffix(name, ".lua") {
			continue
		}
		n++
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var header strings.Builder
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, "--") {
				break
			}
			header.WriteString(line + "\n")
		}
		if !strings.HasPrefix(header.String(), "-- "+name+": ") || !strings.Contains(header.String(), "scripts/"+name) {
			t.Errorf("%s: its first lines do not say what it does (-- %s: …) and how to run it (tai scripts/%s …)", name, name, name)
		}
		if !strings.Contains(listed, "tai scripts/"+name) && !strings.Contains(listed, "scripts/"+name+" ") {
			t.Errorf("%s: the scripts topic (/help scripts) does not list it", name)
		}
		if !strings.Contains(testSrc.String(), `repoScript("`+name+`")`) {
			t.Errorf("%s: no test runs it", name)
		}
	}
	if n < 6 {
		t.Fatalf("only %d scripts found in %s", n, dir)
	}
}
