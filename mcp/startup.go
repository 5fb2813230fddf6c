package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The start of a server run by a launcher (npx, uvx, docker run, …; see
// LaunchOf) has two phases. While the launcher works (fetching the
// server's package on its first start), MCP_CONNECT_TIMEOUT counts from
// its last sign of work rather than from the spawn, up to InstallTimeout
// in all: a launcher that downloads for two minutes gets them, one that
// shows no sign of work for MCP_CONNECT_TIMEOUT is given up on as hung,
// exactly as any other server. Once the server writes its first byte to
// stdout, the handshake has MCP_CONNECT_TIMEOUT from that moment. Signs
// of work are what a person would see: output on stderr or its terminal,
// or the process tree using CPU or reading and writing (npx with its
// stderr on a pipe prints nothing while it downloads).

// Thresholds of a sign of work, counted from the last one: a process that
// only starts up, or reads the initialize request, shows none.
const (
	startupWorkCPU = 5         // clock ticks (50 ms)
	startupWorkIO  = 16 * 1024 // bytes read plus written
	// startupTick is how often a start is looked at (more often under a
	// cap shorter than 20 s).
	startupTick = time.Second
	// startupNoticeAfter is how long a start runs before it is reported.
	startupNoticeAfter = 2 * time.Second
)

// StartupNotice reports a server start that is taking a while because its
// launcher is fetching the server (see ClientOptions.OnStartup).
type StartupNotice struct {
	// Server is the server's name.
	Server string
	// Launch says which launcher fetches what.
	Launch Launch
	// Elapsed is the time since the spawn.
	Elapsed time.Duration
	// Line is the last line the launcher wrote to stderr or its terminal
	// (redacted, one line, as sent: clean it before showing it), or "".
	Line string
	// Started says the server has written to stdout: the launcher is
	// done, the handshake is under way.
	Started bool
	// Done says the start is over (it worked or failed): a terminal line
	// showing the notice can go.
	Done bool
}

// String renders the notice as one line for a person:
// "memory: npx is installing @modelcontextprotocol/server-memory… 12 s".
func (n StartupNotice) String() string {
	s := fmt.Sprintf("%s: %s is %s %s… %d s", n.Server, n.Launch.Launcher, n.Launch.Verb(), n.Launch.What(), int(n.Elapsed/time.Second))
	if n.Started {
		s = fmt.Sprintf("%s: %s started %s, waiting for its handshake… %d s", n.Server, n.Launch.Launcher, n.Launch.What(), int(n.Elapsed/time.Second))
	}
	if n.Line != "" {
		s += " (" + n.Line + ")"
	}
	return s
}

// StartupError reports a launcher's start that ran out of time: what the
// launcher was doing, for how long, its last line, and what to do. It
// unwraps to context.DeadlineExceeded.
type StartupError struct {
	// Server is the server's name.
	Server string
	// Launch says which launcher fetched what.
	Launch Launch
	// Argv is the server's command line, quoted for a terminal, after the
	// variables its start sets (StdioOptions.StartEnv).
	Argv string
	// Why is what ran out: startQuiet, startBound or startHandshake.
	Why string
	// Limit is the bound that ran out.
	Limit time.Duration
	// Elapsed is the time since the spawn.
	Elapsed time.Duration
	// Line is the launcher's last line on stderr, or "".
	Line string
}

// Reasons in StartupError.Why.
const (
	// StartQuiet: the launcher showed no sign of work for Limit.
	StartQuiet = "quiet"
	// StartBound: the launcher was still working when InstallTimeout ran out.
	StartBound = "bound"
	// StartHandshake: the server wrote to stdout but the handshake did not
	// finish within Limit of that.
	StartHandshake = "handshake"
)

// Error says what happened and what to do.
func (e *StartupError) Error() string {
	last := ""
	if e.Line != "" {
		last = " (last line: " + e.Line + ")"
	}
	secs := func(d time.Duration) string { return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second)) }
	switch e.Why {
	case StartBound:
		return fmt.Sprintf("mcp server %q: %s was still %s %s after %s, the most tai waits for a start%s; "+
			"run `%s` once in a terminal to finish the download (once it sits quiet it is the server, waiting for a client: stop it with Ctrl-C), "+
			"then try again: the launcher then finds it in its cache",
			e.Server, e.Launch.Launcher, e.Launch.Verb(), e.Launch.What(), secs(e.Elapsed), last, e.Argv)
	case StartHandshake:
		return fmt.Sprintf("mcp server %q: %s started the server, which wrote to stdout but did not finish the handshake within %s of that%s; "+
			"check that the command line starts it as a stdio server",
			e.Server, e.Launch.Launcher, secs(e.Limit), last)
	}
	since := ""
	if e.Elapsed-e.Limit >= time.Second {
		since = fmt.Sprintf(", %s after it started", secs(e.Elapsed))
	}
	return fmt.Sprintf("mcp server %q: %s showed no sign of work (no output, no CPU, no reads or writes) for %s while %s %s%s%s: "+
		"either it is stuck fetching (run `%s` in a terminal to see why), or the server it started never answered initialize",
		e.Server, e.Launch.Launcher, secs(e.Limit), e.Launch.Verb(), e.Launch.What(), since, last, e.Argv)
}

// Unwrap returns context.DeadlineExceeded.
func (e *StartupError) Unwrap() error { return context.DeadlineExceeded }

type startupNoticeKey struct{}

// WithStartupNotice returns a context under which the start of a server a
// launcher fetches is reported to fn in place of ClientOptions.OnStartup:
// a front end that already shows a status line (a chat turn's spinner)
// shows it there.
func WithStartupNotice(ctx context.Context, fn func(StartupNotice)) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, startupNoticeKey{}, fn)
}

// startupNotifier is the context's notice function, else fallback.
func startupNotifier(ctx context.Context, fallback func(StartupNotice)) func(StartupNotice) {
	if fn, ok := ctx.Value(startupNoticeKey{}).(func(StartupNotice)); ok {
		return fn
	}
	return fallback
}

// startClock is the watch's time: the wall clock, or a test's.
type startClock struct {
	now  func() time.Time
	tick func() (<-chan time.Time, func())
}

// wallClock ticks every startupTick, or every twentieth of limit when
// that is shorter (never under 10 ms).
func wallClock(limit time.Duration) startClock {
	every := min(startupTick, max(limit/20, 10*time.Millisecond))
	return startClock{now: time.Now, tick: func() (<-chan time.Time, func()) {
		t := time.NewTicker(every)
		return t.C, t.Stop
	}}
}

// workSeen tells signs of work from one look at a launcher to the next.
type workSeen struct {
	last   time.Time // the last sign, or the spawn
	base   treeWork  // the process tree at the last sign
	errOut int64     // bytes on stderr at the last sign (none at the spawn)
	based  bool      // the tree was looked at once
}

// look records one look at the launcher's process pid (0: not spawned
// yet), sampled by sample, with errOut bytes written to stderr so far.
// The tree's first look is its baseline, since starting costs CPU and
// reads; but stderr was empty at the spawn, so a line written before the
// first look is a sign of work already.
func (s *workSeen) look(pid int, sample func(pid int) treeWork, errOut int64, now time.Time) {
	if pid == 0 {
		return
	}
	cur := sample(pid)
	switch {
	case !s.based:
		s.base, s.based = cur, true
		if errOut > s.errOut {
			s.errOut, s.last = errOut, now
		}
	case errOut > s.errOut || cur.CPU >= s.base.CPU+startupWorkCPU || cur.IO >= s.base.IO+startupWorkIO:
		s.base, s.errOut, s.last = cur, errOut, now
	case cur.CPU < s.base.CPU || cur.IO < s.base.IO:
		// A process of the tree ended before it was reaped.
		s.base = cur
	}
}

// startWatch enforces the deadline of a launcher's start (see above) and
// reports it while it lasts.
type startWatch struct {
	server  string
	launch  Launch
	t       *StdioTransport
	cap     time.Duration // MCP_CONNECT_TIMEOUT or its override
	bound   time.Duration // InstallTimeout
	notify  func(StartupNotice)
	redact  func(string) string
	clock   startClock
	after   time.Duration // startupNoticeAfter, or a test's
	sampler func(pid int) treeWork

	stopped chan struct{}
	ended   chan struct{}
	mu      sync.Mutex
	fail    *StartupError // set when the watch ended the start
	shown   bool          // a notice was sent
}

// newStartWatch returns the watch of c's start under ctx when c runs a
// launcher over stdio, else nil.
func (c *Client) newStartWatch(ctx context.Context) *startWatch {
	st, ok := c.t.(*StdioTransport)
	if !ok {
		return nil
	}
	l, ok := LaunchOf(st.command, st.args)
	if !ok {
		return nil
	}
	if c.opts.Redact != nil {
		// The notices show it as it is; a ${VAR} may have gone into it.
		l.Package = c.opts.Redact(l.Package)
	}
	bound := c.opts.InstallTimeout
	if bound < c.opts.ConnectTimeout {
		bound = c.opts.ConnectTimeout
	}
	w := &startWatch{server: c.name, launch: l, t: st, cap: c.opts.ConnectTimeout, bound: bound,
		notify: startupNotifier(ctx, c.opts.OnStartup), redact: c.opts.Redact, clock: wallClock(c.opts.ConnectTimeout), after: startupNoticeAfter,
		sampler: sampleTree, stopped: make(chan struct{}), ended: make(chan struct{})}
	if c.opts.startClock != nil {
		w.clock, w.after = *c.opts.startClock, 0
	}
	return w
}

// run watches until stop, or ends the start (cancel) when its time is up.
func (w *startWatch) run(cancel context.CancelFunc) {
	defer close(w.ended)
	start := w.clock.now()
	ticks, stopTicks := w.clock.tick()
	defer stopTicks()
	work := workSeen{last: start}
	var outAt time.Time
	for {
		select {
		case <-w.stopped:
			return
		case <-ticks:
		}
		now := w.clock.now()
		if outAt.IsZero() {
			if w.t.spoke() {
				// The server speaks: from now on this is its handshake.
				outAt = now
			}
		}
		work.look(w.t.Pid(), w.sampler, w.t.stderr.Total(), now)
		lastWork := work.last
		var deadline time.Time
		why, limit := StartQuiet, w.cap
		switch {
		case !outAt.IsZero():
			deadline, why = outAt.Add(w.cap), StartHandshake
		case lastWork.Add(w.cap).Before(start.Add(w.bound)):
			deadline = lastWork.Add(w.cap)
		default:
			deadline, why, limit = start.Add(w.bound), StartBound, w.bound
		}
		elapsed := now.Sub(start)
		line := w.lastLine()
		if !now.Before(deadline) {
			w.mu.Lock()
			w.fail = &StartupError{Server: w.server, Launch: w.launch, Argv: w.t.byHand(), Why: why, Limit: limit, Elapsed: elapsed, Line: line}
			w.mu.Unlock()
			cancel()
			return
		}
		if w.notify != nil && elapsed >= w.after {
			w.mu.Lock()
			w.shown = true
			w.mu.Unlock()
			w.notify(StartupNotice{Server: w.server, Launch: w.launch, Elapsed: elapsed, Line: line, Started: !outAt.IsZero()})
		}
	}
}

// lastLine is the launcher's last line on stderr, redacted, on one line.
func (w *startWatch) lastLine() string {
	line := lastLines(w.t.Stderr(), 1)
	// A progress bar redraws its line with carriage returns.
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = strings.TrimSpace(line)
	if w.redact != nil {
		line = w.redact(line)
	}
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return line
}

// stop ends the watch and returns the error it ended the start with, if
// it did; a notice was shown, a last one (Done) says the start is over.
func (w *startWatch) stop() *StartupError {
	close(w.stopped)
	<-w.ended
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shown && w.notify != nil {
		w.notify(StartupNotice{Server: w.server, Launch: w.launch, Done: true})
	}
	return w.fail
}
