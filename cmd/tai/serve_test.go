package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
)

const serveKey = "serve-e2e-key-0123456789abcdef"

// echoInit is an init.lua adding a Lua tool, which the server serves as a
// native one.
const echoInit = `tai.tool{name = "lua_echo", description = "echoes its text argument", safe = true,
  parameters = {type = "object", properties = {text = {type = "string"}}},
  run = function(args) return "echo: " .. tostring(args.text) end}
`

// served is a running tai --serve-mcp.
type served struct {
	url  string
	cmd  *exec.Cmd
	mu   sync.Mutex
	errb bytes.Buffer
	done chan error
}

func (s *served) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errb.String()
}

// stop sends SIGTERM and waits (bounded) for tai to exit; it returns the
// exit status.
func (s *served) stop(t *testing.T) int {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 0
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("tai did not stop within 15s of SIGTERM; stderr:\n%s", s.stderr())
		return -1
	}
}

var urlLine = regexp.MustCompile(`serving MCP on (http://\S+)`)

// startServe runs tai --serve-mcp on a free port with vars, the key in
// $TAI_MCP_KEY, and waits for its banner.
func startServe(t *testing.T, e env, vars []string, args ...string) *served {
	t.Helper()
	return startServeWith(t, e, append(slices.Clip(vars), "TAI_MCP_KEY="+serveKey), nil,
		append([]string{"--serve-mcp", "--mcp-port", "0"}, args...)...)
}

// startServeWith runs tai with argv (which serves), vars and stdin, and
// waits for its banner.
func startServeWith(t *testing.T, e env, vars []string, stdin io.Reader, argv ...string) *served {
	t.Helper()
	cmd := exec.Command(taiBin, argv...)
	cmd.Env = vars
	cmd.Dir = e.root
	cmd.Stdin = stdin
	return startServing(t, cmd)
}

// startServing starts cmd, a tai that serves (or a shell that runs one),
// and waits for its banner.
func startServing(t *testing.T, cmd *exec.Cmd) *served {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, done: make(chan error, 1)}
	found := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		r := bufio.NewReader(pipe)
		url := ""
		for {
			line, err := r.ReadString('\n')
			s.mu.Lock()
			s.errb.WriteString(line)
			s.mu.Unlock()
			if m := urlLine.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
			// The banner ends with how to stop: then all of it was read.
			if url != "" && strings.HasPrefix(line, "Stop with Ctrl-C") {
				select {
				case found <- url:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		<-copied
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.url = <-found:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no banner within 20s; stderr:\n%s", s.stderr())
	}
	return s
}

type bearerRT struct {
	key  string
	next http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

func connectSDK(t *testing.T, url string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-e2e", Version: "1"}, nil)
	hc := &http.Client{Transport: bearerRT{serveKey, &http.Transport{}}}
	sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("go-sdk client: %v", err)
	}
	return sess
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestServeMCPWithTheGoSDKClient drives the built binary with the official
// go-sdk client: initialize, list, a native tool, a Lua tool from
// init.lua, chat and completions against the fake model; then SIGTERM.
func TestServeMCPWithTheGoSDKClient(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(func(r llmtest.Request) llmtest.Turn {
		if len(r.Tools) > 0 && r.LastUser() == "use the tool" && len(r.ToolResults()) == 0 {
			return llmtest.Calls(llmtest.Call("lua_echo", `{"text":"from the model"}`))
		}
		if res := r.ToolResults(); len(res) > 0 {
			return llmtest.Say("the tool said " + res[0].Text)
		}
		return llmtest.Say("fake answer to " + r.LastUser())
	})
	e := newEnv(t)
	e.write(t, "init.lua", echoInit)
	vars := append(e.vars(), "OPENAI_API_KEY=sk-e2e-secret", "OPENAI_BASE_URL="+srv.BaseURL, "TAI_MODEL=fake-model")
	s := startServe(t, e, vars)
	banner := s.stderr()
	for _, want := range []string{"--yolo", "claude mcp add --transport http", "bearer_token_env_var", "${env:TAI_MCP_KEY}", "serv"} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(banner, serveKey) {
		t.Fatalf("the banner shows the key:\n%s", banner)
	}

	sess := connectSDK(t, s.url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if init := sess.InitializeResult(); init.ServerInfo.Name != "tai" || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize result %+v", init)
	}
	list, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"read_file", "shell", "lua", "lua_echo", "chat", "completions"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	e.writeRoot(t, "notes.txt", "remember the milk\n")
	calls := []struct {
		name string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "notes.txt"}, "remember the milk"},
		{"lua_echo", map[string]any{"text": "hi"}, "echo: hi"},
		{"chat", map[string]any{"message": "hello"}, "fake answer to hello"},
		{"chat", map[string]any{"message": "use the tool"}, "the tool said echo: from the model"},
		{"completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "once"}}}, "fake answer to once"},
	}
	for _, c := range calls {
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.IsError || !strings.Contains(textOf(res), c.want) {
			t.Fatalf("%s: %q (isError %v), want %q", c.name, textOf(res), res.IsError, c.want)
		}
	}
	// The chat's second turn carried the first one's history.
	reqs := srv.Requests()
	last := reqs[len(reqs)-2]
	var users []string
	for _, m := range last.Messages {
		if m.Role == "user" {
			users = append(users, m.Text)
		}
	}
	if strings.Join(users, "|") != "hello|use the tool" {
		t.Fatalf("the chat's history is %q", users)
	}
	sess.Close()
	if status := s.stop(t); status != 0 {
		t.Fatalf("exit status %d after SIGTERM; stderr:\n%s", status, s.stderr())
	}
	if !strings.Contains(s.stderr(), "MCP server stopped") {
		t.Fatalf("no stop message:\n%s", s.stderr())
	}
}

// TestServeMCPStopsWithACallInFlight sends SIGTERM while a Lua tool is
// stuck: tai still exits within a bound.
func TestServeMCPStopsWithACallInFlight(t *testing.T) {
	e := newEnv(t)
	e.write(t, "init.lua", `tai.tool{name = "stuck", description = "never returns", safe = true,
  run = function() while true do end end}`)
	s := startServe(t, e, e.vars())
	sess := connectSDK(t, s.url)
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "stuck", Arguments: map[string]any{}})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the call reach the Lua state; the bound below is what is checked
	start := time.Now()
	s.stop(t)
	if d := time.Since(start); d > 12*time.Second {
		t.Fatalf("stopping took %v with a call in flight", d)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call never returned")
	}
}

func TestServeMCPUsage(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		args []string
		vars []string
		want string
	}{
		{"short key", []string{"--serve-mcp", "short"}, nil, "openssl rand -hex 32"},
		{"short key in TAI_MCP_KEY", []string{"--serve-mcp"}, []string{"TAI_MCP_KEY=short"}, "the key in TAI_MCP_KEY: the MCP server key is too weak"},
		{"no TAI_MCP_KEY", []string{"--serve-mcp", "--mcp-port", "0"}, nil, "TAI_MCP_KEY is not set: export TAI_MCP_KEY=$(openssl rand -hex 32)"},
		{"nothing on stdin", []string{"--serve-mcp", "-"}, nil, "--serve-mcp -: stdin ended before a key was given"},
		{"bad port", []string{"--serve-mcp", "--mcp-port", "99999"}, []string{"TAI_MCP_KEY=" + serveKey}, "not a port number"},
		{"bad env port", []string{"--serve-mcp"}, []string{"TAI_MCP_KEY=" + serveKey, "TAI_MCP_PORT=http"}, "TAI_MCP_PORT"},
		{"port without serve", []string{"--mcp-port", "9000"}, nil, "go with --serve-mcp"},
		{"serve with -e", []string{"--serve-mcp", "-e", "print(1)"}, []string{"TAI_MCP_KEY=" + serveKey}, "takes no -p, -e or script"},
		{"serve with a script", []string{"--serve-mcp", serveKey, "x.lua"}, nil, "takes no -p, -e or script"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.runEnv(t, append(e.vars(), tc.vars...), tc.args...)
			if r.status != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("status %d, stderr %q; want 2 and %q", r.status, r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "short\"") {
				t.Fatalf("the error quotes the key: %s", r.stderr)
			}
		})
	}
	// A sealed vault without its passphrase is refused at start, not per call.
	sealed := newEnv(t)
	if r := sealed.runEnv(t, append(sealed.vars(), "TAI_VAULT_PASSPHRASE=pw"), "-e", `assert(tai.vault.secret_set("tok", "sealed-secret-value-9")) assert(tai.vault.seal())`); r.status != 0 {
		t.Fatalf("sealing: %+v", r)
	}
	if r := sealed.runEnv(t, append(sealed.vars(), "TAI_MCP_KEY="+serveKey), "--serve-mcp", "--mcp-port", "0"); r.status != 1 || !strings.Contains(r.stderr, "cannot serve") || !strings.Contains(r.stderr, "TAI_VAULT_PASSPHRASE") {
		t.Fatalf("serving a sealed vault without the passphrase: %d %q", r.status, r.stderr)
	}
	// A port in use is named.
	s := startServe(t, e, e.vars())
	port := s.url[strings.LastIndex(s.url, ":")+1 : strings.LastIndex(s.url, "/")]
	r := e.runEnv(t, append(e.vars(), "TAI_MCP_KEY="+serveKey), "--serve-mcp", "--mcp-port", port)
	if r.status != 1 || !strings.Contains(r.stderr, "in use") {
		t.Fatalf("second server on port %s: %d %q", port, r.status, r.stderr)
	}
	s.stop(t)
}

// TestServeFromScript runs tai.serve from a script with the key in a vault
// secret.
func TestServeFromScript(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "-e", fmt.Sprintf(`assert(tai.vault.secret_set("mcp-key", %q))`, serveKey)); r.status != 0 {
		t.Fatalf("secret_set: %+v", r)
	}
	script := e.writeRoot(t, "serve.lua", `tai.tool{name = "from_script", description = "added by the script", safe = true, run = function() return "yes" end}
assert(tai.serve{key_secret = "mcp-key", port = 0})
print("served and stopped")
`)
	runServingScript(t, e, []string{script}, "from_script", "yes", "served and stopped")
}

// TestScriptServe runs scripts/serve.lua: refused without the secret, then
// serving its own tool with the key from the vault.
func TestScriptServe(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, repoScript("serve.lua")); r.status != 2 || !strings.Contains(r.stderr, "secret_set") {
		t.Fatalf("without the secret: %d %q", r.status, r.stderr)
	}
	if r := e.runEnv(t, append(e.vars(), "TAI_MCP_KEY="+serveKey), "-e", `assert(tai.vault.secret_set("mcp-key", os.getenv("TAI_MCP_KEY")))`); r.status != 0 {
		t.Fatalf("storing the key as the script says: %+v", r)
	}
	runServingScript(t, e, []string{repoScript("serve.lua"), "0"}, "utc_time", "Z", "")
}

// runServingScript runs tai with args, waits for its server, calls tool and
// expects want in its text, then stops it with SIGTERM and expects after on
// stdout.
func runServingScript(t *testing.T, e env, args []string, tool, want, after string) {
	t.Helper()
	// Killed at the deadline, tai closes its stderr, so no read below
	// waits past it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, taiBin, args...)
	cmd.Env = e.vars()
	cmd.Dir = e.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out bytes.Buffer
	cmd.Stdout = &out
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(pipe)
	var url string
	deadline := time.Now().Add(20 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		line, err := r.ReadString('\n')
		if m := urlLine.FindStringSubmatch(line); m != nil {
			url = m[1]
		}
		if err != nil {
			break
		}
	}
	if url == "" {
		t.Fatal("the script's server printed no URL")
	}
	go io.Copy(io.Discard, r)
	sess := connectSDK(t, url)
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil || !strings.Contains(textOf(res), want) {
		t.Fatalf("%s: %v %v", tool, res, err)
	}
	sess.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil || !strings.Contains(out.String(), after) {
			t.Fatalf("the script after tai.serve: %v, stdout %q", err, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the script did not go on after SIGTERM")
	}
}

// writeRoot puts content at a path under the environment's root (tai's
// working directory) and returns the path.
func (e env) writeRoot(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(rel))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeMCPStopsOnSIGINT stops the server with Ctrl-C's signal: it shuts
// down, closes its sessions and exits with the interrupted status.
func TestServeMCPStopsOnSIGINT(t *testing.T) {
	e := newEnv(t)
	s := startServe(t, e, e.vars())
	sess := connectSDK(t, s.url)
	if _, err := sess.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Fatalf("after SIGINT: %v; want exit status 130", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("tai did not stop within 15s of SIGINT:\n%s", s.stderr())
	}
	if !strings.Contains(s.stderr(), "every session is closed") {
		t.Fatalf("stderr:\n%s", s.stderr())
	}
}
