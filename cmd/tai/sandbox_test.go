package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerHelperDiesWithKilledTai: a stdio server starts a helper that
// leaves its session and process group (setsid); when tai is killed with
// SIGKILL, the helper ends too. Its private terminal's hang-up reaches
// neither it nor its group, so only the keeper, a subreaper that tai's
// death signals, can stop it.
func TestServerHelperDiesWithKilledTai(t *testing.T) {
	e := newEnv(t)
	// The server's folder is its cwd, which its sandbox grants: the test
	// binary (its real server) and the helper's pid file live there.
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(dir, "server")
	if err := os.Link(exe, server); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "helper.pid")
	script := `setsid sh -c 'echo $$ > "$PIDF"; exec sleep 778' </dev/null >/dev/null 2>&1 &
while [ ! -s "$PIDF" ]; do :; done
exec "$EXE" -test.run='^$'`
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"h": map[string]any{
		"command": "sh", "args": []string{"-c", script}, "cwd": dir,
		"env": map[string]string{mcpServerEnv: "1", "PIDF": pidFile, "EXE": server},
	}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lua := `assert(tai.mcp.add{source = [==[` + string(cfg) + `]==]})
assert(tai.mcp.enable{server = "h"})
assert(tai.mcp.call{server = "h", tool = "echo", args = {text = "x"}})
print("ready") io.stdout:flush() io.read()`
	cmd := exec.CommandContext(ctx, taiBin, "--yolo", "-e", lua)
	cmd.Env = e.vars()
	cmd.Dir = e.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("tai said %q\n%s", line, stderr.String())
	}
	helper := pidIn(t, pidFile)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if alive(t, helper) {
		t.Fatalf("the server's setsid helper (pid %d) outlived the killed tai", helper)
	}
}
