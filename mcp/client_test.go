package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientCalls(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	c := connectFake(t, "default", &ClientOptions{Version: "9.9", OnNotification: func(m *Message) {
		mu.Lock()
		notes = append(notes, m.Method)
		mu.Unlock()
	}})
	ctx := testCtx(t)
	if c.ServerInfo().Name != "fake" || c.Instructions() != "fake default" {
		t.Errorf("ServerInfo = %+v, Instructions = %q", c.ServerInfo(), c.Instructions())
	}
	if !strings.Contains(string(c.Capabilities()), `"tools"`) {
		t.Errorf("Capabilities = %s", c.Capabilities())
	}

	tests := []struct {
		name     string
		tool     string
		args     any
		wantText string
		isError  bool
		wantCode int
	}{
		{name: "echo", tool: "echo", args: map[string]any{"text": "a\"b\nc"}, wantText: "a\"b\nc"},
		{name: "add raw", tool: "add", args: json.RawMessage(`{"a":1.5,"b":2}`), wantText: "3.5"},
		{name: "struct args", tool: "add", args: struct{ A, B int }{}, wantText: "0"},
		{name: "isError result", tool: "fail", isError: true, wantText: "it failed"},
		{name: "unknown tool", tool: "missing", wantCode: CodeInvalidParams},
		{name: "notifications are accepted", tool: "notify", wantText: "notified"},
		{name: "server pings client", tool: "ping_client", wantText: `"id":"srv-1","result":{}`},
		{name: "other server requests get -32601", tool: "sampling", wantText: `"code":-32601`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Call(ctx, tc.tool, tc.args)
			if tc.wantCode != 0 {
				var me *WireError
				if !errors.As(err, &me) || me.Code != tc.wantCode {
					t.Fatalf("err = %v, want WireError %d", err, tc.wantCode)
				}
				if !errors.Is(err, &WireError{Code: tc.wantCode}) {
					t.Errorf("errors.Is by code failed for %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v, want %v", res.IsError, tc.isError)
			}
			if !strings.Contains(res.Text(), tc.wantText) {
				t.Errorf("Text() = %q, want it to contain %q", res.Text(), tc.wantText)
			}
		})
	}
	mu.Lock()
	got := strings.Join(notes, ",")
	mu.Unlock()
	if got != "notifications/progress,notifications/message,notifications/tools/list_changed" {
		t.Errorf("notifications seen = %q", got)
	}
}

func TestClientArgumentsMustBeAnObject(t *testing.T) {
	c := connectFake(t, "default", nil)
	for _, args := range []any{[]int{1}, "text", json.RawMessage(`[1]`)} {
		if _, err := c.Call(testCtx(t), "echo", args); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
			t.Errorf("Call with %v: err = %v", args, err)
		}
	}
	if _, err := c.Call(testCtx(t), "echo", func() {}); err == nil || !strings.Contains(err.Error(), "do not encode") {
		t.Errorf("Call with a func: err = %v", err)
	}
}

func TestClientContentPassesThroughUnchanged(t *testing.T) {
	c := connectFake(t, "default", nil)
	res, err := c.Call(testCtx(t), "image", nil)
	if err != nil {
		t.Fatal(err)
	}
	var joined []string
	for _, item := range res.Content {
		joined = append(joined, string(item))
	}
	if got := strings.Join(joined, ","); got != fakeImageContent {
		t.Errorf("content changed:\n got %s\nwant %s", got, fakeImageContent)
	}
	if string(res.StructuredContent) != `{"ok":true}` || string(res.Meta) != `{"trace":"x"}` {
		t.Errorf("structuredContent %s, _meta %s", res.StructuredContent, res.Meta)
	}
	if !strings.Contains(string(res.Raw), `"extra":1`) {
		t.Errorf("Raw lost an unknown field: %s", res.Raw)
	}
}

func TestClientToolsFollowsCursors(t *testing.T) {
	c := connectFake(t, "default", nil)
	tools, err := c.Tools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(fakeTools) {
		t.Fatalf("got %d tools, want %d over three pages", len(tools), len(fakeTools))
	}
	for i, tl := range tools {
		if tl.Name != fakeTools[i] || tl.Description != "the "+tl.Name+" tool" ||
			string(tl.InputSchema) != `{"type":"object"}` || !strings.Contains(string(tl.Raw), `"_meta":{"fake":true}`) {
			t.Errorf("tool %d = %+v (raw %s)", i, tl, tl.Raw)
		}
	}
}

func TestClientToolsRefusesEndlessCursor(t *testing.T) {
	tests := []struct {
		name     string
		maxPages int
		mode     string
		want     string
	}{
		{name: "repeated cursor", want: `repeated cursor "again"`},
		{name: "page cap", maxPages: 1, want: "more than 1 pages"},
		// Pages of 1 MB each with a fresh cursor: the listing is refused
		// once it passes MaxToolsList bytes, long before MaxPages, so a
		// server cannot make tai hold gigabytes of descriptions.
		{name: "size cap", mode: "fat-pages", want: "tools/list passed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.mode
			if mode == "" {
				mode = "loop-cursor"
			}
			c := connectFake(t, mode, &ClientOptions{MaxPages: tc.maxPages})
			_, err := c.Tools(testCtx(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A tool whose schema nests deeper than encoding/json reads (10,000
// levels) costs the listing nothing else: the other tool comes through,
// and the deep one keeps its name and its schema as sent, for the caller
// to judge.
func TestClientToolsKeepsOthersBesideADeepSchema(t *testing.T) {
	c := connectFake(t, "deep-tool", nil)
	tools, err := c.Tools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Name != "deep" || tools[1].Name != "plain" || tools[1].Description != "fine" {
		t.Fatalf("tools = %d, want deep and plain", len(tools))
	}
	if n := bytes.Count(tools[0].InputSchema, []byte(`"properties"`)); n != 100000 {
		t.Fatalf("the deep schema holds %d levels, want 100000", n)
	}
}

func TestClientHandshake(t *testing.T) {
	tests := []struct {
		name        string
		mode        string
		wantVersion string
		wantErr     string
	}{
		{name: "current version", mode: "default", wantVersion: MCP_PROTOCOL_VERSION},
		{name: "older accepted version", mode: "old-version", wantVersion: "2025-03-26"},
		{name: "unknown version", mode: "bad-version", wantErr: `answered protocol version "1999-01-01"`},
		{name: "no tools capability", mode: "no-tools", wantErr: "capabilities.tools missing"},
		{name: "no answer", mode: "no-init", wantErr: "did not finish within 300ms"},
		{name: "server exits at start", mode: "exit-early", wantErr: "exit status 2; last stderr lines:\nloading config\nerror: no API key configured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Only the server that never answers waits out the short
			// timeout; the others get the default, so a slow spawn on a
			// loaded machine is not mistaken for a missing answer.
			opts := &ClientOptions{}
			if tc.mode == "no-init" {
				opts.ConnectTimeout = 300 * time.Millisecond
			}
			c, err := Connect(testCtx(t), fakeEntry(t, tc.mode), opts)
			if tc.wantErr != "" {
				if err == nil {
					c.Close()
					t.Fatal("Connect succeeded")
				}
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "fake-"+tc.mode) {
					t.Fatalf("err = %v, want %q naming the server", err, tc.wantErr)
				}
				if got := errors.Is(err, ErrNoTools); got != (tc.mode == "no-tools") {
					t.Fatalf("errors.Is(err, ErrNoTools) = %v for %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.ProtocolVersion() != tc.wantVersion {
				t.Errorf("ProtocolVersion = %q, want %q", c.ProtocolVersion(), tc.wantVersion)
			}
		})
	}
}

func TestClientSpawnExactArgvEnvCwd(t *testing.T) {
	t.Setenv("TAI_TEST_SECRET", "must-not-leak")
	dir := t.TempDir()
	e := fakeEntry(t, "default")
	e.Args = append(e.Args, "two words", "$HOME", "")
	e.Env["TAI_FAKE_PROBE"] = "probe value"
	e.Cwd = dir
	c, err := Connect(testCtx(t), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(testCtx(t), "environ", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Args               []string
		Cwd, Probe, Secret string
		Path               string
	}
	if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
		t.Fatal(err)
	}
	wantDir, _ := filepath.EvalSymlinks(dir)
	if fmt.Sprint(got.Args) != fmt.Sprint(e.Args) || got.Cwd != wantDir || got.Probe != "probe value" {
		t.Errorf("server saw %+v, want args %q cwd %q", got, e.Args, wantDir)
	}
	if got.Secret != "" || got.Path != os.Getenv("PATH") {
		t.Errorf("server environment: secret %q (want none), PATH %q (want tai's)", got.Secret, got.Path)
	}
}

func TestConnectRefusesBadEntries(t *testing.T) {
	tests := []struct {
		name  string
		entry Entry
		want  string
	}{
		{name: "no transport", entry: Entry{Name: "x", Command: "cat"}, want: "no transport"},
		{name: "sse", entry: Entry{Name: "x", Transport: "sse", URL: "http://127.0.0.1/"}, want: `transport "sse" is not supported`},
		{name: "stdio without command", entry: Entry{Name: "x", Transport: "stdio"}, want: "needs a command"},
		{name: "stdio with url", entry: Entry{Name: "x", Transport: "stdio", Command: "cat", URL: "http://127.0.0.1/"}, want: "both a command and a url"},
		{name: "http without url", entry: Entry{Name: "x", Transport: "http"}, want: "needs a url"},
		{name: "http bad url", entry: Entry{Name: "x", Transport: "http", URL: "ftp://127.0.0.1/"}, want: "not an http:// or https:// URL"},
		{name: "unknown transport", entry: Entry{Name: "x", Transport: "pigeon"}, want: `unknown transport "pigeon"`},
		{name: "missing program", entry: Entry{Name: "x", Transport: "stdio", Command: "/nonexistent/tai-no-such-server"}, want: "cannot start"},
		{name: "missing cwd", entry: Entry{Name: "x", Transport: "stdio", Command: "cat", Cwd: "/nonexistent/dir"}, want: "cwd /nonexistent/dir does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(testCtx(t), tc.entry, nil)
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"x"`) {
				t.Errorf("err = %v, want %q naming the entry", err, tc.want)
			}
		})
	}
}

func TestClientCallTimeoutCancelsOnServer(t *testing.T) {
	hanging := make(chan struct{}, 4)
	c := connectFake(t, "default", &ClientOptions{CallTimeout: 200 * time.Millisecond, OnNotification: func(m *Message) {
		if m.Method == MethodLogMessage && strings.Contains(string(m.Params), "hanging") {
			hanging <- struct{}{}
		}
	}})
	ctx := testCtx(t)
	_, err := c.Call(ctx, "hang", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	<-hanging
	parent, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(parent, "hang", nil)
		done <- err
	}()
	select { // the second hang call is in flight on the server
	case <-hanging:
	case <-ctx.Done():
		t.Fatal("hang call never reached the server")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: err = %v", err)
	}
	res, err := c.Call(ctx, "last_cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].RequestID) != "2" || got[0].Reason != "timed out" || got[1].Reason != "cancelled by the client" {
		t.Errorf("server recorded cancellations %s", res.Text())
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("connection unusable after cancellations: %v", err)
	}
}

func TestClientConcurrentCalls(t *testing.T) {
	c := connectFake(t, "default", nil)
	ctx := testCtx(t)
	const barrier = 8
	const echoes = 64
	var wg sync.WaitGroup
	errs := make(chan error, barrier+echoes)
	for range barrier {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Answered only once all barrier calls are in flight at once.
			res, err := c.Call(ctx, "barrier", map[string]any{"n": barrier})
			if err == nil && res.Text() != "through" {
				err = fmt.Errorf("barrier answered %q", res.Text())
			}
			errs <- err
		}()
	}
	for i := range echoes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("message %d", i)
			res, err := c.Call(ctx, "echo", map[string]any{"text": want})
			if err == nil && res.Text() != want {
				err = fmt.Errorf("echo %d answered %q", i, res.Text())
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestClientDeadServer(t *testing.T) {
	tests := []struct {
		name string
		mode string
		tool string
		want []string
	}{
		{name: "crash mid-call", mode: "default", tool: "crash",
			want: []string{`"fake-default"`, "exit status 3", "fatal: the server fell over", "starting the crash tool"}},
		{name: "stdout closed early", mode: "default", tool: "close_stdout",
			want: []string{`"fake-default"`, "closed its stdout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := connectFake(t, tc.mode, nil)
			_, err := c.Call(testCtx(t), tc.tool, nil)
			var pe *ProcessError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ProcessError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
			// Later calls fail at once with the same diagnosis.
			if err := c.Ping(testCtx(t)); !errors.As(err, &pe) {
				t.Errorf("Ping after death: %v", err)
			}
		})
	}
}

func TestClientRefusesHugeMessage(t *testing.T) {
	c := connectFake(t, "default", nil)
	_, err := c.Call(testCtx(t), "huge", nil)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprint(MCP_HTTP_MAX_BODY)) {
		t.Fatalf("err = %v, want ErrTooLarge naming the limit", err)
	}
	if err := c.Ping(testCtx(t)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("connection not closed after the huge line: Ping err = %v", err)
	}
	st := c.Transport().(*StdioTransport)
	if cap(st.acc) > MCP_HTTP_MAX_BODY*2 {
		t.Errorf("line buffer grew to %d bytes", cap(st.acc))
	}
	big := strings.Repeat("y", MCP_HTTP_MAX_BODY)
	c2 := connectFake(t, "default", nil)
	if _, err := c2.Call(testCtx(t), "echo", map[string]any{"text": big}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("sending an oversized message: err = %v", err)
	}
	if err := c2.Ping(testCtx(t)); err != nil {
		t.Errorf("refusing an outgoing message must not break the connection: %v", err)
	}
}

func TestClientSkipsGarbageLines(t *testing.T) {
	c := connectFake(t, "garbage", nil)
	for i := range 3 {
		res, err := c.Call(testCtx(t), "echo", map[string]any{"text": fmt.Sprint(i)})
		if err != nil || res.Text() != fmt.Sprint(i) {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
	}
	if n := c.Transport().(*StdioTransport).Garbage(); n < 12 {
		t.Errorf("Garbage() = %d, want every junk line counted", n)
	}
}

func TestClientStderrFloodStaysBounded(t *testing.T) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	c := connectFake(t, "stderr-flood", nil)
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	st := c.Transport().(*StdioTransport)
	c.Close()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if st.stderr.total < 100<<20 {
		t.Fatalf("drained %d bytes of stderr, want the whole 100 MB", st.stderr.total)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("allocated %d MB while draining 100 MB of stderr", grew>>20)
	}
	if n := st.stderr.Cap(); n > 2*DefaultStderrMax {
		t.Errorf("stderr buffer cap %d, want <= %d", n, 2*DefaultStderrMax)
	}
	tail := c.Stderr()
	if len(tail) != DefaultStderrMax || !strings.HasSuffix(tail, "flood done\n") {
		t.Errorf("Stderr() is %d bytes ending %q", len(tail), tail[max(0, len(tail)-40):])
	}
}

// waitExit waits, bounded by ctx, until process pid has exited, using a
// pidfd (readable once the process terminates).
func waitExit(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	dl, _ := ctx.Deadline()
	ms := int(time.Until(dl).Milliseconds())
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("process %d still alive", pid)
	}
	return nil
}

func TestCloseLeavesNoOrphans(t *testing.T) {
	tests := []struct {
		name string
		end  func(c *Client) // how the server goes away
	}{
		{name: "client closes", end: func(c *Client) { c.Close() }},
		{name: "server crashes", end: func(c *Client) { c.Call(context.Background(), "crash", nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			c := connectFake(t, "default", &ClientOptions{Stdio: &StdioOptions{ShutdownGrace: 200 * time.Millisecond}})
			res, err := c.Call(ctx, "spawn_child", nil)
			if err != nil || res.IsError {
				t.Fatalf("spawn_child: %v %s", err, res.Raw)
			}
			var child int
			fmt.Sscan(res.Text(), &child)
			server := c.Transport().(*StdioTransport).Pid()
			if child <= 0 || server <= 0 {
				t.Fatalf("pids: child %q server %d", res.Text(), server)
			}
			fd, err := unix.PidfdOpen(child, 0)
			if err != nil {
				t.Fatalf("grandchild %d not running: %v", child, err)
			}
			unix.Close(fd)
			tc.end(c)
			if err := waitExit(ctx, child); err != nil {
				t.Errorf("grandchild: %v", err)
			}
			c.Close()
			// The server itself is reaped (no zombie): its pid is gone.
			if err := unix.Kill(server, 0); !errors.Is(err, unix.ESRCH) {
				t.Errorf("server %d after Close: kill(0) = %v, want ESRCH", server, err)
			}
		})
	}
}

func TestClientClose(t *testing.T) {
	c := connectFake(t, "default", nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Call(testCtx(t), "echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close: %v", err)
	}
	if _, err := c.Tools(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Tools after Close: %v", err)
	}
}

func TestClientStderrTail(t *testing.T) {
	c := connectFake(t, "default", nil)
	if _, err := c.Call(testCtx(t), "crash", nil); err == nil {
		t.Fatal("crash call succeeded")
	}
	if got := c.Stderr(); !strings.Contains(got, "fatal: the server fell over\n") {
		t.Errorf("Stderr() = %q", got)
	}
}

func TestClientRedactsErrors(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "fell over", "[redacted]") }
	c := connectFake(t, "default", &ClientOptions{Redact: redact})
	_, err := c.Call(testCtx(t), "crash", nil)
	var pe *ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want it to unwrap to a *ProcessError", err)
	}
	if strings.Contains(err.Error(), "fell over") || !strings.Contains(err.Error(), "fatal: the server [redacted]") {
		t.Errorf("error text not redacted: %v", err)
	}
	if strings.Contains(c.Stderr(), "fell over") {
		t.Errorf("Stderr() not redacted: %q", c.Stderr())
	}
	if err := c.Ping(testCtx(t)); err == nil || strings.Contains(err.Error(), "fell over") {
		t.Errorf("Ping error not redacted: %v", err)
	}
}

// TestClientCallsSurviveNeighboursCancelling mixes calls that time out
// while holding the connection's read role with calls that must succeed.
func TestClientCallsSurviveNeighboursCancelling(t *testing.T) {
	c := connectFake(t, "default", nil)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				cctx, cancel := context.WithTimeout(ctx, time.Duration(1+i%7)*time.Millisecond)
				defer cancel()
				if _, err := c.Call(cctx, "hang", nil); !errors.Is(err, context.DeadlineExceeded) {
					errs <- fmt.Errorf("hang %d: %v", i, err)
				}
				return
			}
			want := fmt.Sprint("echo ", i)
			res, err := c.Call(ctx, "echo", map[string]any{"text": want})
			if err != nil || res.Text() != want {
				errs <- fmt.Errorf("echo %d: %v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping after the storm: %v", err)
	}
}

// TestServerDiesWithTai kills a process that runs a stdio server without
// any chance to clean up: Pdeathsig must take the server down with it.
func TestServerDiesWithTai(t *testing.T) {
	killTaiAndWaitFor(t, "parent", "", "server outlived the killed tai")
}

// TestServerHasAPrivateTerminal: a stdio server leads a session of its own
// whose controlling terminal is a pseudo-terminal of its own, not the
// user's.
func TestServerHasAPrivateTerminal(t *testing.T) {
	c := connectFake(t, "tty", nil)
	var sid, pid int
	var tty string
	if _, err := fmt.Sscanf(c.Instructions(), "sid=%d pid=%d tty=%s", &sid, &pid, &tty); err != nil {
		t.Fatalf("instructions %q: %v", c.Instructions(), err)
	}
	if pid != c.Transport().(*StdioTransport).Pid() || sid != pid {
		t.Errorf("server pid %d, session %d: want the server to lead its own session", pid, sid)
	}
	if own := controllingTTY(); !strings.HasPrefix(tty, "pts/") || tty == own {
		t.Errorf("the server's /dev/tty is %q, want a pseudo-terminal of its own", tty)
	}
}

// TestGrandchildDiesWithTai kills a process whose stdio server started a
// process of its own: Pdeathsig reaches only the server, so the server's
// private terminal must hang up the rest of its process group. That holds
// when the stand-in for tai was started with SIGHUP ignored too, as under
// nohup (and with SIGINT ignored, as for a background job of a script):
// the server must not inherit the ignored hang-up.
func TestGrandchildDiesWithTai(t *testing.T) {
	for _, tc := range []struct{ name, ignored string }{
		{"SIGHUP default", ""},
		{"SIGHUP ignored", "HUP"},
		{"SIGHUP and SIGINT ignored", "HUP INT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			killTaiAndWaitFor(t, "grandparent", tc.ignored, "the server's child outlived the killed tai")
		})
	}
}

// TestStartLeavesIgnoredSignalsIgnored: a stand-in for tai started with
// SIGHUP and SIGINT ignored starts a server with both at their default,
// and goes on ignoring them itself once the server has started, so what
// else it starts inherits what it was given.
func TestStartLeavesIgnoredSignalsIgnored(t *testing.T) {
	e := fakeEntry(t, "signals")
	cmd := exec.CommandContext(testCtx(t), "/bin/sh", append([]string{"-c", `trap "" HUP INT; exec "$0" "$@"`, e.Command}, e.Args...)...)
	cmd.Env = mergeEnv(os.Environ(), e.Env)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var hup, intr bool
	var mask uint64
	if _, err := fmt.Sscanf(string(out), "%t %t %x", &hup, &intr, &mask); err != nil {
		t.Fatalf("the stand-in said %q: %v", out, err)
	}
	if !hup || !intr {
		t.Errorf("after starting a server the stand-in ignores SIGHUP: %v, SIGINT: %v; want both still ignored", hup, intr)
	}
	if bits := uint64(1<<(unix.SIGHUP-1) | 1<<(unix.SIGINT-1)); mask&bits != 0 {
		t.Errorf("the server's SigIgn is %x: it inherited the ignored SIGHUP or SIGINT", mask)
	}
}

// hangupIgnoredAtStart says whether the tests were started with SIGHUP
// ignored, as under nohup. It is read once, before any test: once a
// channel has been notified of SIGHUP and stopped, the signal is ignored
// again, but signal.Ignored no longer says so.
var hangupIgnoredAtStart = signal.Ignored(unix.SIGHUP)

// hangupAtDefault makes the processes the test starts get SIGHUP at its
// default, even when the tests run under nohup, whose ignored SIGHUP they
// would inherit: while a channel is notified of it, SIGHUP is caught
// here, and a caught signal is at its default in a program started by
// exec. The signal is ignored again when the test ends.
func hangupAtDefault(t *testing.T) {
	if !hangupIgnoredAtStart {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, unix.SIGHUP)
	t.Cleanup(func() { signal.Stop(hup) })
}

// killTaiAndWaitFor runs the fake in mode as a stand-in for tai, started
// with the signals named in ignored (as sh's trap names them) ignored; it
// prints the pid of a process it started (its server, or the server's
// child). The stand-in is SIGKILLed and that process must then exit.
func killTaiAndWaitFor(t *testing.T, mode, ignored, failure string) {
	ctx := testCtx(t)
	e := fakeEntry(t, mode)
	cmd := exec.CommandContext(ctx, e.Command, e.Args...)
	if ignored == "" {
		hangupAtDefault(t)
	} else {
		// An ignored signal stays ignored across exec.
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `trap "" ` + ignored + `; exec "$0" "$@"`, e.Command}, e.Args...)...)
	}
	cmd.Env = mergeEnv(os.Environ(), e.Env)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil || pid <= 0 {
		t.Fatalf("reading the pid: %d %v", pid, err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("process %d not running: %v", pid, err)
	}
	t.Cleanup(func() { // should the test fail, leave nothing behind
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := waitExit(ctx, pid); err != nil {
		t.Errorf("%s: %v", failure, err)
	}
}

// TestClientAnswersPingBetweenCalls: with no call in flight, the idle
// reader still answers a server's ping.
func TestClientAnswersPingBetweenCalls(t *testing.T) {
	pong := make(chan string, 1)
	c := connectFake(t, "default", &ClientOptions{OnNotification: func(m *Message) {
		if m.Method == MethodLogMessage {
			pong <- string(m.Params)
		}
	}})
	ctx := testCtx(t)
	if res, err := c.Call(ctx, "ping_later", nil); err != nil || res.Text() != "later" {
		t.Fatalf("ping_later: %v %v", res, err)
	}
	select {
	case got := <-pong:
		if !strings.Contains(got, `\"result\":{}`) {
			t.Errorf("server saw the client answer its ping with %s", got)
		}
	case <-ctx.Done():
		t.Fatal("the server's ping between calls was never answered")
	}
}

func TestTextOf(t *testing.T) {
	tests := []struct {
		name, item, want string
		ok               bool
	}{
		{name: "text", item: `{"type":"text","text":"hi"}`, want: "hi", ok: true},
		{name: "order and spaces", item: `{ "text" : "a\nb\u00e9", "type" : "text" }`, want: "a\nbé", ok: true},
		{name: "annotated", item: `{"type":"text","text":"hi","annotations":{}}`},
		{name: "image", item: `{"type":"image","data":"AA==","mimeType":"image/png"}`},
		{name: "text not a string", item: `{"type":"text","text":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := TextOf(json.RawMessage(tt.item))
			if got != tt.want || ok != tt.ok {
				t.Fatalf("TextOf = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestClientCallTimeoutsOverlap: two hanging calls started one after the
// other each time out on their own deadline (the later one after the
// earlier has gone), calls made meanwhile are answered, and both
// cancellations reach the server.
func TestClientCallTimeoutsOverlap(t *testing.T) {
	hanging := make(chan struct{}, 4)
	c := connectFake(t, "default", &ClientOptions{CallTimeout: 300 * time.Millisecond, OnNotification: func(m *Message) {
		if m.Method == MethodLogMessage && strings.Contains(string(m.Params), "hanging") {
			hanging <- struct{}{}
		}
	}})
	ctx := testCtx(t)
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.Call(ctx, "hang", nil)
			done <- err
		}()
		select {
		case <-hanging:
		case <-ctx.Done():
			t.Fatal("hang call never reached the server")
		}
		res, err := c.Call(ctx, "echo", map[string]any{"text": "meanwhile"})
		if err != nil || res.Text() != "meanwhile" {
			t.Fatalf("call beside a hanging one: %v, %v", res, err)
		}
	}
	for range 2 {
		if err := <-done; !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 300ms") {
			t.Fatalf("err = %v, want a timeout", err)
		}
	}
	res, err := c.Call(ctx, "last_cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Text(), `"timed out"`); n != 2 {
		t.Errorf("cancellations = %s, want two timed out", res.Text())
	}
}

// TestClientReplyNeverReachesTheNextCall cancels calls at every point of
// their life, just before or after their answer arrives (often delivered
// by another caller reading for both), and checks that each caller's next
// call gets its own answer: a reply channel is reused only when its reply
// was taken.
func TestClientReplyNeverReachesTheNextCall(t *testing.T) {
	c := connectFake(t, "default", nil)
	ctx := testCtx(t)
	caller := func(who string, rounds int) error {
		for i := range rounds {
			cctx, cancel := context.WithCancel(ctx)
			go func() {
				for range i % 7 * 40 {
					runtime.Gosched()
				}
				cancel()
			}()
			if _, err := c.Call(cctx, "echo", map[string]any{"text": fmt.Sprintf("%s cancelled %d", who, i)}); err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%s call %d: %v", who, i, err)
			}
			cancel()
			want := fmt.Sprintf("%s own %d", who, i)
			res, err := c.Call(ctx, "echo", map[string]any{"text": want})
			if err != nil {
				return fmt.Errorf("%s call after %d: %v", who, i, err)
			}
			if got := res.Text(); got != want {
				return fmt.Errorf("%s call after %d answered %q, want %q", who, i, got, want)
			}
		}
		return nil
	}
	errs := make(chan error, 4)
	for w := range 4 {
		go func() { errs <- caller(fmt.Sprint("caller", w), 1000) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestSlowFirstStartNamesTheDownload: a launcher that fetches its package
// on the first start (here the fake server under the name npx) that runs
// out of time says the download may be why; another command does not.
func TestSlowFirstStartNamesTheDownload(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	npx := filepath.Join(t.TempDir(), "npx")
	if err := os.Symlink(exe, npx); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{npx, exe} {
		e := fakeEntry(t, "no-init")
		e.Command = command
		_, err := Connect(testCtx(t), e, &ClientOptions{ConnectTimeout: 300 * time.Millisecond})
		if err == nil {
			t.Fatal("Connect succeeded")
		}
		named := strings.Contains(err.Error(), "npx showed no sign of work")
		if named != (command == npx) {
			t.Fatalf("%s: err = %v; want the download named only for npx", filepath.Base(command), err)
		}
	}
}
