package stdlib_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"tai/stdlib"
)

// topicProblems lists what keeps a topic from reading as Neovim's :help
// reads, in a terminal of 80 columns: a summary of one short line, then
// a blank line, no line over 80 columns, no tab, no trailing blank, and
// none of Markdown's marks left over (fences, bold, table rows, links).
func topicProblems(t stdlib.Topic) []string {
	var problems []string
	say := func(f string, a ...any) { problems = append(problems, t.Name+": "+fmtf(f, a...)) }
	lines := t.Lines()
	if t.Summary == "" || utf8.RuneCountInString(t.Summary) > 60 {
		say("the first line is its summary, 1 to 60 columns: %q", t.Summary)
	}
	if len(lines) < 3 || lines[1] != "" {
		say("the summary is followed by a blank line, then the text")
	}
	for i, l := range lines {
		n := i + 1
		switch {
		case utf8.RuneCountInString(l) > 80:
			say("line %d is %d columns, over 80: %q", n, utf8.RuneCountInString(l), l)
		case strings.Contains(l, "\t"):
			say("line %d holds a tab", n)
		case strings.TrimRight(l, " ") != l:
			say("line %d ends in blanks", n)
		case strings.HasPrefix(strings.TrimSpace(l), "```"), markdownBold.MatchString(l), strings.HasPrefix(l, "|"), strings.Contains(l, "]("):
			say("line %d is Markdown, not plain text: %q", n, l)
		}
	}
	if !strings.HasSuffix(t.Text, "\n") || strings.HasSuffix(t.Text, "\n\n") {
		say("the text ends with exactly one line break")
	}
	return problems
}

// markdownBold is **bold** text.
var markdownBold = regexp.MustCompile(`\*\*[^*\s][^*]*\*\*`)

func fmtf(f string, a ...any) string { return fmt.Sprintf(f, a...) }

// TestTopicsReadInATerminal: every shipped topic passes topicProblems.
func TestTopicsReadInATerminal(t *testing.T) {
	topics, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	if len(topics) < 10 {
		t.Fatalf("only %d topics", len(topics))
	}
	for _, tp := range topics {
		for _, p := range topicProblems(tp) {
			t.Error(p)
		}
	}
}

// TestTopicsTypeNoSecretOnALine: no topic tells a person to store a
// secret by writing its value on a line (tai.vault.secret_set("NAME",
// "…"), left on the screen and in the history): /secret NAME asks for it
// without echo.
func TestTopicsTypeNoSecretOnALine(t *testing.T) {
	topics, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`secret_set\("[^"]*",\s*"`)
	for _, tp := range topics {
		if m := literal.FindString(tp.Text); m != "" {
			t.Errorf("%s: %q writes a secret's value on a line; /secret NAME asks for it", tp.Name, m)
		}
	}
}

// TestTopicProblemsAreFound: the checker reports each kind of fault.
func TestTopicProblemsAreFound(t *testing.T) {
	good := "a summary\n\nsome text\n"
	tests := []struct{ name, text, want string }{
		{"a long line", good + strings.Repeat("x", 81) + "\n", "over 80"},
		{"a tab", good + "\tx\n", "tab"},
		{"a fence", good + "```sh\n", "Markdown"},
		{"bold", good + "a **word**\n", "Markdown"},
		{"no summary", "\n\nx\n", "summary"},
		{"no blank after the summary", "a summary\ntext\nmore\n", "blank line"},
		{"trailing blanks", good + "x  \n", "ends in blanks"},
	}
	if p := topicProblems(topicOf("good", good)); len(p) > 0 {
		t.Fatalf("a good topic is faulted: %v", p)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(topicProblems(topicOf("x", tc.text)), "\n"); !strings.Contains(got, tc.want) {
				t.Errorf("want a problem naming %q, got %q", tc.want, got)
			}
		})
	}
}

func topicOf(name, text string) stdlib.Topic {
	summary, _, _ := strings.Cut(text, "\n")
	return stdlib.Topic{Name: name, Summary: summary, Text: text}
}

// TestUserTopicsReplaceAndAdd: a NAME.txt in the user's folder replaces
// the shipped topic NAME, a new name adds a topic, and an empty folder
// name (--clean) or a missing folder gives the shipped topics alone.
func TestUserTopicsReplaceAndAdd(t *testing.T) {
	shipped, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("vault.txt", "my vault notes\n\nkept on the NAS\n")
	write("team.txt", "how our team uses tai\n\nask Ann\n")
	write("notes.md", "not a topic\n")
	got, err := stdlib.Topics(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(shipped)+1 {
		t.Fatalf("%d topics, want %d shipped and 1 added", len(got), len(shipped))
	}
	byName := map[string]stdlib.Topic{}
	for _, tp := range got {
		byName[tp.Name] = tp
	}
	if v := byName["vault"]; v.Summary != "my vault notes" || v.Path != filepath.Join(dir, "vault.txt") {
		t.Errorf("vault = %+v, want the user's", v)
	}
	if tm := byName["team"]; !strings.Contains(tm.Text, "ask Ann") {
		t.Errorf("team = %+v", tm)
	}
	for _, d := range []string{"", filepath.Join(dir, "missing")} {
		if got, err := stdlib.Topics(d); err != nil || len(got) != len(shipped) {
			t.Errorf("Topics(%q) = %d topics, %v; want the %d shipped", d, len(got), err, len(shipped))
		}
	}
}

// TestSearchFindsLinesInEveryTopic: a word is found whatever its case,
// with its topic and line number, in topic order.
func TestSearchFindsLinesInEveryTopic(t *testing.T) {
	topics := []stdlib.Topic{topicOf("a", "first\n\nthe Vault here\nnothing\n"), topicOf("b", "second\n\nvault again\n")}
	got := stdlib.Search(topics, " VAULT ")
	want := []stdlib.Match{{Topic: "a", Line: 3, Text: "the Vault here"}, {Topic: "b", Line: 3, Text: "vault again"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Search = %+v, want %+v", got, want)
	}
	if got := stdlib.Search(topics, "  "); got != nil {
		t.Errorf("an empty word matched %v", got)
	}
}
