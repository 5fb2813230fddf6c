package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
)

// runInDir runs tai in the folder dir with no input.
func (e env) runInDir(t *testing.T, dir string, vars []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, taiBin, args...)
	cmd.Env = vars
	cmd.Dir = dir
	// A new session has no controlling terminal, so a passphrase prompt
	// cannot block on the terminal the tests run in.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	status := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running tai %v: %v", args, err)
	}
	return result{status, out.String(), errOut.String()}
}

// systemText returns the system message of a request ("" when none).
func systemText(r llmtest.Request) string {
	if len(r.Messages) > 0 && r.Messages[0].Role == "system" {
		return r.Messages[0].Text
	}
	return ""
}

// TestAgentsFilesReachTheSystemMessage: the default system prompt comes
// first, then AGENTS.md from the repository root down to the working
// directory, the nearest last (a CLAUDE.md where a folder has no
// AGENTS.md); a file outside the repository is not read.
func TestAgentsFilesReachTheSystemMessage(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	repo := filepath.Join(e.root, "repo")
	deep := filepath.Join(repo, "pkg", "deep")
	for _, d := range []string{filepath.Join(repo, ".git"), deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(e.root, "AGENTS.md"):      "OUTSIDE the repository",
		filepath.Join(repo, "AGENTS.md"):        "ROOT rule: run go test",
		filepath.Join(repo, "pkg", "AGENTS.md"): "PKG rule: keep it small",
		filepath.Join(deep, "CLAUDE.md"):        "CLAUDE rule, read where there is no AGENTS.md",
		filepath.Join(repo, "CLAUDE.md"):        "ROOT CLAUDE rule, not read beside an AGENTS.md",
	}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startREPLIn(t, deep, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("hello\r")
	s.expect("you said: hello")
	s.expect("tai:default> ")
	s.typeKeys("/context\r")
	s.expect("PKG rule")
	s.expect("deep/CLAUDE.md · ~") // /context says which file was read
	s.expect("history: 2 messages")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()

	sys := systemText(srv.Requests()[0])
	iTai, iRoot, iPkg, iClaude := strings.Index(sys, "You are tai"), strings.Index(sys, "ROOT rule"), strings.Index(sys, "PKG rule"), strings.Index(sys, "CLAUDE rule, read")
	if iTai < 0 || iRoot < iTai || iPkg < iRoot || iClaude < iPkg {
		t.Fatalf("system message out of order (tai %d, root %d, pkg %d, claude %d):\n%s", iTai, iRoot, iPkg, iClaude, sys)
	}
	for _, want := range []string{"working directory " + deep, "OS linux", "today is"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system message lacks %q", want)
		}
	}
	if strings.Contains(sys, "OUTSIDE") || strings.Contains(sys, "ROOT CLAUDE rule") {
		t.Fatalf("a file that is not to be read reached the model:\n%s", sys)
	}

	// The file names are a Lua list: init.lua adds CLAUDE.md.
	e.write(t, "init.lua", `table.insert(require("context").files, "CLAUDE.md")`)
	r := e.runInDir(t, deep, e.modelVars(srv), "-p", "again")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	reqs := srv.Requests()
	// listed, CLAUDE.md is read beside AGENTS.md too
	if sys := systemText(reqs[len(reqs)-1]); !strings.HasSuffix(strings.TrimSpace(sys), "CLAUDE rule, read where there is no AGENTS.md") ||
		!strings.Contains(sys, "ROOT CLAUDE rule") {
		t.Fatalf("CLAUDE.md is not the last part, or the listed one beside AGENTS.md is missing:\n%s", sys)
	}
}

// TestContinueCarriesThePreviousExchange: tai -c -p resumes the last
// conversation kept in the folder.
func TestContinueCarriesThePreviousExchange(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Say("the answer is 42"), llmtest.Say("yes, 42"), llmtest.Say("fresh"))
	vars := e.modelVars(srv)
	if r := e.runInput(t, vars, "", "-p", "what is the answer?"); r.status != 0 || r.stdout != "the answer is 42\n" {
		t.Fatalf("first turn: %d %q %q", r.status, r.stdout, r.stderr)
	}
	if r := e.runInput(t, vars, "", "-c", "-p", "are you sure?"); r.status != 0 || r.stdout != "yes, 42\n" {
		t.Fatalf("continued turn: %d %q %q", r.status, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	msgs := reqs[1].Messages
	if len(msgs) != 4 || msgs[1].Text != "what is the answer?" || msgs[2].Text != "the answer is 42" || msgs[3].Text != "are you sure?" {
		t.Fatalf("the continued turn carried %+v", msgs)
	}
	// Without -c a turn starts afresh.
	if r := e.runInput(t, vars, "", "-p", "new topic"); r.status != 0 {
		t.Fatal(r.stderr)
	}
	if n := len(srv.Requests()[2].Messages); n != 2 {
		t.Fatalf("a plain -p carried %d messages", n)
	}
}

// TestREPLResumeCompactShellAndUsage drives the conversation commands:
// usage after a turn as the API reports it, !echo without a request, the
// note reaching the next message, /compact replacing the history with the
// summary, /resume and tai -c bringing a conversation back.
func TestREPLResumeCompactShellAndUsage(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "hi there", InputTokens: 1234, OutputTokens: 56})
	srv.SetRule(fromToolResults)
	vars := e.modelVars(srv)
	s := startREPLIn(t, e.root, vars)
	s.expect("tai:default> ")
	s.typeKeys("first message\r")
	s.expect("hi there")
	s.expect("1,234 in · 56 out · session 1,234 in · 56 out")
	s.expect("tai:default> ")

	s.typeKeys("!echo hi\r")
	s.expect("hi\r\n")
	s.expect("tai:default> ")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("!echo made a request (%d in all)", n)
	}
	s.typeKeys("what did it say?\r")
	s.expect("you said: [The person ran a shell command themselves: `echo hi`")
	s.expect("tai:default> ")
	s.typeKeys("/usage\r")
	s.expect("over 2 turns")
	s.expect("tai:default> ")

	srv.Push(llmtest.Say("SUMMARY: greeted, ran echo hi"))
	s.typeKeys("/compact\r")
	s.expect("(compacted")
	s.expect("tai:default> ")
	s.typeKeys("go on\r")
	s.expect("you said: go on")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	summarize, next := reqs[len(reqs)-2], reqs[len(reqs)-1]
	if !strings.Contains(systemText(summarize), "Summarize") || !strings.Contains(summarize.LastUser(), "first message") {
		t.Fatalf("the summary request: %+v", summarize.Messages)
	}
	if len(next.Messages) != 4 || !strings.Contains(next.Messages[1].Text, "SUMMARY: greeted") || next.Messages[3].Text != "go on" {
		t.Fatalf("after /compact the history is %+v", next.Messages)
	}

	s.typeKeys("/new\r")
	s.expect("(new conversation)")
	s.expect("tai:default> ")
	s.typeKeys("another topic\r")
	s.expect("you said: another topic")
	s.expect("tai:default> ")
	s.typeKeys("/resume\r")
	s.expect("another topic")
	s.expect("first message")
	s.expect("tai:default> ")
	s.typeKeys("/resume TOPIC\r")
	from := s.mark
	s.expect("another topic")
	s.expect("/resume ID continues one")
	if strings.Contains(s.seen.String()[from:s.mark], "first message") {
		t.Fatal("/resume TOPIC listed a conversation without the word")
	}
	s.expect("tai:default> ")
	s.typeKeys("/resume 2\r")
	s.expect("(resumed")
	s.expect("tai:default> ")
	s.typeKeys("back again\r")
	s.expect("you said: back again")
	s.expect("tai:default> ")
	if last := srv.Requests()[len(srv.Requests())-1]; !strings.Contains(last.Messages[1].Text, "SUMMARY: greeted") {
		t.Fatalf("/resume did not bring the conversation back: %+v", last.Messages)
	}
	s.typeKeys("\x04")
	s.wait()

	// tai -c in the REPL continues the last one.
	s = startREPLIn(t, e.root, vars, "-c")
	s.expect("(continuing")
	s.expect("tai:default> ")
	s.typeKeys("still there?\r")
	s.expect("you said: still there?")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()
	if last := srv.Requests()[len(srv.Requests())-1]; len(last.Messages) < 6 || !strings.Contains(last.Messages[1].Text, "SUMMARY") {
		t.Fatalf("tai -c did not continue: %+v", last.Messages)
	}
}

// TestREPLConsentScreen: the consent screen shows the arguments and a
// diff of the change; "always" stops the questions for that tool only;
// a call its schema refuses goes back to the model without a question.
func TestREPLConsentScreen(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.root, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")

	// An invalid call: no question, the model hears why.
	srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"notes.txt"}`)))
	s.typeKeys("write without content\r")
	s.expect(`the tool said: Error: argument "content" is missing`)
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String(), "wants to run") {
		t.Fatal("an invalid call was put to the person")
	}

	// edit_file: the diff of the file; s shows everything; a allows it for
	// the rest of the session.
	srv.Push(llmtest.Calls(llmtest.Call("edit_file", `{"path":"notes.txt","old_string":"beta","new_string":"BETA"}`)))
	s.typeKeys("edit it\r")
	s.expect("⚠ edit_file wants to run")
	s.expect("path = notes.txt")
	s.expect("changes to notes.txt:")
	s.expect("@@ -1,3 +1,3 @@")
	s.expect("-beta")
	s.expect("+BETA")
	s.expect("[a]lways this session / always in this [p]roject / [s]how everything: ")
	s.typeKeys("a\r")
	s.expect("runs without asking for the rest of this session")
	s.expect("the tool said: ")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("edit_file", `{"path":"notes.txt","old_string":"gamma","new_string":"GAMMA"}`)))
	s.typeKeys("edit again\r")
	s.expect("the tool said: ")
	s.expect("tai:default> ")
	if b, _ := os.ReadFile(filepath.Join(e.root, "notes.txt")); string(b) != "alpha\nBETA\nGAMMA\n" {
		t.Fatalf("notes.txt: %q", b)
	}

	// write_file over the file still asks (always was for edit_file only),
	// with the diff of what it replaces; long text is folded until s.
	long := strings.Repeat("new line\\n", 30) + "LAST LINE\\n"
	srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"notes.txt","content":"alpha\nBETA\n`+long+`"}`)))
	s.typeKeys("rewrite it\r")
	s.expect("⚠ write_file wants to run")
	s.expect("replaces notes.txt:")
	s.expect("-GAMMA")
	s.expect("+new line")
	s.expect("[s]how everything: ")
	s.typeKeys("n\r")
	s.expect("✗ denied")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"fresh.txt","content":"`+long+`"}`)))
	s.typeKeys("a new file\r")
	s.expect("creates fresh.txt:")
	from := s.mark
	s.expect("more lines")
	s.expect("[s]how everything: ")
	if folded := s.seen.String()[from:s.mark]; strings.Count(folded, "+new line") >= 30 || !strings.Contains(folded, "+LAST LINE") {
		t.Fatalf("a long content was not folded to its first and last lines before s:\n%s", folded)
	}
	s.typeKeys("s\r")
	s.expect("+LAST LINE")
	s.expect("[s]how everything: ")
	s.typeKeys("y\r")
	s.expect("the tool said: ")
	s.expect("tai:default> ")

	// A hostile path (a FIFO, which a read would wait on forever) does not
	// hold the screen up.
	if err := syscall.Mkfifo(filepath.Join(e.root, "trap"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Push(llmtest.Calls(llmtest.Call("write_file", `{"path":"trap","content":"x"}`)))
	s.typeKeys("write the trap\r")
	s.expect("⚠ write_file wants to run")
	s.expect("[s]how everything: ")
	s.typeKeys("n\r")
	s.expect("✗ denied")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()
}

// TestProfilesWithoutSurprises: a stored profile that wins over the
// environment's key says so and how to switch; /profiles lists the
// built-in profiles; /profile show and /profile delete work.
func TestProfilesWithoutSurprises(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	vars := e.modelVars(srv)
	s := startREPLIn(t, e.root, vars)
	s.expect("tai:default> ")
	s.typeKeys("/profiles\r")
	s.expect("* default")
	s.expect("(built-in: from the environment: OPENAI_API_KEY)")
	s.expect("ollama")
	s.expect("(built-in: a local Ollama at 127.0.0.1:11434)")
	s.typeKeys("/profile new spare provider=openai model=m2 base_url=" + srv.BaseURL + " key_env=OPENAI_API_KEY\r")
	s.expect("saved profile spare")
	s.typeKeys("/profile show spare\r")
	s.expect("model      m2")
	s.typeKeys("/profile show\r")
	s.expect("default  (current)")
	s.typeKeys("/profile delete sp\t\r")
	s.expect("deleted profile spare")
	s.typeKeys("/profile use ol\t\r")
	s.expect("now using profile ollama")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	s.wait()

	r := e.runInput(t, vars, "", "-p", "hi")
	if r.status != 1 || !strings.Contains(r.stderr, `profile "ollama"`) || !strings.Contains(r.stderr, "/profile use default") ||
		strings.Contains(r.stderr, "set OPENAI_API_KEY") {
		t.Fatalf("status %d, stderr:\n%s", r.status, r.stderr)
	}
}

// TestPromptConsentStartsOnItsOwnLine: under tai -p on a terminal the
// consent screen starts on a line of its own, taking back the tool line it
// repeats, and the result names the tool.
func TestPromptConsentStartsOnItsOwnLine(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("write_file", `{"path":"a.txt","content":"x"}`)))
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv), "-p", "make a.txt")
	s.expect("⚙ write_file content=x path=a.txt\r\x1b[K⚠ write_file wants to run")
	s.expect("[s]how everything: ")
	s.typeKeys("y\r")
	s.expect("  write_file ✓")
	s.expect("the tool said: ")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// TestREPLOffersToCompact: near repl.context_limit the REPL says so and
// offers /compact; Ctrl-J continues a message on a further line.
func TestREPLOffersToCompact(t *testing.T) {
	e := newEnv(t)
	e.write(t, "init.lua", `require("repl").context_limit = 400`)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("one")
	s.expect("one")
	s.typeKeys("\n")
	s.expect("... ")
	s.typeKeys("two\r")
	s.expect("you said: one")
	s.expect("% of the 400 the model's context holds")
	s.expect("compact it now")
	srv.Push(llmtest.Say("SUMMARY: one two"))
	s.typeKeys("y\r")
	s.expect("(compacted")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	if reqs[0].LastUser() != "one\ntwo" {
		t.Fatalf("message %q", reqs[0].LastUser())
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestREPLAttachesFiles: @path, completed by Tab, attaches the file to
// the message; a name that is no file stays as it is.
func TestREPLAttachesFiles(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "src", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("explain @sr\t")
	s.expect("@src/")
	s.typeKeys("ma\t")
	s.expect("@src/main.go")
	s.typeKeys(" and @nothing.txt\r")
	s.expect("(attached src/main.go, 13 bytes)")
	s.expect("tai:default> ")
	got := srv.Requests()[0].LastUser()
	if want := "explain @src/main.go and @nothing.txt\n\n[File src/main.go:]\npackage main\n"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestREPLPromptShowsTheMode: the prompt names the approval mode when
// calls are not asked about.
func TestREPLPromptShowsTheMode(t *testing.T) {
	for _, mode := range []string{"auto", "yolo"} {
		e := newEnv(t)
		s := startREPL(t, e, "--"+mode)
		s.expect("tai:ollama [" + mode + "]> ")
		s.typeKeys("\x04")
		s.wait()
	}
}

// TestREPLCtrlDTypedAheadQuits: Ctrl-D typed while a turn runs ends tai
// once the turn is over, as it would at the prompt (it once hung in the
// line editor's Close).
func TestREPLCtrlDTypedAheadQuits(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("!sleep 1\r")
	s.expect("!sleep 1\r\n")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// TestContextNamesASkippedFile: an AGENTS.md in a folder every user can
// write to is not sent, and /context names it with the reason.
func TestContextNamesASkippedFile(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	repo := filepath.Join(e.root, "repo")
	drop := filepath.Join(repo, "drop")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(drop, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drop, "AGENTS.md"), []byte("PLANTED rule"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(drop, 0o777); err != nil {
		t.Fatal(err)
	}
	s := startREPLIn(t, drop, e.modelVars(srv))
	s.expect("tai:default> ")
	s.typeKeys("/context\r")
	s.expect(filepath.Join(drop, "AGENTS.md") + " not sent: its folder " + drop + " is writable by every user")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	s.wait()
}
