package lua

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tai/vault"
)

// servePeerEnv makes the test binary one of BenchmarkServeToolCallProcess's
// servers (see TestMain): it prints the server's URL on a line of its own,
// then serves until its stdin closes.
const servePeerEnv = "TAI_LUA_BENCH_PEER"

// servePeer is the test binary as the server named by kind.
func servePeer(kind string) error {
	dir, err := os.MkdirTemp("", "tai-bench-peer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	switch kind {
	case "tai-lua-echo":
		return serveTaiPeer(ctx, dir)
	case "gosdk-json":
		return serveHTTPPeer(ctx, sdkEchoHandler(true))
	case "floor":
		return serveHTTPPeer(ctx, floorHandler())
	}
	return fmt.Errorf("no bench peer %q", kind)
}

// serveTaiPeer runs what tai --serve-mcp runs: a host whose init.lua adds
// the Lua echo tool, serving on a free loopback port.
func serveTaiPeer(ctx context.Context, dir string) error {
	config := filepath.Join(dir, "config")
	if err := os.MkdirAll(config, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(config, "init.lua"), []byte(echoInitLua), 0o600); err != nil {
		return err
	}
	path := filepath.Join(dir, "vault", "vault.db")
	h, err := New(&Options{ConfigDir: config, StateDir: filepath.Join(dir, "state"), Stdout: io.Discard, Stderr: io.Discard,
		Vault: func() (*vault.Store, error) { return vault.Open(path, nil) }})
	if err != nil {
		return err
	}
	defer h.Close()
	fn, err := h.L.LoadFile(h.InitFile())
	if err != nil {
		return err
	}
	if _, err := h.Call(ctx, fn); err != nil {
		return err
	}
	return h.Serve(ctx, ServeRequest{Key: benchKey, Bind: "127.0.0.1", Ready: func(u string) { fmt.Println(u) }})
}

// serveHTTPPeer serves handler on a free loopback port at /mcp.
func serveHTTPPeer(ctx context.Context, handler http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// startPeer starts the test binary as the server named kind and returns
// its URL and its process id.
func startPeer(b *testing.B, kind string) (string, int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), servePeerEnv+"="+kind)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, out)
	}()
	select {
	case u := <-line:
		if !strings.HasPrefix(u, "http://") {
			b.Fatalf("%s: no URL, said %q", kind, u)
		}
		return u, cmd.Process.Pid
	case <-time.After(30 * time.Second):
		b.Fatalf("%s did not say its URL within 30s", kind)
	}
	return "", 0
}

// processCPU returns the CPU time (user and system) process pid has used,
// from /proc, in clock ticks of 10 ms.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which ends with ") ".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkServeToolCallProcess is BenchmarkServeToolCall with each server
// in a process of its own, as a client meets tai --serve-mcp: the same raw
// client, in this process, against tai's server with the Lua echo tool,
// the go-sdk server (JSON answers) and the floor. server-cpu-µs/op is the
// server process's own CPU time per call.
//
//	go test -bench ServeToolCallProcess -run '^$' -benchtime 4000x ./lua/
func BenchmarkServeToolCallProcess(b *testing.B) {
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	for _, kind := range []string{"tai-lua-echo", "gosdk-json", "floor"} {
		b.Run(kind, func(b *testing.B) {
			url, pid := startPeer(b, kind)
			c := newRawClient(b, url)
			if resp, body := c.post(b, call); resp.StatusCode != 200 || !strings.Contains(string(body), `"hello"`) {
				b.Fatalf("%d %s", resp.StatusCode, body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := processCPU(pid)
			for b.Loop() {
				resp, body := c.post(b, call)
				if resp.StatusCode != 200 || len(body) == 0 {
					b.Fatalf("%d %s", resp.StatusCode, body)
				}
			}
			b.ReportMetric(float64((processCPU(pid)-start).Microseconds())/float64(b.N), "server-cpu-µs/op")
		})
	}
}
