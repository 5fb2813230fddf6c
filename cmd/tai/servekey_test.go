package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeKeyNeverInTheProcessList serves with the key given each way a
// person can give it, reads the serving tai's command line as another
// user would, and connects with the key.
func TestServeKeyNeverInTheProcessList(t *testing.T) {
	const warned = "was in the process list, where every\nuser of this machine can read it"
	tests := []struct {
		name  string
		argv  []string
		vars  []string
		stdin io.Reader
		warn  bool
	}{
		{"TAI_MCP_KEY", []string{"--serve-mcp", "--mcp-port", "0"}, []string{"TAI_MCP_KEY=" + serveKey}, nil, false},
		{"TAI_MCP_KEY, the flag last", []string{"--mcp-port", "0", "--serve-mcp"}, []string{"TAI_MCP_KEY=" + serveKey}, nil, false},
		{"stdin", []string{"--serve-mcp", "-", "--mcp-port", "0"}, nil, strings.NewReader(serveKey + "\nnot the key\n"), false},
		{"a value", []string{"--serve-mcp", serveKey, "--mcp-port", "0"}, nil, nil, true},
		{"=value", []string{"--mcp-port=0", "--serve-mcp=" + serveKey}, nil, nil, true},
		{"a value twice", []string{"-serve-mcp", serveKey, "--mcp-port", "0", "--serve-mcp=" + serveKey}, nil, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s := startServeWith(t, e, append(e.vars(), tc.vars...), tc.stdin, tc.argv...)
			cmdline := readAsAnotherUser(t, "/proc/"+strconv.Itoa(s.cmd.Process.Pid)+"/cmdline")
			if !strings.Contains(cmdline, "serve-mcp") {
				t.Fatalf("/proc/PID/cmdline is not the serving tai's: %q", cmdline)
			}
			if strings.Contains(cmdline, serveKey) || strings.Contains(cmdline, serveKey[:8]) {
				t.Fatalf("another user reads the key in /proc/PID/cmdline: %q", cmdline)
			}
			if tc.warn && !strings.Contains(cmdline, keyMask) {
				t.Fatalf("the key's place does not read %s: %q", keyMask, cmdline)
			}
			if got := strings.Contains(s.stderr(), warned); got != tc.warn {
				t.Fatalf("warned about the process list: %v, want %v; stderr:\n%s", got, tc.warn, s.stderr())
			}
			// The key opens the server, and no output shows it.
			if err := os.WriteFile(filepath.Join(e.root, "env.sh"), []byte("TAI_MCP_KEY="+serveKey+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			sess := connectSDK(t, s.url)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "env.sh"}})
			if err != nil || res.IsError {
				t.Fatalf("read_file with the key: %v %+v", err, res)
			}
			if text := textOf(res); strings.Contains(text, serveKey) || !strings.Contains(text, "TAI_MCP_KEY=[REDACTED:TAI_MCP_KEY]") {
				t.Fatalf("read_file of a file holding the key: %q", text)
			}
			sess.Close()
			if status := s.stop(t); status != 0 {
				t.Fatalf("exit status %d; stderr:\n%s", status, s.stderr())
			}
		})
	}
}

// readAsAnotherUser reads path as the user nobody (65534), as any other
// user of the machine could; without root to become nobody, as this user.
func readAsAnotherUser(t *testing.T, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "cat", path)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		t.Logf("not root: reading %s as uid %d", path, os.Geteuid())
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(out)
}

// TestServeKeyParse checks which word --serve-mcp takes as its own.
func TestServeKeyParse(t *testing.T) {
	tests := []struct {
		argv []string
		from keySource
		key  string
		port string
		args []string
	}{
		{[]string{"--serve-mcp"}, keyFromEnv, "", "", nil},
		{[]string{"--serve-mcp", "--mcp-port", "9000"}, keyFromEnv, "", "9000", nil},
		{[]string{"--mcp-port", "9000", "--serve-mcp"}, keyFromEnv, "", "9000", nil},
		{[]string{"--serve-mcp", "-"}, keyFromStdin, "", "", nil},
		{[]string{"--serve-mcp", "-", "--mcp-port", "9000"}, keyFromStdin, "", "9000", nil},
		{[]string{"--serve-mcp=-"}, keyFromStdin, "", "", nil},
		{[]string{"--serve-mcp", "k", "--mcp-port", "9000"}, keyFromArgv, "k", "9000", nil},
		{[]string{"--serve-mcp=k", "--mcp-port=9000"}, keyFromArgv, "k", "9000", nil},
		{[]string{"--serve-mcp", "--", "k"}, keyFromEnv, "", "", []string{"k"}},
		{[]string{"--serve-mcp", "--auto", "k"}, keyFromEnv, "", "", []string{"k"}},
		{[]string{"--serve-mcp", "k1", "--serve-mcp", "k2", "x"}, keyFromArgv, "k2", "", []string{"x"}},
	}
	for _, tc := range tests {
		o := options{}
		if err := parse(tc.argv, &o); err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		if !o.serveSet || o.serveFrom != tc.from || o.serveKey != tc.key || o.mcpPort != tc.port || !reflect.DeepEqual(o.args, tc.args) && len(o.args)+len(tc.args) > 0 {
			t.Fatalf("%q: serve %v from %d key %q port %q args %q; want from %d key %q port %q args %q",
				tc.argv, o.serveSet, o.serveFrom, o.serveKey, o.mcpPort, o.args, tc.from, tc.key, tc.port, tc.args)
		}
	}
	// A key starting with "-" right after --serve-mcp is refused without
	// being quoted, and hidden.
	o := options{}
	if err := parse([]string{"--serve-mcp", "-dash-key-0123456789", "--mcp-port", "0"}, &o); err == nil || strings.Contains(err.Error(), "dash-key") || !reflect.DeepEqual(o.argvKeys, []string{"-dash-key-0123456789"}) {
		t.Fatalf("--serve-mcp -dash-key…: %v, hidden %q", err, o.argvKeys)
	}
	o = options{}
	if err := parse([]string{"--serve-mcp", "--mcp-port"}, &o); err == nil || !strings.Contains(err.Error(), "needs an argument") || len(o.argvKeys) > 0 {
		t.Fatalf("--serve-mcp --mcp-port: %v, hidden %q", err, o.argvKeys)
	}
	// A flag's value is never taken for --serve-mcp.
	o = options{}
	if err := parse([]string{"-p", "--serve-mcp", "k"}, &o); err != nil || o.serveSet || o.prompt != "--serve-mcp" {
		t.Fatalf("-p --serve-mcp: %v, serve %v, prompt %q", err, o.serveSet, o.prompt)
	}
}

// TestFlagsAfterP: flags a person puts between -p and the prompt, or
// after the prompt, are taken as flags, not as the prompt; a prompt that
// merely starts with "-" is still a prompt.
func TestFlagsAfterP(t *testing.T) {
	for _, tc := range []struct {
		argv          []string
		prompt, prof  string
		auto, yolo, c bool
		args          []string
	}{
		{argv: []string{"-p", "--auto", "CALL x"}, prompt: "CALL x", auto: true},
		{argv: []string{"-p", "--yolo", "--profile", "work", "-c", "go"}, prompt: "go", yolo: true, c: true, prof: "work"},
		{argv: []string{"-p", "--profile=work", "go", "--auto"}, prompt: "go", prof: "work", auto: true},
		{argv: []string{"-p", "go", "--auto"}, prompt: "go", auto: true},
		{argv: []string{"-p", "-v is verbose?"}, prompt: "-v is verbose?"},
		{argv: []string{"-p", "--auto"}, prompt: "--auto"},
		{argv: []string{"-p", "say", "more"}, prompt: "say", args: []string{"more"}},
	} {
		o := options{}
		if err := parse(tc.argv, &o); err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		if o.prompt != tc.prompt || o.auto != tc.auto || o.yolo != tc.yolo || o.cont != tc.c || o.profile != tc.prof || !reflect.DeepEqual(o.args, tc.args) && len(o.args)+len(tc.args) > 0 {
			t.Fatalf("%q: prompt %q auto %v yolo %v c %v profile %q args %q", tc.argv, o.prompt, o.auto, o.yolo, o.cont, o.profile, o.args)
		}
	}
}

// TestReadKeyFromAPipe: --serve-mcp - takes the first line of stdin and
// leaves the rest; a missing, empty or overlong line is a clear error.
func TestReadKeyFromAPipe(t *testing.T) {
	tests := []struct {
		name, in, want, err string
		left                string
	}{
		{"a line", serveKey + "\nmore\n", serveKey, "", "more\n"},
		{"CRLF", serveKey + "\r\n", serveKey, "", ""},
		{"no newline", serveKey, serveKey, "", ""},
		{"nothing", "", "", "stdin ended before a key was given", ""},
		{"an empty line", "\n" + serveKey + "\n", "", "the first line of stdin is empty", ""},
		{"too long", strings.Repeat("k", maxKeyLine+1) + "\n", "", "longer than 4096 bytes", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go func() {
				io.WriteString(w, tc.in)
				w.Close()
			}()
			got, err := readKey(r)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || (got != "" && strings.Contains(err.Error(), got)) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if rest, _ := io.ReadAll(r); string(rest) != tc.left {
				t.Fatalf("left on stdin %q, want %q", rest, tc.left)
			}
		})
	}
}

// TestScriptServeKeyLeavesTheProcessList: a key a -e chunk or a script's
// argument gives tai.serve is hidden from the process list once tai.serve
// has it, with a warning, and still opens the server.
func TestScriptServeKeyLeavesTheProcessList(t *testing.T) {
	const warned = "was on tai's command line, in the process list"
	e := newEnv(t)
	script := e.writeRoot(t, "serve.lua", "assert(tai.serve{key = arg[1], port = 0})\n")
	tests := []struct {
		name string
		argv []string
	}{
		{"-e", []string{"-e", fmt.Sprintf("assert(tai.serve{key = %q, port = 0})", serveKey)}},
		{"a script's argument", []string{script, serveKey}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServeWith(t, e, e.vars(), nil, tc.argv...)
			cmdline := readAsAnotherUser(t, "/proc/"+strconv.Itoa(s.cmd.Process.Pid)+"/cmdline")
			if !strings.Contains(cmdline, "serve") {
				t.Fatalf("/proc/PID/cmdline is not the serving tai's: %q", cmdline)
			}
			if strings.Contains(cmdline, serveKey[:8]) || !strings.Contains(cmdline, keyMask) {
				t.Fatalf("another user reads the key in /proc/PID/cmdline: %q", cmdline)
			}
			if !strings.Contains(s.stderr(), warned) || strings.Contains(s.stderr(), serveKey) {
				t.Fatalf("stderr does not warn, or shows the key:\n%s", s.stderr())
			}
			sess := connectSDK(t, s.url)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := sess.ListTools(ctx, nil); err != nil {
				t.Fatalf("the hidden key no longer opens the server: %v", err)
			}
			sess.Close()
			s.stop(t)
		})
	}
}
