package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangupIgnoredAtStart says whether the tests were started with SIGHUP
// ignored, as under nohup. It is read once, before any test: once a
// channel has been notified of SIGHUP and stopped, the signal is ignored
// again, but signal.Ignored no longer says so.
var hangupIgnoredAtStart = signal.Ignored(syscall.SIGHUP)

// hangupAtDefault makes the processes the test starts get SIGHUP at its
// default, as a terminal's session does, even when the test runs under
// nohup, whose ignored SIGHUP they would inherit. While a channel is
// notified of it, SIGHUP is caught here, and a caught signal is at its
// default in a program started by exec; this process takes a hangup as
// nohup meant, as nothing. The signal is ignored again when the test ends.
func hangupAtDefault(t *testing.T) {
	if !hangupIgnoredAtStart {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	t.Cleanup(func() { signal.Stop(hup) })
}

// underTrap returns the command that runs tai with args, started with the
// signals named in ignored (as sh's trap names them) ignored, as nohup
// does for SIGHUP; "" starts it with SIGHUP at its default (see
// hangupAtDefault), whatever this test was started with.
func underTrap(t *testing.T, ctx context.Context, ignored string, args ...string) *exec.Cmd {
	if ignored == "" {
		hangupAtDefault(t)
		return exec.CommandContext(ctx, taiBin, args...)
	}
	// An ignored signal stays ignored across exec.
	return exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `trap "" ` + ignored + `; exec "$0" "$@"`, taiBin}, args...)...)
}

// TestTaiOutlivesHangupUnderNohup: started with SIGHUP ignored, tai was
// asked to outlive a hang-up, and does.
func TestTaiOutlivesHangupUnderNohup(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := underTrap(t, ctx, "HUP", "-e", `print("ready") io.stdout:flush() io.read()`)
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 16)
	if n, _ := io.ReadAtLeast(out, buf, len("ready")); !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("tai said %q", buf[:n])
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !alive(t, cmd.Process.Pid) {
		t.Fatalf("tai under nohup ended on SIGHUP: %v", cmd.Wait())
	}
}

// TestShellGrandchildDiesWithTai: tai is SIGKILLed while a shell command
// runs that started a process of its own; that process must end too, with
// SIGHUP at its default or ignored (nohup).
func TestShellGrandchildDiesWithTai(t *testing.T) {
	for _, ignored := range []string{"", "HUP", "HUP INT"} {
		t.Run("ignored="+ignored, func(t *testing.T) {
			e := newEnv(t)
			pidFile := filepath.Join(e.root, "pid")
			// The keeper is the command's parent, tai the keeper's
			// (the 4th field of /proc/PID/stat).
			command := `sleep 779 </dev/null >/dev/null 2>&1 & echo $! > ` + pidFile +
				`; kill -9 $(cut -d" " -f4 /proc/$PPID/stat); sleep 30`
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := underTrap(t, ctx, ignored, "--yolo", "-e", `tai.call("shell", {command = [[`+command+`]]})`)
			cmd.Env = e.vars()
			cmd.Dir = e.root
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("tai was not killed by its shell command: %v\n%s", err, out)
			}
			if pid := pidIn(t, pidFile); alive(t, pid) {
				t.Fatalf("the command's child (pid %d) outlived the killed tai", pid)
			}
		})
	}
}
