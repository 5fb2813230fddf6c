package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"tai/mcp/screen"
)

// Defaults of StdioOptions.
const (
	// DefaultStderrMax is how many trailing bytes of a server's stderr are
	// kept for diagnostics.
	DefaultStderrMax = 64 * 1024
	// DefaultShutdownGrace is how long Close waits after closing stdin, and
	// again after SIGTERM, before escalating.
	DefaultShutdownGrace = 2 * time.Second
)

// StdioOptions tunes a StdioTransport. The zero value (or nil) means
// defaults.
type StdioOptions struct {
	// Env is laid over BaseEnv: the entry's own variables.
	Env map[string]string
	// BaseEnv is the environment the server starts from, as KEY=VALUE
	// entries. Nil means SafeEnv(): only the variables of tai's own
	// environment named in InheritedEnv, so tai's keys and passphrase
	// never reach a third-party server unless its entry asks for them.
	BaseEnv []string
	// Dir is the working directory; empty means the parent's.
	Dir string
	// StderrMax caps the kept stderr tail (default DefaultStderrMax).
	StderrMax int
	// MaxMessage caps one incoming or outgoing line (default
	// MCP_HTTP_MAX_BODY).
	MaxMessage int
	// ShutdownGrace is the wait after closing stdin and again after SIGTERM
	// (default DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Start, when set, starts the prepared command in place of its own
	// Start method: tai starts servers through its sandbox keeper, which
	// takes over the command's pipes, terminal (its first extra file when
	// it asks for a controlling terminal) and process attributes, and
	// exits as the server does. Start returns once the server runs, or
	// with why it could not start, leaving nothing running.
	Start func(cmd *exec.Cmd) error
	// StartEnv are the variables (KEY=VALUE) Start sets in the server's
	// environment that its command needs by hand too (tai's sandbox points
	// a server at package caches of its own): the command a StartupError
	// says to run in a terminal sets them first.
	StartEnv []string
}

// StdioTransport runs an MCP server as a child process and speaks
// newline-delimited JSON-RPC over its stdin and stdout. Its stderr is
// drained into a capped buffer, kept for diagnostics and never parsed.
//
// The child leads a session of its own with a private pseudo-terminal as
// its controlling terminal, so Close (and the child's own exit) takes its
// process group down too. Should this process die first, even by SIGKILL,
// Pdeathsig kills the child and the kernel hangs up its terminal, which
// sends SIGHUP to the rest of its process group (see privateTTY).
type StdioTransport struct {
	command string
	args    []string
	opts    StdioOptions

	cmd    *exec.Cmd
	tty    *os.File // the master of the server's terminal; nil without one
	stdin  *os.File
	rawIn  syscall.RawConn // stdin, for non-blocking first attempts
	try    writeAttempt
	stdout *os.File
	stderr *stderrTail
	br     *bufio.Reader
	acc    []byte      // partial line carried across Recv calls
	said   atomic.Bool // the server has written to stdout

	wmu  sync.Mutex // serialises Send
	wbuf []byte
	rmu  sync.Mutex // serialises Recv

	// The cancel hook of the last Recv stays on its context for the next
	// Recv on the same one (a Client reads under one long-lived context),
	// so a read usually registers nothing. Under rmu.
	hookDone <-chan struct{}
	unhook   func() bool
	expire   func()

	exited     chan struct{} // closed when the leader has been reaped
	stderrDone chan struct{} // closed when stderr hit EOF
	waitErr    error

	mu        sync.Mutex
	started   bool
	closed    bool
	fail      error // first fatal error; every later call returns it
	closeOnce sync.Once
	closeErr  error
	garbage   int
}

// ProcessError reports a stdio server that died or could not be started,
// with the tail of its stderr.
type ProcessError struct {
	// Command is the server's argv, for display.
	Command string
	// Err is what happened: the exit status, or the read or start failure.
	Err error
	// Stderr holds the last lines the server wrote to stderr.
	Stderr string
}

// Error names the command, what happened and the server's last stderr lines.
func (e *ProcessError) Error() string {
	s := fmt.Sprintf("mcp: server process %s: %v", e.Command, e.Err)
	if e.Stderr != "" {
		s += "; last stderr lines:\n" + e.Stderr
	} else {
		s += " (it wrote nothing to stderr)"
	}
	return s
}

// Unwrap returns the underlying failure.
func (e *ProcessError) Unwrap() error { return e.Err }

// NewStdioTransport returns a transport that will run command with exactly
// args (no shell) when connected.
func NewStdioTransport(command string, args []string, opts *StdioOptions) *StdioTransport {
	t := &StdioTransport{command: command, args: append([]string(nil), args...)}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.StderrMax <= 0 {
		t.opts.StderrMax = DefaultStderrMax
	}
	if t.opts.MaxMessage <= 0 {
		t.opts.MaxMessage = MCP_HTTP_MAX_BODY
	}
	if t.opts.ShutdownGrace <= 0 {
		t.opts.ShutdownGrace = DefaultShutdownGrace
	}
	t.stderr = newStderrTail(t.opts.StderrMax)
	t.expire = func() { _ = t.stdout.SetReadDeadline(time.Unix(1, 0)) }
	t.try.fn = func(fd uintptr) bool {
		t.try.n, t.try.err = syscall.Write(int(fd), t.try.b)
		return true
	}
	return t
}

// Argv returns the command line the transport runs, quoted for display.
func (t *StdioTransport) Argv() string {
	parts := make([]string, 0, 1+len(t.args))
	for _, a := range append([]string{t.command}, t.args...) {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// byHand is the command line a person runs in a terminal to do what the
// server's start does: Argv, after the variables of StartEnv.
func (t *StdioTransport) byHand() string {
	parts := make([]string, 0, len(t.opts.StartEnv)+1)
	for _, kv := range t.opts.StartEnv {
		k, v, _ := strings.Cut(kv, "=")
		parts = append(parts, k+"="+screen.Quote(v))
	}
	return strings.Join(append(parts, t.Argv()), " ")
}

// Connect spawns the server as the leader of a new session and process
// group, with a private pseudo-terminal as its controlling terminal (when
// one cannot be opened, in a process group of its own only). It returns
// once the process has started; the handshake is the Client's business.
func (t *StdioTransport) Connect(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if t.started {
		return errors.New("mcp: stdio transport already connected")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.command == "" {
		return errors.New("mcp: stdio server has no command; set the entry's command")
	}
	if err := checkDir(t.opts.Dir); err != nil {
		return fmt.Errorf("mcp: cannot start %s: %w", t.Argv(), err)
	}
	cmd := exec.Command(t.command, t.args...)
	cmd.Dir = t.opts.Dir
	base := t.opts.BaseEnv
	if base == nil {
		base = SafeEnv()
	}
	cmd.Env = mergeEnv(base, t.opts.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	tty, ttySlave, err := privateTTY()
	if err == nil {
		// The slave is the child's fd 3 and its controlling terminal.
		cmd.ExtraFiles = []*os.File{ttySlave}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3, Pdeathsig: syscall.SIGKILL}
	}

	inR, inW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("mcp: stdin pipe for %s: %w", t.Argv(), err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, tty, ttySlave)
		return fmt.Errorf("mcp: stdout pipe for %s: %w", t.Argv(), err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW, tty, ttySlave)
		return fmt.Errorf("mcp: stderr pipe for %s: %w", t.Argv(), err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// Under nohup the server and its descendants would inherit the
	// ignored SIGHUP that the terminal's hang-up relies on. Start returns
	// once the server has been exec'd, so the undo comes after that.
	undo := childDefaultSignals()
	if t.opts.Start != nil {
		err = t.opts.Start(cmd)
	} else {
		err = cmd.Start()
	}
	undo()
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW, tty, ttySlave)
		hint := "check the entry's command and args"
		if t.opts.Dir != "" {
			hint = "check the entry's command, args and cwd"
		}
		return &ProcessError{Command: t.Argv(), Err: fmt.Errorf("cannot start: %w (%s)", err, hint)}
	}
	closeAll(inR, outW, errW, ttySlave)
	rawIn, err := inW.SyscallConn()
	if err != nil {
		// Unreachable for a pipe; kill rather than leave a half-made leg.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		closeAll(inW, outR, errR, tty)
		return fmt.Errorf("mcp: stdin of %s: %w", t.Argv(), err)
	}
	t.cmd, t.tty, t.stdin, t.stdout, t.rawIn = cmd, tty, inW, outR, rawIn
	t.br = bufio.NewReaderSize(outR, 64*1024)
	t.exited = make(chan struct{})
	t.stderrDone = make(chan struct{})
	t.started = true
	go t.drainStderr(errR)
	if tty != nil {
		// What the server writes to its terminal (a prompt, say) joins
		// the stderr tail; nothing is ever typed into it.
		go func() { _, _ = io.Copy(t.stderr, tty) }()
	}
	go t.wait()
	return nil
}

// checkDir checks that dir (a server's cwd; "" is the parent's) is a
// folder the server can start in, so a bad cwd is reported as such rather
// than as exec's "no such file or directory", which blames the command.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("cwd %s does not exist: set the entry's cwd to an existing folder", dir)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("cwd %s cannot be reached (permission denied): set the entry's cwd to a folder you can enter", dir)
	case err != nil:
		return fmt.Errorf("cwd %s: %w: set the entry's cwd to an existing folder", dir, err)
	case !st.IsDir():
		return fmt.Errorf("cwd %s is not a folder: set the entry's cwd to a folder", dir)
	}
	if err := unix.Access(dir, unix.X_OK); err != nil {
		return fmt.Errorf("cwd %s cannot be entered (%v): set the entry's cwd to a folder you can enter", dir, err)
	}
	return nil
}

// wait reaps the leader, then kills whatever is left of its process group
// so no descendant outlives it, and hangs up its terminal.
func (t *StdioTransport) wait() {
	err := t.cmd.Wait()
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	if t.tty != nil {
		t.tty.Close()
	}
	t.waitErr = err
	close(t.exited)
}

// privateTTY opens a pseudo-terminal for a server: the master stays in
// this process, the slave becomes the server's controlling terminal. The
// terminal is what makes a server's descendants die with tai: Pdeathsig
// reaches only the server, but when tai dies, however it dies, the kernel
// closes the master and hangs up the terminal, and when its session
// leader (the server) then exits, the kernel sends SIGHUP and SIGCONT to
// its foreground process group, which is the server's own: every
// descendant that stayed in it and does not ignore SIGHUP ends. It also
// keeps servers off the user's terminal: /dev/tty in a server is this
// terminal, with no echo and no output processing.
func privateTTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	rc, err := m.SyscallConn()
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	var n uint32
	var ioErr error
	if err := rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr == nil {
			n, ioErr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN)
		}
	}); err != nil || ioErr != nil {
		m.Close()
		return nil, nil, errors.Join(err, ioErr)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	if tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS); err == nil {
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.IEXTEN
		_ = unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio)
	}
	return m, s, nil
}

func (t *StdioTransport) drainStderr(f *os.File) {
	defer close(t.stderrDone)
	defer f.Close()
	_, _ = io.Copy(t.stderr, f)
}

// spoke reports whether the server has written anything to stdout.
func (t *StdioTransport) spoke() bool { return t.said.Load() }

// Stderr returns the kept tail of the server's stderr.
func (t *StdioTransport) Stderr() string { return t.stderr.String() }

// Garbage returns how many non-JSON-RPC lines the server printed on stdout
// (malformed replies to no pending request included); they are skipped.
func (t *StdioTransport) Garbage() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.garbage
}

// Send writes one message as a single line. A message larger than
// MaxMessage is refused without writing anything.
func (t *StdioTransport) Send(ctx context.Context, msg *Message) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	b, err := msg.AppendJSON(t.wbuf[:0])
	if err != nil {
		return err
	}
	if len(b) > t.opts.MaxMessage {
		return fmt.Errorf("%w: %q is %d bytes, the limit is %d", ErrTooLarge, msg.describe(), len(b), t.opts.MaxMessage)
	}
	b = append(b, '\n')
	if cap(b) <= 1<<20 {
		t.wbuf = b
	}
	// Most lines fit in the pipe at once: one non-blocking attempt first,
	// so the common case arms no cancellation at all.
	n, err := t.tryWrite(b)
	if err != nil {
		return t.died(err)
	}
	if b = b[n:]; len(b) == 0 {
		return nil
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = t.stdin.SetWriteDeadline(time.Unix(1, 0)) })
		defer func() {
			if !stop() {
				_ = t.stdin.SetWriteDeadline(time.Time{})
			}
		}()
	}
	written := n
	for len(b) > 0 {
		n, err := t.stdin.Write(b)
		b = b[n:]
		written += n
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil:
			// A deadline left over from an earlier, cancelled call.
			_ = t.stdin.SetWriteDeadline(time.Time{})
		case errors.Is(err, os.ErrDeadlineExceeded):
			if written == 0 {
				return ctx.Err()
			}
			// Part of the line may have gone out: the stream is no longer
			// framed, so the connection cannot be used again.
			t.setFail(fmt.Errorf("mcp: write to %s abandoned: %w", t.Argv(), ctx.Err()))
			go t.Close()
			return ctx.Err()
		default:
			return t.died(err)
		}
	}
	return nil
}

// tryWrite makes one non-blocking write of b to the server's stdin and
// returns how much went out; a full pipe is not an error.
// Called with wmu held; the attempt's input and outcome live in the
// transport so the callback allocates nothing.
func (t *StdioTransport) tryWrite(b []byte) (int, error) {
	t.try.b = b
	if err := t.rawIn.Write(t.try.fn); err != nil {
		return 0, err
	}
	n, werr := t.try.n, t.try.err
	t.try.b = nil
	if n < 0 {
		n = 0
	}
	if werr == syscall.EAGAIN || werr == syscall.EINTR {
		werr = nil
	}
	return n, werr
}

// writeAttempt is one non-blocking write: fn writes b and records n, err.
type writeAttempt struct {
	b   []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

// Recv returns the next JSON-RPC message from the server's stdout. A line
// shaped like a reply (a JSON object with an id and a result or error) that
// is not valid JSON-RPC is returned as a *MalformedReplyError, so the
// request it answers fails at once. Other lines that are not JSON-RPC
// messages are skipped and counted (see Garbage). A
// line longer than MaxMessage fails the transport with an ErrTooLarge error
// and closes it. When the server exits, Recv returns a *ProcessError.
func (t *StdioTransport) Recv(ctx context.Context) (*Message, error) {
	t.rmu.Lock()
	defer t.rmu.Unlock()
	if err := t.usable(); err != nil {
		return nil, err
	}
	if done := ctx.Done(); done != t.hookDone {
		if t.unhook != nil {
			t.unhook()
		}
		t.hookDone, t.unhook = done, nil
		if done != nil {
			t.unhook = context.AfterFunc(ctx, t.expire)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		line, err := t.readLine()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if ctx.Err() != nil {
					_ = t.stdout.SetReadDeadline(time.Time{})
					return nil, ctx.Err()
				}
				// A deadline left over from an earlier, cancelled context.
				_ = t.stdout.SetReadDeadline(time.Time{})
				if ctx.Err() != nil {
					// ctx ended while the deadline was cleared.
					return nil, ctx.Err()
				}
				continue
			}
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		m := new(Message)
		if err := m.UnmarshalJSON(line); err != nil {
			if id, ok := malformedReplyID(line); ok {
				return nil, &MalformedReplyError{ID: id, Err: err}
			}
			t.noteGarbage()
			continue
		}
		return m, nil
	}
}

// noteGarbage counts one line that was not a JSON-RPC message; the Client
// calls it for a malformed reply that answers no pending request.
func (t *StdioTransport) noteGarbage() {
	t.mu.Lock()
	t.garbage++
	t.mu.Unlock()
}

// readLine returns the next line without its newline. The slice is valid
// until the next call.
func (t *StdioTransport) readLine() ([]byte, error) {
	if len(t.acc) > 0 && t.acc[len(t.acc)-1] == '\n' {
		t.acc = t.acc[:0]
	}
	for {
		frag, err := t.br.ReadSlice('\n')
		if len(frag) > 0 && !t.said.Load() {
			t.said.Store(true)
		}
		if len(t.acc)+len(frag) > t.opts.MaxMessage+1 {
			t.acc = nil
			err := fmt.Errorf("%w: %s sent a line over %d bytes; the connection is closed", ErrTooLarge, t.Argv(), t.opts.MaxMessage)
			t.setFail(err)
			go t.Close()
			return nil, err
		}
		switch {
		case err == nil:
			if len(t.acc) == 0 {
				return frag[:len(frag)-1], nil
			}
			t.acc = append(t.acc, frag...)
			return t.acc[:len(t.acc)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			t.acc = append(t.acc, frag...)
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.acc = append(t.acc, frag...)
			return nil, err
		default:
			if errors.Is(err, io.EOF) {
				err = errors.New("closed its stdout")
			}
			return nil, t.died(err)
		}
	}
}

// died turns an I/O failure into the transport's terminal error: a
// *ProcessError carrying the exit status and the stderr tail once the
// process is gone, or ErrClosed after Close.
func (t *StdioTransport) died(ioErr error) error {
	t.mu.Lock()
	if t.closed || t.fail != nil {
		err := t.fail
		t.mu.Unlock()
		if err == nil {
			err = ErrClosed
		}
		return err
	}
	t.mu.Unlock()
	// The process is ending or has ended: give it a bounded moment so the
	// report carries its exit status and all of its stderr.
	timer := time.NewTimer(t.opts.ShutdownGrace)
	defer timer.Stop()
	why := ioErr
	select {
	case <-t.exited:
		if t.waitErr != nil {
			why = t.waitErr
		} else {
			why = fmt.Errorf("exited with status 0 (%v)", ioErr)
		}
		select {
		case <-t.stderrDone:
		case <-timer.C:
		}
	case <-timer.C:
	}
	err := &ProcessError{Command: t.Argv(), Err: why, Stderr: lastLines(t.stderr.String(), 10)}
	t.setFail(err)
	return err
}

func (t *StdioTransport) setFail(err error) {
	t.mu.Lock()
	if t.fail == nil {
		t.fail = err
	}
	t.mu.Unlock()
}

func (t *StdioTransport) usable() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.fail != nil:
		return t.fail
	case t.closed:
		return ErrClosed
	case !t.started:
		return errors.New("mcp: stdio transport used before Connect")
	}
	return nil
}

// Close shuts the server down: close its stdin, wait, SIGTERM the process
// group, wait, SIGKILL the group. It returns once the process is reaped.
func (t *StdioTransport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		started := t.started
		t.mu.Unlock()
		if !started {
			return
		}
		_ = t.stdin.Close()
		pgid := t.cmd.Process.Pid
		timer := time.NewTimer(t.opts.ShutdownGrace)
		defer timer.Stop()
		select {
		case <-t.exited:
		case <-timer.C:
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			timer.Reset(t.opts.ShutdownGrace)
			select {
			case <-t.exited:
			case <-timer.C:
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-t.exited
			}
		}
		// wait killed the rest of the group, so stderr reaches EOF; the
		// bound only guards against a descendant that escaped the group.
		timer.Reset(t.opts.ShutdownGrace)
		select {
		case <-t.stderrDone:
		case <-timer.C:
		}
		// Unblocks a Recv still reading; the process is gone.
		_ = t.stdout.Close()
	})
	return t.closeErr
}

// Pid returns the id of the process the transport started (its process
// group id too), or 0 before Connect: the server, or with Start set the
// process Start made of the command (tai's keeper).
func (t *StdioTransport) Pid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return 0
	}
	return t.cmd.Process.Pid
}

// InheritedEnv returns the names of the variables of tai's environment a
// stdio server inherits by default: what programs need to find themselves,
// their home, temp folder, terminal and locale (the MCP TypeScript SDK's
// list plus locale and TMPDIR). Everything else comes from the entry's env.
func InheritedEnv() []string {
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"}
}

// SafeEnv returns the entries of tai's environment named in InheritedEnv,
// skipping exported shell functions.
func SafeEnv() []string {
	var out []string
	for _, k := range InheritedEnv() {
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			out = append(out, k+"="+v)
		}
	}
	return out
}

func mergeEnv(base []string, over map[string]string) []string {
	if len(over) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+over[k])
	}
	return out
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// lastLines returns at most n trailing lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	i := len(s)
	for k := 0; k < n; k++ {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

// stderrTail keeps the last max bytes written to it.
type stderrTail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func newStderrTail(max int) *stderrTail { return &stderrTail{max: max} }

// Write keeps the trailing max bytes; it never fails.
func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	n := len(p)
	if s.buf == nil {
		s.buf = make([]byte, 0, 2*s.max)
	}
	if len(p) >= s.max {
		s.buf = append(s.buf[:0], p[len(p)-s.max:]...)
		return n, nil
	}
	if len(s.buf)+len(p) > 2*s.max {
		keep := s.max - len(p)
		copy(s.buf, s.buf[len(s.buf)-keep:])
		s.buf = s.buf[:keep]
	}
	s.buf = append(s.buf, p...)
	return n, nil
}

// Total returns how many bytes were ever written.
func (s *stderrTail) Total() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// String returns the kept tail.
func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf
	if len(b) > s.max {
		b = b[len(b)-s.max:]
	}
	return string(b)
}

// Cap returns the capacity of the buffer, for tests of its bound.
func (s *stderrTail) Cap() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cap(s.buf)
}
