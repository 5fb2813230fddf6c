package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp/pathrule"
	"tai/vault"
)

// Shell tool limits.
const (
	// ShellDefaultTimeout bounds a command that names no timeout.
	ShellDefaultTimeout = 120 * time.Second
	// ShellMaxTimeout is the longest timeout a call may ask for.
	ShellMaxTimeout = 30 * time.Minute
	// ShellOutputMax is how much of each of stdout and stderr is kept in
	// memory. More is counted and reported, never dropped silently; what is
	// kept and larger than ResultMax spills to a vault record.
	ShellOutputMax = 8 << 20
)

// SandboxHow is what the result of a command with args the sandbox
// refused says the person can do, in a line or two: run it themselves
// (their commands are not sandboxed) or lift the sandbox for the rest of
// the session, and keep a rule for this folder that runs its first words
// outside the sandbox when a rule can cover it (see tool.SuggestPrefix).
func SandboxHow(args map[string]any) string {
	how := "to allow it, the person runs it with !COMMAND at tai's prompt, or types /sandbox off at tai's prompt for this session"
	if prefix, ok := tool.SuggestPrefix(tool.Consent{Tool: "shell", Args: args}); ok {
		how += "\nor keeps a rule for this folder: = tai.permissions.add{tool = \"shell\", prefix = \"" + prefix + "\", sandbox = false}"
	}
	return how
}

// Shell is what the shell tool needs: the directory commands run in when
// the call names none, the vault whose secrets are redacted from their
// output, and the environment each command gets.
type Shell struct {
	// Dir is the working directory.
	Dir string
	// Store holds the secrets redacted from the output.
	Store *vault.Store
	// Env returns the environment for a command of the call in ctx
	// (credentials scrubbed).
	Env func(ctx context.Context) []string
	// Policy returns the sandbox of a command of the call in ctx run in
	// dir with env; nil (or a nil Policy) runs it unsandboxed.
	Policy func(ctx context.Context, dir string, env []string) *sandbox.Policy
	// Lifted, when set, says why the command with args of the call in
	// ctx runs outside the sandbox although Policy keeps it, or "" when it
	// does not; the result says so on its first line.
	Lifted func(ctx context.Context, args map[string]any) string
	// Guard, when set, puts back what sandboxed commands change of the
	// git repository's config and hooks, and holds commands run outside
	// the sandbox until it has (a *sandbox.Guard).
	Guard GitGuard
}

// GitGuard is what the shell asks of a sandbox.Guard around each command.
type GitGuard interface {
	// Sandboxed is called before a sandboxed command; done after it,
	// returning what was put back.
	Sandboxed(paths []string) (done func() []string)
	// Unsandboxed is called before a command run outside the sandbox,
	// and waits as long as a sandboxed command runs; done after it.
	Unsandboxed() (done func())
}

// Tool returns the shell tool.
func (sh Shell) Tool() tool.Tool {
	return tool.Tool{
		Name: "shell",
		Description: "Run a shell command and return its exit status, stdout and stderr. Give either command " +
			"(a string run with sh -c) or argv (program and arguments, no shell). Optional cwd and timeout in seconds " +
			"(default 120). Background processes (cmd &, setsid, nohup) are stopped when the command ends. " +
			"Large output is stored as a record to read with record_read.",
		Parameters: tool.Schema(nil, map[string]any{
			"command": tool.Prop("string", "command line run with sh -c"),
			"argv":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "program and arguments, run without a shell"},
			"cwd":     tool.Prop("string", "working directory (default: tai's)"),
			"timeout": tool.Prop("number", "seconds before the command is killed (default 120)"),
		}),
		Run: sh.runShell,
	}
}

func (sh Shell) runShell(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	command := a.Str("command", false)
	argv := a.Strings("argv")
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if (command == "") == (len(argv) == 0) {
		return tool.ErrorResult("give exactly one of command (a shell command line) or argv (a list: program, arguments)"), nil
	}
	if len(argv) > 0 && argv[0] == "" {
		return tool.ErrorResult("argv[0] is empty: name the program to run"), nil
	}
	cwd := a.Str("cwd", false)
	secs := a.Int("timeout", 0)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	timeout := ShellDefaultTimeout
	if secs > 0 {
		timeout = time.Duration(secs) * time.Second
	}
	if secs < 0 || timeout > ShellMaxTimeout {
		return tool.ErrorResult("timeout %d s is out of range: give 1 to %d seconds", secs, int(ShellMaxTimeout/time.Second)), nil
	}
	if len(argv) == 0 {
		argv = []string{"sh", "-c", command}
	}
	// The output is redacted before it is cut to ShellOutputMax, so the cut
	// cannot leave half a secret for redaction to miss.
	red, err := sh.Store.Redactor()
	if err != nil {
		return tool.Result{}, err
	}
	dir, env := resolvePath(sh.Dir, cwd), sh.Env(ctx)
	var p *sandbox.Policy
	if sh.Policy != nil {
		p = sh.Policy(ctx, dir, env)
	}
	why := ""
	if sh.Lifted != nil && p != nil && !p.Off {
		why = sh.Lifted(ctx, args)
	}
	var res tool.Result
	back := sh.guarded(why == "" && p != nil && !p.Off, p, func() {
		if why == "" {
			res = runCommand(ctx, argv, dir, env, p, timeout, red, SandboxHow(args))
			return
		}
		res = runCommand(ctx, argv, dir, env, nil, timeout, red, "")
		res.Content[0].Text = "(outside the sandbox: " + why + ")\n" + res.Content[0].Text
	})
	if len(back) > 0 {
		for i, b := range back {
			if rel, err := filepath.Rel(dir, b); err == nil && pathrule.Within(b, dir) {
				back[i] = rel
			}
		}
		res.Content[0].Text += "\n(the sandbox put back " + strings.Join(back, ", ") +
			": git runs them outside the sandbox, so sandboxed commands may not change them)"
	}
	return res, nil
}

// guarded runs run through sh.Guard: as a sandboxed command when
// sandboxed (keeping p's Guard paths), else as a command outside the
// sandbox (no policy, a profile with the sandbox off, or a lifting rule),
// which waits until no sandboxed command runs and what they changed is put
// back. Every command goes through here, so none of them can pass the
// guard by another way. It returns what was put back.
func (sh Shell) guarded(sandboxed bool, p *sandbox.Policy, run func()) []string {
	switch {
	case sh.Guard == nil:
		run()
		return nil
	case sandboxed:
		done := sh.Guard.Sandboxed(p.Guard)
		run()
		return done()
	}
	defer sh.Guard.Unsandboxed()()
	run()
	return nil
}

// runCommand runs argv in dir with the environment env under the shell
// keeper (see package sandbox), in its own process group, stopping
// it and everything it started on timeout or cancellation, and reports
// status and output. Whatever the command leaves running, in its group
// (cmd &) or detached from it (setsid), is stopped when it ends.
//
// Each stream keeps ShellOutputMax bytes and, beyond them, as much as the
// longest secret, so redact sees every secret that begins before the cut
// whole before the output is cut. A command p refused says so, and how
// to allow it: how.
func runCommand(ctx context.Context, argv []string, dir string, env []string, p *sandbox.Policy, timeout time.Duration, red *vault.Redactor, how string) tool.Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout := &cappedBuffer{max: ShellOutputMax, slack: vault.MaxSecretSize, red: red}
	stderr := &cappedBuffer{max: ShellOutputMax, slack: vault.MaxSecretSize, red: red}
	var outW, errW io.Writer = stdout, stderr
	var live *liveOutput
	if show := tool.CallerFrom(ctx).Live; show != nil {
		live = &liveOutput{red: red, show: show}
		outW, errW = io.MultiWriter(stdout, live.stream()), io.MultiWriter(stderr, live.stream())
	}
	start := time.Now()
	rep, err := keep(ctx, argv, dir, env, p, outW, errW)
	elapsed := time.Since(start).Round(time.Millisecond)
	if live != nil {
		live.flush()
	}

	var b strings.Builder
	isErr := false
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&b, "killed: the command ran longer than its timeout of %s\n", timeout)
		isErr = true
	case ctx.Err() != nil:
		fmt.Fprintf(&b, "killed: cancelled after %s\n", elapsed)
		isErr = true
	case errors.Is(err, sandbox.ErrKeeperGone):
		fmt.Fprintf(&b, "%v\n", err)
		isErr = true
	case err != nil:
		fmt.Fprintf(&b, "could not run %q: %v\n", argv[0], err)
		isErr = true
	case rep.Error != "":
		fmt.Fprintf(&b, "could not run %q: %s\n", argv[0], rep.Error)
		isErr = true
	case rep.Signal != 0:
		fmt.Fprintf(&b, "killed by signal %s (%s)\n", unix.SignalName(syscall.Signal(rep.Signal)), elapsed)
		isErr = true
	default:
		fmt.Fprintf(&b, "exit status %d (%s)\n", rep.Exit, elapsed)
		isErr = rep.Exit != 0
	}
	if rep.Stopped > 0 && ctx.Err() == nil {
		b.WriteString("[background processes were still running when the command ended; they were stopped]\n")
	}
	stdout.section(&b, "stdout")
	stderr.section(&b, "stderr")
	if isErr && p != nil {
		if hint := p.Hint(p.Explain(stderr.text()+"\n"+stdout.text(), dir), how); hint != "" {
			b.WriteString(red.Redact(hint) + "\n")
		}
	}
	return tool.Result{Content: []tool.Content{{Type: "text", Text: b.String()}}, IsError: isErr}
}

// keep runs argv under the shell keeper and returns its reply. Cancelling
// ctx asks the keeper to stop the command and all it started (SIGTERM);
// a keeper that does not end within two seconds is killed with its group.
func keep(ctx context.Context, argv []string, dir string, env []string, p *sandbox.Policy, stdout, stderr io.Writer) (sandbox.Reply, error) {
	cmd, pipes, err := sandbox.Command(argv, dir, env, p)
	if err != nil {
		return sandbox.Reply{}, err
	}
	replyR := pipes.Reply()
	defer replyR.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Should a keeper killed on cancellation leave a process holding the
	// output open, the wait for the output ends 2 s after the keeper.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		pipes.Failed()
		return sandbox.Reply{}, err
	}
	if err := pipes.Started(); err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		return sandbox.Reply{}, fmt.Errorf("the keeper took no request: %w", err)
	}
	replyBuf := &cappedBuffer{max: 4096}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(replyBuf, replyR)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(2 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited
		}
	}
	// The reply is written before the keeper exits; a keeper that was
	// killed wrote none, and then nothing may hold the read open for long.
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		replyR.Close()
		<-copied
	}
	return sandbox.ReadReply(replyBuf.buf)
}

// cappedBuffer keeps the first max bytes written and counts the rest. With
// red set it keeps slack bytes more, and section redacts what it kept
// before cutting it to max, so no secret is cut in two before redaction.
type cappedBuffer struct {
	mu      sync.Mutex
	max     int
	slack   int
	red     *vault.Redactor
	buf     []byte
	dropped int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max + c.slack - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
	} else {
		if room > 0 {
			c.buf = append(c.buf, p[:room]...)
		}
		c.dropped += int64(len(p) - max(room, 0))
	}
	return len(p), nil
}

// text returns what c kept.
func (c *cappedBuffer) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

func (c *cappedBuffer) section(b *strings.Builder, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.buf) == 0 && c.dropped == 0 {
		return
	}
	text, dropped := string(c.buf), c.dropped
	text = c.red.Redact(text)
	if len(text) > c.max {
		cut := c.red.Cut(text, c.max)
		dropped += int64(len(text) - cut)
		text = text[:cut]
	}
	fmt.Fprintf(b, "--- %s ---\n%s", name, text)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		b.WriteByte('\n')
	}
	if dropped > 0 {
		fmt.Fprintf(b, "--- %s: %d more bytes were not kept (the first %d are above); redirect the output to a file to keep it all ---\n",
			name, dropped, c.max)
	}
}

// liveOutput shows a command's output as it comes (see tool.Caller.Live),
// each stream's text redacted before it is shown: the tail that may be
// the start of a secret is held back until the next write shows whether
// one follows, so no secret reaches the screen split in two.
type liveOutput struct {
	mu      sync.Mutex // one show at a time, whichever stream writes
	red     *vault.Redactor
	show    func(text string)
	streams []*liveStream
}

// liveStream is one stream of a liveOutput and the text it holds back.
type liveStream struct {
	o    *liveOutput
	held string
}

func (o *liveOutput) stream() *liveStream {
	s := &liveStream{o: o}
	o.streams = append(o.streams, s)
	return s
}

// Write implements io.Writer.
func (s *liveStream) Write(p []byte) (int, error) {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	text := s.held + string(p)
	keep := s.o.red.Held(text)
	s.held = text[len(text)-keep:]
	if ready := text[:len(text)-keep]; ready != "" {
		s.o.show(s.o.red.Redact(ready))
	}
	return len(p), nil
}

// flush shows what the streams held back once the command has ended.
func (o *liveOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.streams {
		if s.held != "" {
			o.show(o.red.Redact(s.held))
			s.held = ""
		}
	}
}
