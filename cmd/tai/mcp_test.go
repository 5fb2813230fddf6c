package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
	"tai/mcp"
)

// mcpServerEnv makes the test binary serve a go-sdk MCP server with one
// echo tool over its stdio; a value ending in "+resources" adds the
// resources of addResources ("+many" serves runManyResources instead);
// one ending in "+bomb" adds a tool whose
// description is over the bounds tai accepts, one ending in "+long" a
// tool with a long name; "+secretform" a tool whose form asks an api_key.
const mcpServerEnv = "TAI_CMD_TEST_MCP"

func runMCPServer() int {
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+many") {
		return runManyResources()
	}
	var opts *sdk.ServerOptions
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+prompts") {
		opts = promptServerOptions()
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "echoer", Version: "1"}, opts)
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+prompts") {
		addPrompts(s)
	}
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes text back"},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed: " + a.Text}}}, nil, nil
		})
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+memory") {
		// read_graph answers as @modelcontextprotocol/server-memory's
		// does on an empty graph.
		sdk.AddTool(s, &sdk.Tool{Name: "read_graph", Description: "Read the entire knowledge graph"},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: emptyGraph}}}, nil, nil
			})
	}
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+long") {
		sdk.AddTool(s, &sdk.Tool{Name: "summarize_the_documents_of_a_folder", Description: "summarizes the documents of a folder"},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{}, nil, nil
			})
	}
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+bomb") {
		sdk.AddTool(s, &sdk.Tool{Name: "bomb", Description: strings.Repeat("d", 70000)},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{}, nil, nil
			})
		for _, name := range []string{"bad\n#9999 forged", strings.Repeat("n", 5000)} {
			sdk.AddTool(s, &sdk.Tool{Name: name, Description: "badly named"},
				func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{}, nil, nil
				})
		}
	}
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+resources") {
		addResources(s)
	}
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+wait") {
		addWaitTools(s)
	}
	if strings.HasSuffix(os.Getenv(mcpServerEnv), "+secretform") {
		// login asks for an api_key in a form and says how long the answer was.
		sdk.AddTool(s, &sdk.Tool{Name: "login", Description: "asks for a key"},
			func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "your key, please",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"api_key":{"type":"string"}},"required":["api_key"]}`)})
				if err != nil {
					return nil, nil, err
				}
				key, _ := res.Content["api_key"].(string)
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s, a key of %d bytes", res.Action, len(key))}}}, nil, nil
			})
	}
	if p := os.Getenv(mcpNeedsEnv); p != "" {
		// A configuration file read as the server starts, when there is one.
		if _, err := os.ReadFile(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintln(os.Stderr, "echoer:", err)
			return 1
		}
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// mcpNeedsEnv names a file the test's MCP server reads as it starts.
const mcpNeedsEnv = "TAI_CMD_TEST_NEEDS"

// TestREPLMCPServerForTheModel: a person pastes an MCP server's config at
// the REPL and answers one question, on the screen that shows the
// command, choosing to enable it; the model's next turn then calls its
// tool, asked for like any non-safe call; tai stops the server when it
// exits.
func TestREPLMCPServerForTheModel(t *testing.T) {
	e := newEnv(t)
	// The marker tells this test's server apart from any other test
	// binary's on the machine when the processes are counted at the end.
	marker := fmt.Sprintf("%d-%s", os.Getpid(), t.TempDir())
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: marker})
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\r")
	s.expect("first time:")
	s.expect("-test.run=^$")
	s.expect("env:     " + mcpServerEnv + "=" + marker[:20])
	s.expect("y: add it and enable it for profile default")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("added echoer (stdio), enabled for profile default")
	s.expect("1 tool: echo")
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String(), "add them to tai") || strings.Contains(s.seen.String(), "Start it?") {
		t.Fatalf("adding asked more than one question:\n%s", s.seen.String())
	}

	srv.Push(llmtest.Calls(llmtest.Call("mcp_echoer_echo", `{"text":"via the model"}`)))
	s.typeKeys("echo something\r")
	s.expect("mcp_echoer_echo")
	s.expect("echoer/echo")
	s.expect("[s]how everything: ")
	s.typeKeys("y\r")
	s.expect("echoed: via the model")
	s.expect("tai:default> ")
	s.typeKeys("/mcp\r")
	s.expect("connected")
	s.expect("tai:default> ")

	// Another profile has it not enabled: the switch says so, and how to
	// enable it; the model calling its tool is told the same.
	s.typeKeys("/profile new spare provider=openai model=m2 base_url=" + srv.BaseURL + " key_env=OPENAI_API_KEY\r")
	s.expect("saved profile spare")
	s.expect("enable for spare the MCP servers enabled for default (echoer)? [Y/n] ")
	s.typeKeys("n")
	s.expect("no server enabled for spare")
	s.typeKeys("/profile use spare\r")
	s.expect("now using profile spare")
	s.expect("no MCP server is enabled for spare")
	s.expect("enabled for other profiles only: echoer (default); /mcp enable echoer offers its tools here")
	s.expect("tai:spare> ")
	srv.Push(llmtest.Calls(llmtest.Call("mcp_echoer_echo", `{"text":"elsewhere"}`)))
	s.typeKeys("echo elsewhere\r")
	s.expect(`not enabled for profile "spare", so its tools are not offered (it is enabled for profile default): the person enables it here with /mcp enable echoer`)
	s.expect("tai:spare> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if out := s.seen.String(); strings.Contains(out, "not approved") {
		t.Fatalf("a call was refused:\n%s", out)
	}
	if pids := mcpServers(t, marker); len(pids) > 0 {
		t.Fatalf("MCP server processes left after tai exited: %v", pids)
	}
}

// TestREPLMCPAddNotesRefusedTools: /mcp add names each listed tool tai
// refused, and why, under the tools it added.
func TestREPLMCPAddNotesRefusedTools(t *testing.T) {
	e := newEnv(t)
	s := startREPLWith(t, e, e.modelVars(llmtest.NewOpenAI(t)), "--clean")
	s.expect("tai:default> ")
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: "1+bomb"})
	s.typeKeys("/mcp add " + cfg + "\r")
	s.expect("answer> ")
	s.typeKeys("y\r")
	s.expect("1 tool: echo")
	s.expect(`tool "bad\n#9999 forged" refused: its name holds control characters`)
	s.expect(`tool "` + strings.Repeat("n", mcp.ClipMax) + `…" (5000 bytes) refused: its name is 5000 bytes, over the 256 tai accepts`)
	s.expect(`tool "bomb" refused: its description is 70000 bytes, over the 65536 tai accepts`)
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// mcpServers lists the running processes that are this test's MCP server
// (a process with mcpServerEnv set to marker in its environment).
func mcpServers(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil || d.Name() == fmt.Sprint(os.Getpid()) {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == mcpServerEnv+"="+marker {
				out = append(out, d.Name())
			}
		}
	}
	return out
}

// TestREPLMCPAddFileShowsNotesFirst: /mcp add FILE shows what the file
// holds under "FILE holds ...", warnings included (here: it hands the
// server tai's own API key), before the person is asked to start the
// server, not after.
func TestREPLMCPAddFileShowsNotesFirst(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: "1", "K": "${OPENAI_API_KEY}"})
	path := filepath.Join(e.root, "servers.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startREPLWith(t, e, e.modelVars(srv), "--clean")
	s.expect("tai:default> ")
	s.typeKeys("/mcp add " + path + "\r")
	s.expect(path + " holds 1 server, 1 warning to read")
	s.expect("hands tai's own credential ${OPENAI_API_KEY}")
	s.expect("first time:")
	s.expect("answer> ")
	s.typeKeys("n\r")
	s.expect("(you said no; nothing was started)")
	s.expect("tai:default> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if strings.Contains(s.seen.String(), "sk-e2e-secret") {
		t.Fatal("the key shows")
	}
}

// serverConfig is a pasted config of one stdio server called name: this
// test binary in its MCP server mode (mcpServerEnv in env says how it
// behaves, and marks its processes).
func serverConfig(t *testing.T, name string, env map[string]string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": exe, "args": []string{"-test.run=^$"}, "env": env,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(cfg)
}

// TestREPLProfilesAndServers: /mcp enable takes several servers; an
// unknown profile (or a word that names nothing) is refused, naming what
// exists; /mcp disable --all; a new profile is offered the servers of the
// profile it came from, Enter taking them.
func TestREPLProfilesAndServers(t *testing.T) {
	e := newEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	entry := map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{mcpServerEnv: "1"}}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"alpha": entry, "beta": entry}})
	add := `assert(tai.mcp.add{source = [==[` + string(cfg) + `]==]})
for _, s in ipairs({"alpha", "beta"}) do assert(tai.mcp.disable{server = s}) end`
	if r := e.run(t, "--yolo", "--clean", "-e", add); r.status != 0 {
		t.Fatalf("adding: %d %s", r.status, r.stderr)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("/mcp enable alpha everything\r")
	s.expect("no server or profile is named everything; servers: alpha, beta; profiles: default, ollama")
	s.typeKeys("/mcp enable alpha --profile everything\r")
	s.expect("no profile is named everything; profiles: default, ollama")
	s.typeKeys("/mcp enable alpha beta\r")
	s.expect("alpha, beta enabled for profile ollama")
	s.typeKeys("/profile new work provider=ollama model=m1\r")
	s.expect("enable for work the MCP servers enabled for ollama (alpha, beta)? [Y/n] ")
	s.typeKeys("\r")
	s.expect("alpha, beta enabled for profile work")
	s.typeKeys("/mcp disable --all\r")
	s.expect("alpha, beta disabled for profile ollama")
	s.typeKeys("/quit\r")
	s.wait()
	r := e.run(t, "--clean", "-e", `for _, s in ipairs(tai.mcp.list()) do print(s.name, table.concat(s.profiles, ",")) end`)
	if r.status != 0 || r.stdout != "alpha\twork\nbeta\twork\n" {
		t.Fatalf("enabled: %d %q %q", r.status, r.stdout, r.stderr)
	}
}
