package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
)

// promptServerOptions give the "+prompts" test server instructions and
// completion of greet's style.
func promptServerOptions() *sdk.ServerOptions {
	return &sdk.ServerOptions{
		Instructions: "Use echo to repeat what the person says.",
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			var vals []string
			if req.Params.Argument.Name == "style" {
				for _, v := range []string{"formal", "friendly"} {
					if strings.HasPrefix(v, req.Params.Argument.Value) {
						vals = append(vals, v)
					}
				}
			}
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: vals}}, nil
		},
	}
}

// addPrompts adds greet (two required arguments) to the test server.
func addPrompts(s *sdk.Server) {
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "greets someone", Arguments: []*sdk.PromptArgument{
		{Name: "name", Description: "who to greet", Required: true},
		{Name: "style", Description: "formal or friendly", Required: true},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		a := req.Params.Arguments
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: fmt.Sprintf("Greet %s in a %s way.", a["name"], a["style"])}},
		}}, nil
	})
}

// TestREPLPromptCommands: a server's prompt is a command /server:prompt,
// listed in /help and Tab-completed; its required arguments missing are
// asked one by one, with the server's completions on Tab; the rendered
// prompt is shown before it is sent, Esc cancels it and Enter sends it
// as the next turn; the server's instructions are shown when it is added
// and reach the model's system prompt.
func TestREPLPromptCommands(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: fmt.Sprintf("%d+prompts", os.Getpid())})
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added echoer (stdio), enabled for profile default")
	s.expect("1 prompt, run as /echoer:PROMPT: greet")
	s.expect("instructions for the model (pinned; /context shows them):")
	s.expect("Use echo to repeat what the person says.")
	s.expect("tai:default> ")

	s.typeKeys("/mcp\r")
	s.expect("prompts 1, run as /echoer:PROMPT (/help lists them)")
	s.expect("tai:default> ")

	s.typeKeys("/help\r")
	s.expect("Prompts of MCP servers")
	s.expect("/echoer:greet")
	s.expect("greets someone")
	s.expect("tai:default> ")

	// Tab completes the command; both arguments are asked; Tab completes
	// a value from the server; Esc cancels the rendered prompt.
	s.typeKeys("/echoer:gr\t")
	s.expect("/echoer:greet")
	s.typeKeys("\r")
	s.expect("name (who to greet): ")
	s.typeKeys("Ada\r")
	s.expect("style (formal or friendly): ")
	s.typeKeys("fr\t\r")
	s.expect("user: Greet Ada in a friendly way.")
	s.expect("Enter sends it, Esc cancels")
	s.typeKeys("\x1b")
	s.expect("(not sent)")
	s.expect("tai:default> ")
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("a cancelled prompt reached the model: %d requests", n)
	}

	// Tab after ARG= on the command line completes the value from the
	// server, as at the argument's question.
	s.typeKeys("/echoer:greet name=Ada style=fr\t\r")
	s.expect("user: Greet Ada in a friendly way.")
	s.expect("Enter sends it, Esc cancels")
	s.typeKeys("\x1b")
	s.expect("(not sent)")
	s.expect("tai:default> ")

	// Esc at an argument's question cancels.
	s.typeKeys("/echoer:greet\r")
	s.expect("name (who to greet): ")
	s.typeKeys("\x1b")
	s.expect("(cancelled; nothing sent)")
	s.expect("tai:default> ")

	// Arguments given as name=value, a value quoted; Enter sends.
	srv.Push(llmtest.Say("Good day, Ada Lovelace."))
	s.typeKeys("/echoer:greet name=\"Ada Lovelace\" style=formal\r")
	s.expect("user: Greet Ada Lovelace in a formal way.")
	s.expect("Enter sends it, Esc cancels")
	s.typeKeys("\r")
	s.expect("Good day, Ada Lovelace.")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, "Greet Ada Lovelace in a formal way.") || !strings.Contains(body, "Use echo to repeat what the person says.") {
		t.Fatalf("the request lacks the prompt or the instructions: %.3000s", body)
	}

	s.typeKeys("/context\r")
	s.expect("MCP server echoer's instructions (its words, fenced, after the system prompt)")
	s.expect("Use echo to repeat what the person says.")
	s.expect("tai:default> ")

	// /mcp grant completes the instructions too; granted already, nothing
	// is asked.
	s.typeKeys("/mcp grant echoer ins\t")
	s.expect("instructions")
	s.typeKeys("\r")
	s.expect("nothing granted")
	s.expect("tai:default> ")

	s.typeKeys("/nosuch:greet\r")
	s.expect("no MCP server nosuch is registered: /mcp lists them")
	s.expect("tai:default> ")

	s.typeKeys("/echoer:greet nme=x\r")
	s.expect("/echoer:greet takes no argument nme (it takes: name, style)")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// TestREPLFormSecretNotEchoed: a form field named like a secret is typed
// at the terminal without echo and shown as (hidden) among the answers;
// the server gets what was typed.
func TestREPLFormSecretNotEchoed(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "keyed", map[string]string{mcpServerEnv: fmt.Sprintf("%d+secretform", os.Getpid())})
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("mcp_keyed_login", `{}`)), llmtest.Say("logged in"))
	s.typeKeys("log me in\r")
	s.expect("[s]how everything: ")
	s.typeKeys("y")
	s.expect("answer it? [Y]es, [d]ecline, Esc cancels> ")
	s.typeKeys("y")
	s.expect("this looks like a secret")
	s.expect("(not shown)> ")
	from := s.mark
	s.typeKeys("hunter2-xyz\r")
	s.expect("api_key = (hidden)")
	s.expect("Esc cancels> ")
	s.typeKeys("y")
	s.expect("logged in")
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String()[from:], "hunter2") {
		t.Fatalf("the key was echoed:\n%s", s.seen.String()[from:])
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "accept, a key of 11 bytes") {
		t.Fatalf("the server did not get the key: %.2000s", body)
	}
}
