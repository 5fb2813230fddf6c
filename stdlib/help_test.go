package stdlib_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"tai/lua"
	"tai/stdlib"
)

// helpScreen installs the REPL's commands and one of the user's (a long
// help over two lines), runs /help and returns what it printed and the
// names of the commands registered at that moment, read from the host's
// registration table (tai.commands()).
func helpScreen(t *testing.T, line string) (string, []string) {
	t.Helper()
	var out bytes.Buffer
	h, err := lua.New(&lua.Options{Clean: true, ConfigDir: t.TempDir(), StateDir: t.TempDir(), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := h.DoString(ctx, `
		local repl = require("repl")
		repl.install_builtins()
		tai.command("greet", function() end, "greet someone by name: /greet NAME, or everyone in the folder's AGENTS.md when no name is given, which is long\nsecond line")
		repl.command(`+luaQuote(line)+`)
		local names = {}
		for _, c in ipairs(tai.commands()) do names[#names + 1] = c.name end
		return table.concat(names, " ")`, "help")
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), strings.Fields(got[0].(string))
}

// helpProblems lists what /help's screen fails to do: name every
// registered command on exactly one line of at most 80 columns.
func helpProblems(screen string, names []string) []string {
	var problems []string
	lines := strings.Split(screen, "\n")
	for _, name := range names {
		var found []string
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "/"+name {
				found = append(found, l)
			}
		}
		switch {
		case len(found) == 0:
			problems = append(problems, fmt.Sprintf("/help does not list the registered command /%s", name))
		case len(found) > 1:
			problems = append(problems, fmt.Sprintf("/help lists /%s on %d lines", name, len(found)))
		case utf8.RuneCountInString(found[0]) > 80:
			problems = append(problems, fmt.Sprintf("/help's line for /%s is %d columns, over 80: %q", name, utf8.RuneCountInString(found[0]), found[0]))
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "  /") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "      ") {
			problems = append(problems, fmt.Sprintf("/help's line %q goes on over the next line %q", l, lines[i+1]))
		}
	}
	return problems
}

// TestHelpListsEveryCommandOnOneLine: /help names every command the host
// has registered (the REPL's, /mcp and the user's), one line each,
// whatever their help says.
func TestHelpListsEveryCommandOnOneLine(t *testing.T) {
	screen, names := helpScreen(t, "/help")
	if len(names) < 10 {
		t.Fatalf("only %d commands registered: %v", len(names), names)
	}
	for _, p := range helpProblems(screen, names) {
		t.Error(p)
	}
	if t.Failed() {
		t.Logf("/help printed:\n%s", screen)
	}
	if !strings.Contains(screen, "/greet") || strings.Contains(screen, "second line") {
		t.Errorf("/help shows more than the first line of a help:\n%s", screen)
	}
}

// TestHelpCommandShowsAllOfIt: /help NAME shows the whole help, every line.
func TestHelpCommandShowsAllOfIt(t *testing.T) {
	screen, _ := helpScreen(t, "/help greet")
	if !strings.Contains(screen, "/greet  greet someone by name") || !strings.Contains(screen, "which is long\n  second line") {
		t.Errorf("/help greet printed:\n%s", screen)
	}
}

// TestHelpProblemsAreFound: the checker above reports a command missing,
// one listed twice and a line too long.
func TestHelpProblemsAreFound(t *testing.T) {
	screen, names := helpScreen(t, "/help")
	tests := []struct {
		name   string
		screen string
		names  []string
		want   string
	}{
		{"a command not listed", screen, append(names, "unlisted"), "/unlisted"},
		{"a command on two lines", screen + "\n  /quit again\n", names, "/quit on 2 lines"},
		{"a long line", strings.Replace(screen, "  /clear", "  /clear "+strings.Repeat("x", 80), 1), names, "/clear is"},
		{"a line wrapped", strings.Replace(screen, "  /clear ", "  /clear\n        ", 1), names, "goes on"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(helpProblems(tc.screen, tc.names), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("want a problem naming %q, got:\n%s", tc.want, got)
			}
		})
	}
}

// TestHelpListsTheTopics: /help lists every topic of the manual, one line
// each with its summary, before the commands.
func TestHelpListsTheTopics(t *testing.T) {
	screen, _ := helpScreen(t, "/help")
	topics, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	commands := strings.Index(screen, "Commands (")
	for _, tp := range topics {
		i := strings.Index(screen, "\n  "+tp.Name+" ")
		if i < 0 || i > commands {
			t.Errorf("/help does not list the topic %s before the commands", tp.Name)
		}
	}
	for _, l := range strings.Split(screen, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("/help prints a line of %d columns, over 80: %q", n, l)
		}
	}
	if !strings.Contains(screen, "/help TOPIC") || !strings.Contains(screen, "/help search WORD") {
		t.Errorf("/help does not say how to read and search the topics:\n%s", screen)
	}
}

// TestHelpTopicShowsAllOfIt: /help TOPIC prints the whole topic; a name
// that is a command and a topic both (/help sandbox) shows the command's
// help, then the topic; /help /NAME is the command alone.
func TestHelpTopicShowsAllOfIt(t *testing.T) {
	topics, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, tp := range topics {
		text[tp.Name] = tp.Text
	}
	screen, _ := helpScreen(t, "/help vault")
	if !strings.Contains(screen, strings.TrimRight(text["vault"], "\n")) {
		t.Errorf("/help vault does not print the topic whole:\n%s", screen)
	}
	screen, _ = helpScreen(t, "/help sandbox")
	cmd := strings.Index(screen, "/sandbox  ")
	topic := strings.Index(screen, strings.TrimRight(text["sandbox"], "\n"))
	if cmd < 0 || topic < 0 || cmd > topic {
		t.Errorf("/help sandbox: want the command's help, then the topic:\n%s", screen)
	}
	screen, _ = helpScreen(t, "/help /sandbox")
	if !strings.Contains(screen, "/sandbox  ") || strings.Contains(screen, text["sandbox"][:40]) {
		t.Errorf("/help /sandbox: want the command alone:\n%s", screen)
	}
}

// TestHelpSearch: /help search WORD shows each line of the manual holding
// the word, after its topic's name, and says when none does.
func TestHelpSearch(t *testing.T) {
	screen, _ := helpScreen(t, "/help search Passphrase")
	var hits []string
	for _, l := range strings.Split(screen, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.Contains(strings.ToLower(l), "passphrase") {
			hits = append(hits, f[0])
		}
	}
	if !slices.Contains(hits, "vault") || !slices.Contains(hits, "intro") {
		t.Errorf("/help search Passphrase found lines in %v, want vault and intro among them:\n%s", hits, screen)
	}
	if !strings.Contains(screen, "/help TOPIC reads one") {
		t.Errorf("no closing line:\n%s", screen)
	}
	screen, _ = helpScreen(t, "/help search zqxjkv")
	if !strings.Contains(screen, "no topic says zqxjkv") {
		t.Errorf("a word nowhere: %q", screen)
	}
	screen, _ = helpScreen(t, "/help nosuchthing")
	if !strings.Contains(screen, "no topic or command nosuchthing") || !strings.Contains(screen, "/help search nosuchthing") {
		t.Errorf("an unknown name: %q", screen)
	}
}
