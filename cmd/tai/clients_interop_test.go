//go:build interop

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The clients people run, pinned in .ci/package.json: Claude Code and
// Gemini CLI. Each runs with a home folder of its own, so the config files
// they write land in the test's temp folder, and with what would reach
// the network (updates, telemetry, error reports) turned off. Neither
// needs a login for what is run here.

// mcpClient is one pinned client with its throwaway home.
type mcpClient struct {
	name string // the command: claude or gemini
	home string
	env  []string
}

// newMCPClient returns the pinned client named name with a fresh home.
func newMCPClient(t *testing.T, name string) mcpClient {
	t.Helper()
	root, node := nodeModules(t)
	home := t.TempDir()
	return mcpClient{name: name, home: home, env: []string{
		"HOME=" + home,
		"PATH=" + filepath.Dir(node) + ":" + filepath.Join(root, ".bin") + ":/usr/bin:/bin",
		"TERM=dumb", "NO_COLOR=1",
		"TAI_MCP_KEY=" + serveKey,
		// Claude Code: no auto-update, telemetry, error reports or other
		// traffic a command does not need.
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// Gemini CLI: no telemetry, no relaunch of itself, and the folder
		// trusted (in an untrusted one it lists its servers as disabled).
		"GEMINI_TELEMETRY_ENABLED=false", "GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUST_WORKSPACE=true",
	}}
}

// run runs argv (a command of the client's PATH) in the client's home and
// returns its combined output; it fails the test unless it succeeds
// within 90 s.
func (c mcpClient) run(t *testing.T, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	name := argv[0]
	if !strings.Contains(name, "/") {
		name = c.lookPath(t, name)
	}
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	cmd.Env, cmd.Dir = c.env, c.home
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// lookPath finds name on the client's PATH (not the test's).
func (c mcpClient) lookPath(t *testing.T, name string) string {
	t.Helper()
	for _, kv := range c.env {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(dirs) {
				if st, err := os.Stat(filepath.Join(d, name)); err == nil && !st.IsDir() {
					return filepath.Join(d, name)
				}
			}
		}
	}
	t.Fatalf("no %s on the client's PATH: run `npm ci` in .ci", name)
	return ""
}

// snippet returns the banner's command line for the client.
func snippet(t *testing.T, banner, client string) string {
	t.Helper()
	for _, line := range strings.Split(banner, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, client+" mcp add ") {
			return l
		}
	}
	t.Fatalf("the banner has no %s mcp add line:\n%s", client, banner)
	return ""
}

// TestInteropClientsConnectWithTheBannersSnippets runs the banner's own
// command lines for Claude Code and Gemini CLI against tai --serve-mcp
// (the key in $TAI_MCP_KEY), then each client's mcp list, which connects
// and must report the server connected. The key must be neither in the
// client's config file nor needed on its command line.
func TestInteropClientsConnectWithTheBannersSnippets(t *testing.T) {
	for _, tc := range []struct{ client, config string }{
		{"claude", ".claude.json"},
		{"gemini", ".gemini/settings.json"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			c := newMCPClient(t, tc.client)
			e := newEnv(t)
			s := startServe(t, e, e.vars())
			line := snippet(t, s.stderr(), tc.client)
			if strings.Contains(line, serveKey) {
				t.Fatalf("the snippet holds the key: %s", line)
			}
			c.run(t, "/bin/sh", "-c", line)
			cfg, err := os.ReadFile(filepath.Join(c.home, tc.config))
			if err != nil {
				t.Fatalf("%s wrote no %s: %v", tc.client, tc.config, err)
			}
			if strings.Contains(string(cfg), serveKey) {
				t.Errorf("the key is in clear in %s's %s", tc.client, tc.config)
			}
			list := c.run(t, tc.client, "mcp", "list")
			connected := regexp.MustCompile(`(?m)^\W*tai: ` + regexp.QuoteMeta(s.url) + ` \((?i:http)\) - \W*Connected\s*$`)
			if !connected.MatchString(list) {
				t.Fatalf("%s mcp list does not report tai connected:\n%s\ntai's stderr:\n%s", tc.client, list, s.stderr())
			}
			s.stop(t)
		})
	}
}

// TestInteropDrivesClaudeMCPServe: tai's client runs `claude mcp serve`
// as a stdio server, lists its tools and reads a file with its Read tool.
func TestInteropDrivesClaudeMCPServe(t *testing.T) {
	c := newMCPClient(t, "claude")
	claude := c.lookPath(t, "claude")
	note := filepath.Join(c.home, "note.txt")
	if err := os.WriteFile(note, []byte("read through claude mcp serve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range c.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	envJSON, _ := json.Marshal(env)
	e := newEnv(t)
	script := fmt.Sprintf(`
		local c = assert(tai.mcp.connect{name = "claude", command = %q, args = {"mcp", "serve"}, cwd = %q,
			env = tai.json.decode(%q)})
		local names = {}
		for _, t in ipairs(c:tools()) do names[#names + 1] = t.name end
		local r = assert(c:call("Read", {file_path = %q}))
		print(tai.json.encode({tools = names, read = r}))
		c:close()`, claude, c.home, envJSON, note)
	r := e.run(t, "-e", script)
	if r.status != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	var out struct {
		Tools []string
		Read  struct {
			Content []struct{ Type, Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	for _, want := range []string{"Read", "Bash", "Edit"} {
		if !slices.Contains(out.Tools, want) {
			t.Errorf("claude mcp serve lists no %s: %v", want, out.Tools)
		}
	}
	if out.Read.IsError || len(out.Read.Content) == 0 || !strings.Contains(out.Read.Content[0].Text, "read through claude mcp serve") {
		t.Fatalf("Read: %+v", out.Read)
	}
}

// TestInteropImportsWhatTheClientsWrote: after `claude mcp add` and
// `gemini mcp add` of a stdio server (the official memory server), tai's
// import script reads the files those clients wrote (~/.claude.json, with
// the server under the project, and ~/.gemini/settings.json), registers
// the same server, and starts it for its live check.
func TestInteropImportsWhatTheClientsWrote(t *testing.T) {
	root, node := nodeModules(t)
	memory := filepath.Join(root, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	importer, err := filepath.Abs(filepath.Join("..", "..", "scripts", "import-servers.lua"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ client, importAs, add string }{
		{"claude", "claude-code", "claude mcp add memory -e MEMORY_FILE_PATH=$HOME/memory.jsonl -- %s %s"},
		{"gemini", "gemini", "gemini mcp add --scope user -e MEMORY_FILE_PATH=$HOME/memory.jsonl memory %s %s"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			c := newMCPClient(t, tc.client)
			c.run(t, "/bin/sh", "-c", fmt.Sprintf(tc.add, node, memory))
			vault := filepath.Join(c.home, "vault.db")
			tai := func(args ...string) string {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, taiBin, args...)
				cmd.Env = append(slices.Clip(c.env), "TAI_VAULT="+vault, "XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"))
				cmd.Dir = c.home
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("tai %v: %v\n%s", args, err, out)
				}
				return string(out)
			}
			report := tai("--auto", importer, tc.importAs)
			if !strings.Contains(report, "added    memory") || !strings.Contains(report, "1 added, 0 skipped (already there), 0 refused") {
				t.Fatalf("import %s:\n%s", tc.importAs, report)
			}
			listed := tai("-e", `for _, s in ipairs(assert(tai.mcp.list())) do print(tai.json.encode(s)) end`)
			var s struct {
				Name, Transport string
				Words           []string
				Tools           int
			}
			if err := json.Unmarshal([]byte(listed), &s); err != nil {
				t.Fatalf("%v: %s", err, listed)
			}
			if s.Name != "memory" || s.Transport != "stdio" || !slices.Equal(s.Words, []string{node, memory}) || s.Tools == 0 {
				t.Fatalf("registered %+v, want memory: %s %s with its tools", s, node, memory)
			}
		})
	}
}
