package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"

	"tai/engine/llm/llmtest"
)

// TestREPLToolsShowsWhatTheModelHas: with an MCP server enabled and the
// schemas of every tool within the budget, the model is offered every
// tool, the bridged one included; /tools lists the bridged tool with its
// server and pin state and marks what the last turn offered. Past the
// budget (repl.tool_share made tiny) selection starts: fewer tools are
// offered, and /context and /tools say how many and that tool_search
// reaches the rest.
func TestREPLToolsShowsWhatTheModelHas(t *testing.T) {
	e := newEnv(t)
	marker := fmt.Sprintf("%d-%s", os.Getpid(), t.TempDir())
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: marker})
	s.typeKeys("/mcp add " + cfg + "\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added echoer (stdio), enabled for profile default")
	s.expect("tai:default> ")

	s.typeKeys("hello\r")
	s.expect("you said: hello")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	all := reqs[len(reqs)-1].ToolNames()
	if !slices.Contains(all, "mcp_echoer_echo") || !slices.Contains(all, "http_fetch") || len(all) < 25 {
		t.Fatalf("within the budget the model was offered %d tools: %v", len(all), all)
	}
	s.typeKeys("/tools\r")
	s.expect("mcp_echoer_echo")
	s.expect("echoer/echo")
	s.expect("granted, offered here")
	s.expect("1 from MCP servers (1 offered to this profile)")
	s.expect(fmt.Sprintf("* offered on the last turn: %d of %d", len(all), len(all)))
	s.expect("tai:default> ")
	s.typeKeys("/context\r")
	s.expect(fmt.Sprintf("── tools: all %d offered on the last turn", len(all)))
	s.expect("tai:default> ")

	s.typeKeys("= (function() require('repl').tool_share = 0.001 end)()\r")
	s.expect("tai:default> ")
	s.typeKeys("please list the folder\r")
	s.expect("you said: please list the folder")
	s.expect("tai:default> ")
	reqs = srv.Requests()
	some := reqs[len(reqs)-1].ToolNames()
	if len(some) >= len(all) || !slices.Contains(some, "tool_search") {
		t.Fatalf("past the budget the model was offered %d tools (of %d): %v", len(some), len(all), some)
	}
	s.typeKeys("/context\r")
	s.expect(fmt.Sprintf("── tools: %d of %d offered on the last turn", len(some), len(all)))
	s.expect("the rest are reachable through tool_search")
	s.expect("tai:default> ")
	s.typeKeys("/tools\r")
	s.expect(fmt.Sprintf("* offered on the last turn: %d of %d", len(some), len(all)))
	s.expect("the model finds the rest with tool_search")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if out := s.seen.String(); strings.Contains(out, "stack traceback") {
		t.Fatalf("a Lua error:\n%s", out)
	}
}

// TestREPLToolsFitsTheTerminal: /tools lays its columns out within the
// terminal's width: a long server/tool origin is cut visibly, never
// pushing the line past the edge.
func TestREPLToolsFitsTheTerminal(t *testing.T) {
	e := newEnv(t)
	marker := fmt.Sprintf("%d-%s+long", os.Getpid(), t.TempDir())
	s := startREPL(t, e, "--clean")
	s.expect("> ")
	cfg := serverConfig(t, "a-server-with-a-rather-long-name", map[string]string{mcpServerEnv: marker})
	s.typeKeys("/mcp add " + cfg + "\r")
	s.expect("answer> ")
	s.typeKeys("y")
	s.expect("2 tools: echo, summarize_the_documents_of_a_folder")
	s.expect("> ")
	const cols = 90
	if err := pty.Setsize(s.tty, &pty.Winsize{Rows: 50, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	s.typeKeys("/tools\r")
	s.expect("2 from MCP servers (")
	out := s.seen.String()
	out = out[strings.LastIndex(out, "/tools"):]
	rows := 0
	escapes := regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07`)
	for _, line := range strings.Split(escapes.ReplaceAllString(out, ""), "\r\n")[1:] {
		if strings.Contains(line, "2 from MCP servers (") {
			break
		}
		rows++
		if n := utf8.RuneCountInString(line); n > cols {
			t.Errorf("a /tools line of %d columns, past the terminal's %d:\n%s", n, cols, line)
		}
	}
	// a description is its whole first sentence, folded, not cut at 60-odd
	// characters
	if plain := strings.Join(strings.Fields(escapes.ReplaceAllString(out, "")), " "); !strings.Contains(plain, "a step limit and a deadline; returns its final answer.") {
		t.Errorf("the fork tool's description is cut:\n%s", out)
	}
	if rows < 25 || !regexp.MustCompile(`asks  a-server-with-a-\S*…  granted`).MatchString(out) {
		t.Fatalf("/tools did not list the long origin cut visibly (%d rows):\n%s", rows, out)
	}
	s.typeKeys("\x04")
	s.wait()
}
