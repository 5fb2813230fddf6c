//go:build interop

package main

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestInteropEverythingElicitationForm: server-everything's
// trigger-elicitation-request, called by the model at the REPL, is put to
// the person field by field through the terminal: Enter takes a default,
// enums are answered by number, by title and as a comma-separated list, a
// wrong URI is explained and asked again, and the server gets the answers
// with the defaults of what was left out.
func TestInteropEverythingElicitationForm(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	s := everythingREPL(t, srv)
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("tai:default> ")

	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_everything_trigger_elicitation_request", `{}`)),
		llmtest.Say("the form went back"),
	)
	s.typeKeys("ask me for a form\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("? everything asks you to fill in a form:")
	s.expect("Please provide inputs for the following fields:")
	s.expect("answer it? [Y]es, [d]ecline, Esc cancels> ")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model requests while the form waits, want 1", n)
	}
	s.typeKeys("y")
	for _, step := range []struct{ prompt, keys string }{
		{"name (required)> ", "Ada\r"},
		{"check (y/n)> ", "\r"},
		{"firstLine [It was a dark and stormy night.]> ", "\r"},
		{"email (email)> ", "ada@example.com\r"},
		{"homepage (uri)> ", "ada.example\r"},
		{"wants a URI with its scheme", "https://ada.example\r"},
		{"birthdate (date)> ", "\r"},
		{"integer (whole number 1 to 100) [42]> ", "\r"},
		{"number (number 0 to 1000) [3.14]> ", "7\r"},
		{"3) Joey", ""},
		{"untitledSingleSelectEnum (1-6) [Monica]> ", "3\r"},
		{"untitledMultipleSelectEnum (1-5, comma-separated, 1 to 3 of them) [Guitar]> ", "\r"},
		{"3) Wonder Woman (hero-3)", ""},
		{"titledSingleSelectEnum (1-3) [hero-1]> ", "wonder woman\r"},
		{"titledMultipleSelectEnum (1-3, comma-separated, 1 to 3 of them) [fish-1]> ", "1, 3\r"},
		{"2) Dogs (pet-2)", ""},
		{"legacyTitledEnum (1-5) [pet-1]> ", "\r"},
		{"send this to everything? [Y]es, [e]dit, [d]ecline, Esc cancels> ", "y"},
		{"the form went back", ""},
		{"tai:default> ", ""},
	} {
		s.expect(step.prompt)
		if step.keys != "" {
			s.typeKeys(step.keys)
		}
	}
	reqs := srv.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 1 {
		t.Fatalf("tool results %+v", res)
	}
	for _, want := range []string{`"action": "accept"`, `"name": "Ada"`, `"email": "ada@example.com"`, `"homepage": "https://ada.example"`,
		`"firstLine": "It was a dark and stormy night."`, `"integer": 42`, `"number": 7`, `"untitledSingleSelectEnum": "Joey"`,
		`"titledSingleSelectEnum": "hero-3"`, `"legacyTitledEnum": "pet-1"`, `"fish-1"`, `"fish-3"`, `"Guitar"`} {
		if !strings.Contains(res[0].Text, want) {
			t.Fatalf("the server's result lacks %s:\n%s", want, res[0].Text)
		}
	}
	if strings.Contains(res[0].Text, `"check"`) || strings.Contains(res[0].Text, `"birthdate"`) {
		t.Fatalf("fields left empty without a default were sent:\n%s", res[0].Text)
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestInteropEverythingElicitationURLAndRoots: trigger-url-elicitation
// shows the URL with its host in punycode and waits for the person (the
// model is not asked again meanwhile); n declines and nothing opens.
// get-roots-list answers exactly the folders the server's sandbox grants
// for work: its cwd and its sandbox grant (not the package of its script,
// granted only to run it).
// Under --auto the form is declined at once with a note on the tool's
// line.
func TestInteropEverythingElicitationURLAndRoots(t *testing.T) {
	root, node := nodeModules(t)
	everything := filepath.Join(root, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cwd, data := t.TempDir(), t.TempDir()
	srv := llmtest.NewOpenAI(t)
	e := newEnv(t)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("> ")
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio"}, "cwd": cwd,
			"sandbox": map[string]any{"read": []string{data}}}}}, "", "  ")
	s.typeKeys("\x1b[200~" + string(cfg) + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("tai:default> ")

	srv.Push(
		llmtest.Calls(llmtest.Call("mcp_everything_trigger_url_elicitation", `{"url":"https://bücher.example/connect","message":"log in there"}`)),
		llmtest.Say("not opened"),
	)
	s.typeKeys("send me to a page\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("? everything asks you to open a URL:")
	s.expect("log in there")
	s.expect("https://xn--bcher-kva.example/connect")
	s.expect("host: xn--bcher-kva.example (reads as bücher.example)")
	s.expect("its host is an internationalized name")
	s.expect("open it in your browser? [y]es, [N]o, Esc cancels> ")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model requests while the URL question waits, want 1", n)
	}
	s.typeKeys("n")
	s.expect("not opened")
	s.expect("tai:default> ")
	if res := srv.Requests()[1].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "User declined to open the URL") {
		t.Fatalf("the server's answer: %+v", res)
	}

	s.typeKeys("/mcp call everything get-roots-list\r")
	s.expect("Current MCP Roots (")
	s.expect("tai:default> ")
	// The folders the entry names for work, as the sandbox grants them:
	// the cwd and the grant; not the package the script lies in.
	out := s.seen.String()
	out = out[strings.LastIndex(out, "Current MCP Roots"):]
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if uri, ok := strings.CutPrefix(strings.TrimSpace(line), "URI: "); ok {
			got = append(got, uri)
		}
	}
	var want []string
	for _, dir := range []string{cwd, data} {
		want = append(want, (&url.URL{Scheme: "file", Path: dir}).String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("roots %q, want exactly %q:\n%s", got, want, out)
	}
	s.typeKeys("\x04")
	s.wait()

	auto := llmtest.NewOpenAI(t)
	a := everythingREPL(t, auto, "--auto")
	a.expect("add them to tai (they start without asking: --auto)? [y/N]")
	a.typeKeys("y")
	a.expect("tai:default [auto]> ")
	a.typeKeys("/mcp enable everything\r")
	a.expect("tai:default [auto]> ")
	auto.Push(
		llmtest.Calls(llmtest.Call("mcp_everything_trigger_elicitation_request", `{}`)),
		llmtest.Say("declined, as it should be"),
	)
	a.typeKeys("ask me for a form\r")
	a.expect("↳ everything asked for a form, declined: --auto answers no server's questions")
	a.expect("declined, as it should be")
	a.expect("tai:default [auto]> ")
	if res := auto.Requests()[1].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "User declined") {
		t.Fatalf("the server's answer: %+v", res)
	}
	a.typeKeys("\x04")
	a.wait()
}

// TestInteropEverythingElicitationBesideAnotherCall: the model calls
// trigger-long-running-operation and trigger-elicitation-request of
// server-everything in one turn; over stdio a form that comes while both
// are in flight cannot be tied to either, but both are the person's, so
// the person is asked, never the form declined unseen. (Whether the
// long call is in flight yet when the form comes depends on timing; the
// bridge's TestElicitSeveralCalls pins down that case.)
func TestInteropEverythingElicitationBesideAnotherCall(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	s := everythingREPL(t, srv)
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("tai:default> ")

	srv.Push(
		llmtest.Calls(
			llmtest.Call("mcp_everything_trigger_long_running_operation", `{"duration":4,"steps":2}`),
			llmtest.Call("mcp_everything_trigger_elicitation_request", `{}`),
		),
		llmtest.Say("both came back"),
	)
	s.typeKeys("run both\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("? everything asks you to fill in a form:")
	s.expect("answer it? [Y]es, [d]ecline, Esc cancels> ")
	s.typeKeys("d")
	s.expect("both came back")
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String(), "declined: the request came outside any call") {
		t.Fatal("the form was declined unseen")
	}
	reqs := srv.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 2 || !strings.Contains(res[0].Text+res[1].Text, "Long running operation completed") {
		t.Fatalf("tool results %+v", res)
	}
	s.typeKeys("\x04")
	s.wait()
}
