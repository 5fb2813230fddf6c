package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
)

// addResources gives the test's MCP server two notes, a long-named one
// with a control character in its name, and a template.
func addResources(s *sdk.Server) {
	note := func(text string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: "test://notes/one", Name: "one", MIMEType: "text/plain", Size: 10}, note("first note"))
	s.AddResource(&sdk.Resource{URI: "test://notes/two", Name: "two", MIMEType: "text/plain"}, note("second note"))
	s.AddResource(&sdk.Resource{URI: "test://archive/" + strings.Repeat("deep/", 50) + "file.txt", Name: "deep\x1b[2J"}, note("deep"))
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://notes/{id}", Name: "note"}, note("a templated note"))
}

// TestREPLResources: /mcp resources lists a server's resources (name,
// URI, type, size) and templates, folded to the terminal, escapes shown;
// Tab after @ offers the server, after @server: its URIs; @server:uri
// attaches the resource to the message the model gets; a server that is
// not there or a URI it cannot read is a one-line note.
func TestREPLResources(t *testing.T) {
	e := newEnv(t)
	marker := fmt.Sprintf("%d-%s+resources", os.Getpid(), t.TempDir())
	srv := llmtest.NewOpenAI(t)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "notes", map[string]string{mcpServerEnv: marker})
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added notes (stdio), enabled for profile default")
	s.expect("tai:default> ")

	s.typeKeys("/mcp resources notes\r")
	s.expect("  deep")
	s.expect("test://archive/deep/")
	s.expect("      deep/")
	s.expect("one  test://notes/one  (text/plain, 10 bytes)")
	s.expect("two  test://notes/two  (text/plain)")
	s.expect("templates (read with a URI they make):")
	s.expect("note  test://notes/{id}")
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String(), "\x1b[2J") {
		t.Fatal("a resource's name cleared the screen")
	}

	// Tab: the server after @, then the URIs after @notes:.
	s.typeKeys("@notes:\t\t")
	s.expect("test://notes/one")
	s.expect("test://notes/two")
	s.typeKeys("\x15") // Ctrl-U: the line is dropped
	s.typeKeys("summarize @no\t")
	s.expect("summarize @notes:")
	s.typeKeys("test://notes/o\t")
	s.expect("@notes:test://notes/one")
	srv.Push(llmtest.Say("summarized"))
	s.typeKeys(" and @nosuch:x://y and @notes:test://gone\r")
	s.expect("(attached @notes:test://notes/one, ")
	s.expect("(no MCP server nosuch here: @nosuch:x://y is sent as text)")
	s.expect("(cannot read @notes:test://gone: ")
	s.expect("summarized")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	user := reqs[0].LastUser()
	for _, want := range []string{"[Resource test://notes/one of MCP server notes:]", "first note", "@nosuch:x://y"} {
		if !strings.Contains(user, want) {
			t.Fatalf("the message lacks %q:\n%s", want, user)
		}
	}
	s.typeKeys("/quit\r")
	s.wait()
}

// runManyResources serves, as the go-sdk would not, 300 resources, two
// whose URIs hold terminal escapes (a colour, a window title), and an
// empty list of templates.
func runManyResources() int {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"many","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"echo","description":"echoes","inputSchema":{"type":"object"}}]}`
		case "resources/list":
			var b strings.Builder
			b.WriteString(`{"resources":[{"uri":"test://many/a\u001b[31mred","name":"red"},{"uri":"test://many/b\u001b]0;TITLE\u0007","name":"title"}`)
			for i := range 300 {
				fmt.Fprintf(&b, `,{"uri":"test://many/%03d","name":"n"}`, i)
			}
			b.WriteString(`]}`)
			result = b.String()
		case "resources/templates/list":
			result = `{"resourceTemplates":[]}`
		default:
			result = `{}`
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
	}
	return 0
}

// TestREPLCompletionIsCleanAndCapped: Tab after @server: never puts a
// server's escape on the terminal (a URI holding one is not offered, and
// a line says so), and shows at most 200 URIs, saying how many more
// there are; what they all share is still completed.
func TestREPLCompletionIsCleanAndCapped(t *testing.T) {
	e := newEnv(t)
	marker := fmt.Sprintf("%d-%s+many", os.Getpid(), t.TempDir())
	s := startREPLWith(t, e, e.modelVars(llmtest.NewOpenAI(t)), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "many", map[string]string{mcpServerEnv: marker})
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added many (stdio), enabled for profile default")
	s.expect("tai:default> ")

	// No templates: the list is shown all the same.
	s.typeKeys("/mcp resources many\r")
	s.expect("  n  test://many/299")
	s.expect("tai:default> ")

	from := s.seen.Len()
	s.typeKeys("x @many:\t")
	s.expect("x @many:test://many/")
	s.typeKeys("\t")
	s.expect("(2 completions not offered: they hold control characters)")
	s.expect("(… 100 more completions: type more to narrow them)")
	// Taken from each next character in turn: all of them share no more
	// than the word typed, so nothing more is completed.
	s.expect("test://many/200")
	s.typeKeys("\x15/quit\r")
	s.wait()
	seen := s.seen.String()[from:]
	if strings.Contains(seen, "test://many/299") {
		t.Fatal("more than 200 completions were shown")
	}
	for _, esc := range []string{"\x1b[31m", "\x1b]0;", "\x07"} {
		if strings.Contains(seen, esc) {
			t.Fatalf("a server's escape %q reached the terminal", esc)
		}
	}
}
