package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
)

// emptyGraph is what the stand-in for server-memory's read_graph answers,
// as the real one does on an empty graph (indented by two).
const emptyGraph = "{\n  \"entities\": [],\n  \"relations\": []\n}"

// fakeAnswer is what the fake model says to a prompt that asks for no tool.
const fakeAnswer = "hello from the fake model"

// readReadme returns README.md.
func readReadme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tourSection is README.md's tour.
const tourSection = "## Five minutes with tai"

// fence is a fenced block of Markdown: its language and its lines.
type fence struct{ lang, text string }

// fences returns the fenced blocks of text, in order.
func fences(text string) []fence {
	var out []fence
	var cur *fence
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur, lines = &fence{lang: strings.TrimPrefix(line, "```")}, nil
		case cur != nil && line == "```":
			cur.text = strings.Join(lines, "\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			lines = append(lines, line)
		}
	}
	return out
}

// tourBlocks returns the sh blocks of README.md's tour, in order.
func tourBlocks(readme string) ([]string, error) {
	_, sec, ok := strings.Cut(readme, "\n"+tourSection+"\n")
	if !ok {
		return nil, fmt.Errorf("README.md has no %q section", tourSection)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var blocks []string
	for _, f := range fences(sec) {
		if f.lang == "sh" {
			blocks = append(blocks, f.text)
		}
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("README.md's tour has no sh blocks")
	}
	return blocks, nil
}

// emptyAnswer is what the fake model says of an empty graph, as the
// tour shows it.
const emptyAnswer = "Nothing yet: the memory graph is empty."

// tourRule is the fake model of the tour: a prompt offered the memory
// server's read_graph calls it, then answers with what it read
// (emptyAnswer for an empty graph); any other prompt gets fakeAnswer.
func tourRule(r llmtest.Request) llmtest.Turn {
	if results := r.ToolResults(); len(results) > 0 {
		if results[0].Text == emptyGraph {
			return llmtest.Say(emptyAnswer)
		}
		return llmtest.Say("the graph: " + results[0].Text)
	}
	for _, name := range r.ToolNames() {
		if name == "mcp_memory_read_graph" && strings.Contains(r.LastUser(), "remember") {
			return llmtest.Calls(llmtest.Call(name, `{}`))
		}
	}
	return llmtest.Say(fakeAnswer)
}

// TestNewcomerTour runs the sh blocks of README.md's "Five minutes with
// tai" as written, in order, the way a newcomer would: a fresh HOME with
// nothing set but a model (the fake, at OPENAI_BASE_URL), tai and a
// stand-in npx on PATH, in the checkout. A go line (the build) is left
// out, since this test runs the binary it built; the serve block runs
// until its banner, then a client lists the tools and tai is stopped.
func TestNewcomerTour(t *testing.T) {
	blocks, err := tourBlocks(readReadme(t))
	if err != nil {
		t.Fatal(err)
	}
	banner := tourBanner(readReadme(t))
	if len(banner) < 3 {
		t.Fatalf("the tour shows %d lines of the server's banner, after its serve block: %q", len(banner), banner)
	}
	home, checkout, vars := newcomerWorld(t)
	var stdout, stderr strings.Builder
	servedOnce := false
	for i, block := range blocks {
		var script []string
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, "go ") {
				continue
			}
			if strings.Contains(line, "tai --serve-mcp") {
				runTourScript(t, i, strings.Join(script, "\n"), checkout, vars, &stdout, &stderr)
				script = nil
				serveTourLine(t, line, checkout, vars, filepath.Join(home, ".config", "tai", "mcp-key"), banner)
				servedOnce = true
				continue
			}
			script = append(script, line)
		}
		runTourScript(t, i, strings.Join(script, "\n"), checkout, vars, &stdout, &stderr)
	}
	out, errOut := stdout.String(), stderr.String()
	for _, want := range []string{
		version + "\n",     // tai -e 'print(tai.version)'
		fakeAnswer + "\n",  // tai -p
		"added    memory",  // the import script
		"enabled  memory",  // … with --enable
		emptyGraph + "\n",  // tai -e calling the tool
		emptyAnswer + "\n", // the model calling it
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the tour's output lacks %q; stdout:\n%s\nstderr:\n%s", want, out, errOut)
		}
	}
	if !strings.Contains(errOut, "⚙ mcp_memory_read_graph") {
		t.Errorf("the model's call of the memory server's tool is not shown on stderr:\n%s", errOut)
	}
	if !servedOnce {
		t.Error("the tour does not serve tai (no tai --serve-mcp line in its sh blocks)")
	}
	// The vault is where "Where files live" says, and the tour sealed it.
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "tai", "vault.db")); err != nil {
		t.Errorf("the vault is not at ~/.local/share/tai/vault.db: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sealed := exec.CommandContext(ctx, taiBin, "-e", "print(tai.vault.sealed())")
	sealed.Env = vars
	if got, err := sealed.Output(); err != nil || string(got) != "true\n" {
		t.Errorf("after the tour, tai.vault.sealed() printed %q (%v), want true", got, err)
	}
}

// newcomerWorld is what a newcomer has: a fresh HOME (returned), the
// checkout (where tai's scripts are), and an environment (returned) with
// nothing set but a model, the fake at OPENAI_BASE_URL, and a PATH holding
// tai and an npx that starts this test binary as a stand-in for
// @modelcontextprotocol/server-memory.
func newcomerWorld(t *testing.T) (home, checkout string, vars []string) {
	t.Helper()
	home = t.TempDir()
	bin := t.TempDir()
	if err := os.Symlink(taiBin, filepath.Join(bin, "tai")); err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewOpenAI(t)
	model.SetRule(tourRule)
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	vars = []string{
		"HOME=" + home,
		"PATH=" + bin + string(os.PathListSeparator) + fakeNpxAs(t, "1+memory"),
		"OPENAI_API_KEY=sk-newcomer",
		"OPENAI_BASE_URL=" + model.BaseURL,
		"TAI_MODEL=fake-model",
		"TAI_MCP_PORT=0", // the README's 8765 may be taken on this machine
		"TERM=xterm",
		"NO_COLOR=1",
	}
	return home, checkout, vars
}

// tourPrompt is the REPL's prompt in the tour, where a key is set.
const tourPrompt = "tai:default> "

// tourLine is a line the tour types at the REPL's prompt and the lines
// it shows tai answering.
type tourLine struct {
	typed string
	shows []string
}

// tourPromptLines returns what the tour types at the REPL's prompt, in
// order: the lines of its plain blocks that start with tourPrompt, each
// with the lines below it up to the next prompt or the block's end.
func tourPromptLines(readme string) []tourLine {
	_, sec, _ := strings.Cut(readme, "\n"+tourSection+"\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	var lines []tourLine
	for _, f := range fences(sec) {
		if f.lang != "" {
			continue
		}
		in := false
		for _, line := range strings.Split(f.text, "\n") {
			if typed, ok := strings.CutPrefix(line, tourPrompt); ok {
				lines = append(lines, tourLine{typed: typed})
				in = true
			} else if in && strings.TrimSpace(line) != "" {
				lines[len(lines)-1].shows = append(lines[len(lines)-1].shows, line)
			}
		}
	}
	return lines
}

// ansi is a terminal escape sequence, or a carriage return.
var ansi = regexp.MustCompile("\x1b\\[[0-9;?]*[a-zA-Z]|\r")

// digits is a number as tai prints one: 5, 8,459.
var digits = regexp.MustCompile(`[0-9][0-9,]*`)

// blanks is a run of blanks and line breaks.
var blanks = regexp.MustCompile(`\s+`)

// notShown lists the lines the tour shows that the screen lacks. The
// screen is read as a person sees it (escapes taken out), with the
// checkout's path written as the tour writes it, /home/you/tai, and its
// blanks and line breaks as single spaces (a longer path breaks a line
// elsewhere); numbers (times, token counts) may differ.
func notShown(screen, checkout string, shows []string) []string {
	screen = strings.ReplaceAll(ansi.ReplaceAllString(screen, ""), checkout, "/home/you/tai")
	screen = blanks.ReplaceAllString(screen, " ")
	var missing []string
	for _, line := range shows {
		want := digits.ReplaceAllString(regexp.QuoteMeta(blanks.ReplaceAllString(strings.TrimSpace(line), " ")), `[0-9][0-9,]*`)
		if !regexp.MustCompile(want).MatchString(screen) {
			missing = append(missing, line)
		}
	}
	return missing
}

// needsNetwork tells the tour's lines that reach a host on the internet
// (a remote server, its login, GitHub) from those a test can type.
func needsNetwork(line string) bool {
	return strings.Contains(line, "://") || strings.Contains(line, "github.com/") || strings.HasPrefix(line, "/mcp login ")
}

// TestNewcomerTourAtThePrompt types the tour's REPL lines as written in
// a fresh HOME: the pasted Claude Desktop config (answering y on the
// consent screen), the call of its tool, and a message the model answers
// by calling it (approved with y). Each line the tour shows tai answering
// must be on the screen. The lines that need the internet (a remote
// server's URL, a GitHub repository) are left to the person; the test
// says which it left.
func TestNewcomerTourAtThePrompt(t *testing.T) {
	tour := tourPromptLines(readReadme(t))
	_, checkout, vars := newcomerWorld(t)
	s := startREPLIn(t, checkout, vars)
	s.expect(tourPrompt)
	pasted, called, approved := false, false, false
	var shows []string
	for _, tl := range tour {
		line := tl.typed
		if !needsNetwork(line) {
			shows = append(shows, tl.shows...)
		}
		switch {
		case needsNetwork(line):
			t.Logf("left to the person (needs the internet): %s", line)
		case strings.HasPrefix(line, "{"):
			s.typeKeys("\x1b[200~" + line + "\x1b[201~\r")
			s.expect("Add it? [y/d/N]")
			s.expect("answer> ")
			s.typeKeys("y")
			s.expect("added memory (stdio), enabled for profile default")
			s.expect(tourPrompt)
			pasted = true
		case !strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "="):
			s.typeKeys(line + "\r")
			s.expect("[s]how everything: ")
			s.typeKeys("y")
			s.expect(emptyAnswer)
			s.expect(tourPrompt)
			approved = true
		default:
			s.typeKeys(line + "\r")
			if strings.HasPrefix(line, "/mcp call memory read_graph") {
				s.expect(`"entities": []`)
				called = true
			}
			s.expect(tourPrompt)
		}
	}
	if !pasted || !called || !approved {
		t.Errorf("the tour's REPL lines %q do not paste a config (%v), call its tool (%v) and approve the model's call (%v)", tour, pasted, called, approved)
	}
	if len(shows) < 10 {
		t.Errorf("the tour shows only %d lines of tai's answers: %q", len(shows), shows)
	}
	for _, l := range notShown(s.seen.String(), checkout, shows) {
		t.Errorf("the tour shows %q, which tai did not", l)
	}
	s.typeKeys("\x04")
	if code := s.wait(); code != 0 {
		t.Errorf("tai exited %d after Ctrl-D", code)
	}
}

// runTourScript runs one block of the tour with sh -e, bounded, and fails
// the test when it fails.
func runTourScript(t *testing.T, block int, script, dir string, vars []string, stdout, stderr *strings.Builder) {
	t.Helper()
	if strings.TrimSpace(script) == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", script)
	cmd.Env, cmd.Dir = vars, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	stdout.WriteString(out.String())
	stderr.WriteString(errOut.String())
	if err != nil {
		t.Fatalf("the tour's sh block %d failed (%v):\n%s\nstdout:\n%s\nstderr:\n%s", block+1, err, script, out.String(), errOut.String())
	}
}

// tourBanner returns the lines the tour shows of the server's banner: the
// plain block right after the sh block that serves, but for a line "…"
// (what the tour leaves out).
func tourBanner(readme string) []string {
	_, sec, _ := strings.Cut(readme, "\n"+tourSection+"\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	fs := fences(sec)
	for i, f := range fs {
		if f.lang == "sh" && strings.Contains(f.text, "tai --serve-mcp") && i+1 < len(fs) && fs[i+1].lang == "" {
			var out []string
			for _, l := range strings.Split(fs[i+1].text, "\n") {
				if strings.TrimSpace(l) != "…" && strings.TrimSpace(l) != "" {
					out = append(out, l)
				}
			}
			return out
		}
	}
	return nil
}

// serveTourLine starts the tour's serve line, checks that the lines the
// tour shows of its banner are on its stderr (its port may differ),
// connects with the key the tour stored at keyFile, lists the tools and
// stops the server.
func serveTourLine(t *testing.T, line, dir string, vars []string, keyFile string, banner []string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exec "+line)
	cmd.Env, cmd.Dir = vars, dir
	s := startServing(t, cmd)
	for _, l := range notShown(s.stderr(), dir, banner) {
		t.Errorf("the tour shows %q of the banner, which tai did not print:\n%s", l, s.stderr())
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatalf("the tour's key file: %v", err)
	}
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("the tour's key file is readable by others: %v %v", st.Mode(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "newcomer", Version: "1"}, nil)
	hc := &http.Client{Transport: bearerRT{strings.TrimSpace(string(key)), &http.Transport{}}}
	sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connecting to the tour's server: %v\n%s", err, s.stderr())
	}
	list, err := sess.ListTools(ctx, nil)
	sess.Close()
	if err != nil {
		t.Fatalf("listing the tour's server's tools: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"chat", "completions", "read_file", "mcp_add"} {
		if !names[want] {
			t.Errorf("the tour's server does not serve %s: %v", want, names)
		}
	}
	if strings.Contains(s.stderr(), strings.TrimSpace(string(key))) {
		t.Error("the server's output shows the key")
	}
	if code := s.stop(t); code != 0 {
		t.Errorf("the tour's server exited %d on SIGTERM:\n%s", code, s.stderr())
	}
}

// readmeProblems lists what keeps README.md short enough to skim: at most
// 300 lines, at most 8 facts in "What sets it apart", one line each, the
// two commands (build and run, test) in sh blocks, and a pointer to the
// manual inside tai naming each of its topics.
func readmeProblems(readme string, topicNames []string) []string {
	var problems []string
	if n := strings.Count(readme, "\n"); n > 300 {
		problems = append(problems, fmt.Sprintf("README.md is %d lines, over 300: move the text to a topic of the manual (stdlib/help)", n))
	}
	_, facts, ok := strings.Cut(readme, "\n## What sets it apart\n")
	facts, _, _ = strings.Cut(facts, "\n## ")
	n := 0
	for _, l := range strings.Split(facts, "\n") {
		switch {
		case strings.HasPrefix(l, "- "):
			n++
		case n > 0 && strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "":
			problems = append(problems, fmt.Sprintf("a fact in \"What sets it apart\" goes on over a second line: %q", l))
		}
	}
	if !ok || n == 0 || n > 8 {
		problems = append(problems, fmt.Sprintf("\"What sets it apart\" holds %d facts; it holds 1 to 8, one line each", n))
	}
	var sh []string
	for _, f := range fences(readme) {
		if f.lang == "sh" {
			sh = append(sh, f.text)
		}
	}
	for _, cmd := range []string{"go run ./cmd/tai", "go test ./..."} {
		if !slices.Contains(sh, cmd) {
			problems = append(problems, fmt.Sprintf("README.md has no sh block holding just %q", cmd))
		}
	}
	_, rest, _ := strings.Cut(readme, "\n## Where the rest lives\n")
	for _, name := range topicNames {
		if !strings.Contains(rest, "`"+name+"`") {
			problems = append(problems, fmt.Sprintf("README.md's \"Where the rest lives\" does not name the topic %s", name))
		}
	}
	for _, want := range []string{"/help TOPIC", "tai --help TOPIC"} {
		if !strings.Contains(readme, want) {
			problems = append(problems, fmt.Sprintf("README.md does not say %q, where the manual is", want))
		}
	}
	return problems
}

// topicNames returns the names of the shipped topics.
func topicNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for name := range shipped(t) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// TestReadmeIsShort: README.md passes readmeProblems.
func TestReadmeIsShort(t *testing.T) {
	for _, p := range readmeProblems(readReadme(t), topicNames(t)) {
		t.Error(p)
	}
}

// TestReadmeProblemsAreFound: a long README, a ninth fact, a fact over
// two lines and a missing command are each reported.
func TestReadmeProblemsAreFound(t *testing.T) {
	readme := readReadme(t)
	tests := []struct{ name, readme, want string }{
		{"too long", readme + strings.Repeat("more\n", 300), "over 300"},
		{"a ninth fact", strings.Replace(readme, "\n- **MCP both ways**", "\n- one more\n- **MCP both ways**", 1), "holds 9 facts"},
		{"a fact on two lines", strings.Replace(readme, "\n- **MCP both ways**", "\n- a fact\n  that goes on\n- **MCP both ways**", 1), "goes on over a second line"},
		{"a topic not named", strings.Replace(readme, "| `oauth` |", "| logins |", 1), "does not name the topic oauth"},
		{"no test command", strings.Replace(readme, "```sh\ngo test ./...\n```", "", 1), `"go test ./..."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.readme == readme {
				t.Fatal("the mutation changed nothing; README.md's layout moved")
			}
			if got := strings.Join(readmeProblems(tc.readme, topicNames(t)), "\n"); !strings.Contains(got, tc.want) {
				t.Errorf("want a problem naming %q, got %q", tc.want, got)
			}
		})
	}
}
