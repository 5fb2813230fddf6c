package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testClock is a start watch's clock the test moves: each advance is one
// tick, taken by the watch before advance returns.
type testClock struct {
	t     *testing.T
	mu    sync.Mutex
	now   time.Time
	ticks chan time.Time
	// watching is closed when the watch has read its start time.
	watching chan struct{}
}

func newTestClock(t *testing.T) *testClock {
	return &testClock{t: t, now: time.Unix(1_000_000, 0), ticks: make(chan time.Time), watching: make(chan struct{})}
}

func (c *testClock) clock() *startClock {
	return &startClock{
		now: func() time.Time {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.now
		},
		tick: func() (<-chan time.Time, func()) {
			close(c.watching)
			return c.ticks, func() {}
		},
	}
}

// advance moves the clock by d and hands the watch one tick; false when
// the start ended first.
func (c *testClock) advance(d time.Duration, done <-chan struct{}) bool {
	c.t.Helper()
	select {
	case <-c.watching:
	case <-time.After(20 * time.Second):
		c.t.Fatal("the start watch did not start within 20 s")
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	c.mu.Unlock()
	select {
	case c.ticks <- now:
		return true
	case <-done:
		return false
	case <-time.After(20 * time.Second):
		c.t.Fatal("the start watch took no tick within 20 s")
		return false
	}
}

// standIn writes a stand-in launcher named npx into a temp folder: a
// shell script with body. It returns the script's path.
func standIn(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "npx")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// startRun is one Connect running on its own goroutine, its notices and
// its outcome.
type startRun struct {
	notices chan StartupNotice
	done    chan struct{}
	c       *Client
	err     error
}

func startLauncher(t *testing.T, command string, clock *testClock, install time.Duration) *startRun {
	t.Helper()
	e := fakeEntry(t, "default")
	e.Name = "memory"
	e.Command = command
	e.Args = []string{"-y", "@modelcontextprotocol/server-memory"}
	r := &startRun{notices: make(chan StartupNotice, 10000), done: make(chan struct{})}
	opts := &ClientOptions{ConnectTimeout: 20 * time.Second, InstallTimeout: install,
		OnStartup:  func(n StartupNotice) { r.notices <- n },
		Stdio:      &StdioOptions{ShutdownGrace: 100 * time.Millisecond, StartEnv: []string{"npm_config_cache=/s/the memory/npm"}},
		startClock: clock.clock()}
	go func() {
		defer close(r.done)
		r.c, r.err = Connect(testCtx(t), e, opts)
	}()
	t.Cleanup(func() {
		<-r.done
		if r.c != nil {
			r.c.Close()
		}
	})
	return r
}

// step advances the clock by d and returns the notice of that tick;
// ok is false when the start ended instead.
func (r *startRun) step(t *testing.T, clock *testClock, d time.Duration) (StartupNotice, bool) {
	t.Helper()
	if !clock.advance(d, r.done) {
		return StartupNotice{}, false
	}
	select {
	case n := <-r.notices:
		if n.Done {
			<-r.done
			return n, false
		}
		return n, true
	case <-r.done:
		return StartupNotice{}, false
	case <-time.After(20 * time.Second):
		t.Fatal("no notice within 20 s of a tick")
	}
	return StartupNotice{}, false
}

// say makes the stand-in print line on its stderr, and waits for the
// watch to have seen it (ticks at the same time until a notice shows it).
func (r *startRun) say(t *testing.T, clock *testClock, fifo *os.File, line string) {
	t.Helper()
	if _, err := fmt.Fprintln(fifo, line); err != nil {
		t.Fatal(err)
	}
	limit := time.Now().Add(20 * time.Second)
	for time.Now().Before(limit) {
		n, ok := r.step(t, clock, 0)
		if !ok {
			t.Fatalf("the start ended before the stand-in printed %q: %v", line, r.err)
		}
		if n.Line == line {
			return
		}
	}
	t.Fatalf("the watch never saw the stand-in print %q", line)
}

// progressFIFO makes a FIFO the stand-in reads its stderr lines from,
// open for writing (and reading, so opening it does not wait for the
// stand-in).
func progressFIFO(t *testing.T) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "progress")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// echoScript is a stand-in npx that prints each line of fifo on stderr
// (npm's progress) until the test closes it, then runs the fake server.
func echoScript(t *testing.T, fifo string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return standIn(t, fmt.Sprintf("while IFS= read -r line; do printf '%%s\\n' \"$line\" >&2; done < '%s'\nexec '%s' -test.run='^$'", fifo, exe))
}

// A launcher still downloading past MCP_CONNECT_TIMEOUT, and saying so
// on stderr, gets the time it needs: the start works, and every second
// of it was reported as one line naming launcher, package and progress.
func TestLauncherStartOutlastsTheCap(t *testing.T) {
	fifoPath, fifo := progressFIFO(t)
	clock := newTestClock(t)
	r := startLauncher(t, echoScript(t, fifoPath), clock, 0)
	var last StartupNotice
	for i := 1; i <= 6; i++ {
		// 6 × 10 s: three times the cap, with a sign of work in each.
		if n, ok := r.step(t, clock, 10*time.Second); !ok {
			t.Fatalf("the start ended after %d s: %v", 10*i, r.err)
		} else {
			last = n
		}
		r.say(t, clock, fifo, fmt.Sprintf("npm http fetch GET 200 https://registry.npmjs.org/dep-%d 812ms (cache miss)", i))
	}
	want := "memory: npx is installing @modelcontextprotocol/server-memory… 60 s (npm http fetch GET 200 https://registry.npmjs.org/dep-5 812ms (cache miss))"
	if got := last.String(); got != want {
		t.Errorf("the terminal line reads\n%s\nwant\n%s", got, want)
	}
	fifo.Close() // the download is done: the stand-in runs the server
	<-r.done
	if r.err != nil {
		t.Fatalf("the start failed: %v", r.err)
	}
	if _, err := r.c.Tools(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-r.notices:
		if !n.Done {
			t.Errorf("the last notice is %+v, want Done", n)
		}
	default:
		t.Error("no Done notice ended the terminal line")
	}
}

// A launcher that shows no sign of work and never answers is given up on
// at MCP_CONNECT_TIMEOUT, as any hung server, with an error saying so.
func TestLauncherQuietStopsAtTheCap(t *testing.T) {
	clock := newTestClock(t)
	r := startLauncher(t, standIn(t, "exec sleep 3600"), clock, 0)
	for s := 1; s < 20; s++ {
		if _, ok := r.step(t, clock, time.Second); !ok {
			t.Fatalf("the start ended after %d s, before the 20 s cap: %v", s, r.err)
		}
	}
	if n, ok := r.step(t, clock, time.Second); ok {
		t.Fatalf("the start goes on at 20 s without a sign of work: %+v", n)
	}
	<-r.done
	var se *StartupError
	if !errors.As(r.err, &se) || se.Why != StartQuiet || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want a quiet StartupError", r.err)
	}
	for _, want := range []string{`mcp server "memory": npx showed no sign of work (no output, no CPU, no reads or writes) for 20 s while installing @modelcontextprotocol/server-memory:`,
		"npx -y @modelcontextprotocol/server-memory` in a terminal to see why"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, r.err)
		}
	}
}

// A launcher that keeps printing forever is stopped at InstallTimeout,
// with an error naming the launcher, the package, its last line and what
// to run to finish the download.
func TestLauncherBusyStopsAtTheBound(t *testing.T) {
	fifoPath, fifo := progressFIFO(t)
	clock := newTestClock(t)
	r := startLauncher(t, echoScript(t, fifoPath), clock, 60*time.Second)
	line := ""
	for s := 10; s < 60; s += 10 {
		if _, ok := r.step(t, clock, 10*time.Second); !ok {
			t.Fatalf("the start ended after %d s, before the 60 s bound: %v", s, r.err)
		}
		line = fmt.Sprintf("npm http fetch GET 200 https://registry.npmjs.org/dep-%d 3s", s)
		r.say(t, clock, fifo, line)
	}
	if _, ok := r.step(t, clock, 10*time.Second); ok {
		t.Fatal("the start goes on at the 60 s bound")
	}
	<-r.done
	var se *StartupError
	if !errors.As(r.err, &se) || se.Why != StartBound {
		t.Fatalf("err = %v; want a StartupError at the bound", r.err)
	}
	for _, want := range []string{`mcp server "memory": npx was still installing @modelcontextprotocol/server-memory after 60 s`,
		"(last line: " + line + ")",
		"run `npm_config_cache='/s/the memory/npm' /", // the variables the start sets, then the command
		"npx -y @modelcontextprotocol/server-memory` once in a terminal to finish the download"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, r.err)
		}
	}
}

// What counts as a sign of work, look by look: the tree's first look is
// only its baseline, but a line on stderr written before it counts (the
// watch may first look late, on a busy machine or when the spawn took a
// while; the start then must not be given up on 20 s after the spawn
// while the launcher spoke since); later, new output, 50 ms of CPU or
// 16 KiB of reads and writes.
func TestWorkSeenLookByLook(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tree := treeWork{CPU: 3, IO: 11_000}
	sample := func(int) treeWork { return tree }
	w := workSeen{last: t0}
	w.look(0, sample, 0, at(1)) // not spawned yet
	w.look(4242, sample, 52, at(5))
	if !w.last.Equal(at(5)) {
		t.Fatalf("a line written before the first look: last sign at %v, want %v", w.last.Sub(t0), 5*time.Second)
	}
	w.look(4242, sample, 52, at(6))
	if !w.last.Equal(at(5)) {
		t.Fatalf("nothing new at 6 s counted as work")
	}
	tree.CPU += startupWorkCPU
	w.look(4242, sample, 52, at(7))
	tree.IO += startupWorkIO
	w.look(4242, sample, 52, at(8))
	w.look(4242, sample, 60, at(9))
	if !w.last.Equal(at(9)) {
		t.Fatalf("CPU, reads and new output: last sign at %v, want 9 s", w.last.Sub(t0))
	}
	quiet := workSeen{last: t0}
	quiet.look(4242, sample, 0, at(5))
	if !quiet.last.Equal(t0) {
		t.Fatalf("the first look of a silent launcher counted as work")
	}
}

// LaunchOf tells launchers from servers and finds what they fetch.
func TestLaunchOf(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want Launch
		ok   bool
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, Launch{"npx", "@modelcontextprotocol/server-memory"}, true},
		{[]string{"/usr/bin/npx", "--yes", "--registry", "https://r.example", "pkg@1.2", "--port", "-p"}, Launch{"npx", "pkg@1.2"}, true},
		{[]string{"npx", "-p", "@scope/pkg", "bin-name"}, Launch{"npx", "@scope/pkg"}, true},
		{[]string{"uvx", "--from", "git+https://example/x", "x-server"}, Launch{"uvx", "git+https://example/x"}, true},
		{[]string{"uvx", "--python", "3.12", "mcp-server-fetch"}, Launch{"uvx", "mcp-server-fetch"}, true},
		{[]string{"docker", "run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"}, Launch{"docker run", "ghcr.io/github/github-mcp-server"}, true},
		{[]string{"pipx", "run", "--spec", "x==1", "x"}, Launch{"pipx run", "x==1"}, true},
		{[]string{"uv", "tool", "run", "mcp-server-git"}, Launch{"uv tool run", "mcp-server-git"}, true},
		{[]string{"npm", "exec", "--", "pkg"}, Launch{"npm exec", "pkg"}, true},
		{[]string{"docker", "ps"}, Launch{}, false},
		{[]string{"node", "server.js"}, Launch{}, false},
	} {
		got, ok := LaunchOf(c.argv[0], c.argv[1:])
		if got != c.want || ok != c.ok {
			t.Errorf("LaunchOf(%q) = %+v, %v; want %+v, %v", c.argv, got, ok, c.want, c.ok)
		}
	}
}

// Once the server writes to stdout the launcher is done: however busy its
// process tree stays, the handshake has MCP_CONNECT_TIMEOUT from then.
func TestLauncherHandshakeAfterFirstOutput(t *testing.T) {
	clock := newTestClock(t)
	// It prints a banner on stdout (as some servers wrongly do) and never
	// answers.
	r := startLauncher(t, standIn(t, "echo 'server listening'\nexec sleep 3600"), clock, 0)
	// One second in, then as many looks as it takes (on a busy machine the
	// banner may take a while to be read) at that same moment.
	if _, ok := r.step(t, clock, time.Second); !ok {
		t.Fatalf("the start ended at 1 s: %v", r.err)
	}
	limit := time.Now().Add(20 * time.Second)
	for {
		n, ok := r.step(t, clock, 0)
		if !ok {
			t.Fatalf("the start ended before the banner was read: %v", r.err)
		}
		if n.Started {
			if want := "memory: npx started @modelcontextprotocol/server-memory, waiting for its handshake…"; !strings.HasPrefix(n.String(), want) {
				t.Errorf("the terminal line reads %q, want it to start %q", n.String(), want)
			}
			break
		}
		if time.Now().After(limit) {
			t.Fatal("the banner on stdout was never seen")
		}
	}
	if _, ok := r.step(t, clock, 19*time.Second); !ok {
		t.Fatalf("the start ended 19 s after the server first wrote to stdout: %v", r.err)
	}
	if _, ok := r.step(t, clock, time.Second); ok {
		t.Fatal("the handshake goes on 20 s after the server first wrote to stdout")
	}
	var se *StartupError
	if !errors.As(r.err, &se) || se.Why != StartHandshake {
		t.Fatalf("err = %v; want a StartupError in the handshake", r.err)
	}
	if want := "did not finish the handshake within 20 s of that"; !strings.Contains(r.err.Error(), want) {
		t.Errorf("the error does not say %q:\n%v", want, r.err)
	}
}

// What a notice shows of the command line is redacted: a secret expanded
// into the package's name never reaches the terminal.
func TestLauncherNoticeRedacted(t *testing.T) {
	clock := newTestClock(t)
	e := fakeEntry(t, "default")
	e.Name, e.Command, e.Args = "memory", standIn(t, "exec sleep 3600"), []string{"-y", "pkg-s3cr3t"}
	notices := make(chan StartupNotice, 100)
	opts := &ClientOptions{ConnectTimeout: 20 * time.Second, Redact: func(s string) string { return strings.ReplaceAll(s, "s3cr3t", "[REDACTED]") },
		OnStartup: func(n StartupNotice) { notices <- n }, Stdio: &StdioOptions{ShutdownGrace: 100 * time.Millisecond}, startClock: clock.clock()}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = Connect(testCtx(t), e, opts)
	}()
	if !clock.advance(time.Second, done) {
		t.Fatalf("the start ended at once: %v", err)
	}
	if n := <-notices; strings.Contains(n.String(), "s3cr3t") || !strings.Contains(n.String(), "pkg-[REDACTED]") {
		t.Errorf("the notice reads %q", n.String())
	}
	for clock.advance(time.Second, done) {
	}
	<-done
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("err = %v", err)
	}
}
