package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// unprivileged is where a test runs tai as an ordinary user: a folder
// that user owns, holding a copy of the binary, and the credential the
// child runs with (nil when the tests already run unprivileged).
type unprivileged struct {
	dir, bin string
	cred     *syscall.Credential
}

// newUnprivileged prepares to run tai as uid/gid 65534 (nobody) when the
// tests run as root, else as the current user.
func newUnprivileged(t *testing.T) unprivileged {
	t.Helper()
	u := unprivileged{}
	dir, err := os.MkdirTemp("", "tai-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	u.dir, u.bin = dir, filepath.Join(dir, "tai")
	b, err := os.ReadFile(taiBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u.cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		home := filepath.Join(dir, "home")
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(home, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Mkdir(filepath.Join(dir, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	return u
}

// run runs tai with args and the given extra environment; it returns
// stdout and stderr together.
func (u unprivileged) run(t *testing.T, extra []string, args ...string) (string, error) {
	t.Helper()
	home := filepath.Join(u.dir, "home")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, u.bin, args...)
	cmd.Dir = home
	cmd.Env = append([]string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin",
		"XDG_CONFIG_HOME=" + home + "/config", "XDG_STATE_HOME=" + home + "/state",
		"TAI_VAULT=" + home + "/vault.db", "NO_COLOR=1"}, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: u.cred}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestChildrenCannotReadTaisEnvironment runs tai as an ordinary user and
// has a child of the same user read tai's /proc environ and memory: tai is
// non-dumpable, so neither is readable, while the child's own environ is.
func TestChildrenCannotReadTaisEnvironment(t *testing.T) {
	u := newUnprivileged(t)
	home := filepath.Join(u.dir, "home")
	secrets := []string{"OPENAI_API_KEY=sk-canary-openai-1", "ANTHROPIC_API_KEY=sk-ant-canary-2",
		"TAI_VAULT_PASSPHRASE=canary passphrase 3", "GITHUB_TOKEN=ghp_canary4"}
	chunk := `os.execute("cat /proc/$PPID/environ > ` + home + `/parent 2> ` + home + `/parent.err; ` +
		`head -c 64 /proc/$PPID/mem > ` + home + `/mem 2> ` + home + `/mem.err; ` +
		`cat /proc/$$/environ > ` + home + `/own") print("ran")`
	out, err := u.run(t, secrets, "-e", chunk)
	if err != nil || !strings.Contains(out, "ran") {
		t.Fatalf("tai -e: %v\n%s", err, out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(home, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(b)
	}
	// The child's own environ is readable, so the check below can fail.
	if own := read("own"); !strings.Contains(own, "ghp_canary4") {
		t.Fatalf("the child could not read its own environ (%q): the test proves nothing", own)
	}
	parent := read("parent")
	for _, s := range secrets {
		_, v, _ := strings.Cut(s, "=")
		if strings.Contains(parent, v) {
			t.Errorf("a child read %q from tai's /proc environ", v)
		}
	}
	if e := read("parent.err"); !strings.Contains(e, "Permission denied") {
		t.Errorf("reading tai's environ: stderr %q, want Permission denied", e)
	}
	if e := read("mem.err"); !strings.Contains(e, "Permission denied") {
		t.Errorf("reading tai's memory: stderr %q, want Permission denied", e)
	}
}

// TestDetachedProcessesEndWithTai: a process a script detaches into its
// own session (setsid, so neither tai's process group nor its session
// holds it) is re-parented to tai, a subreaper, and stopped when tai exits.
func TestDetachedProcessesEndWithTai(t *testing.T) {
	u := newUnprivileged(t)
	pidFile := filepath.Join(u.dir, "home", "pid")
	out, err := u.run(t, nil, "-e", `os.execute("setsid sleep 778 >/dev/null 2>&1 < /dev/null & echo $! > `+pidFile+`")`)
	if err != nil {
		t.Fatalf("tai -e: %v\n%s", err, out)
	}
	pid := pidIn(t, pidFile)
	if alive(t, pid) {
		t.Fatalf("the detached sleep (pid %d) still runs after tai exited", pid)
	}
}

// pidIn returns the process id written in file, and kills that process
// when the test ends, should it still run.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q", b)
	}
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	return pid
}

// alive reports whether process pid still runs 10 s from now (or when it
// ends, whichever is first).
func alive(t *testing.T, pid int) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return false
	}
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		return n == 0
	}
}

// TestDetachedProcessesEndWhenTaiIsTerminated: a hangup (SIGHUP) ends tai
// with what it detached, too. tai is started with SIGHUP at its default,
// as a terminal's session starts it, even when the test runs under nohup
// (where tai rightly outlives a hangup: TestTaiOutlivesHangupUnderNohup).
func TestDetachedProcessesEndWhenTaiIsTerminated(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			hangupAtDefault(t)
			u := newUnprivileged(t)
			home := filepath.Join(u.dir, "home")
			pidFile := filepath.Join(home, "pid")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, u.bin, "-e", `os.execute("setsid sleep 777 >/dev/null 2>&1 </dev/null & echo $! > `+pidFile+`") `+
				`print("ready") io.stdout:flush() while true do end`)
			cmd.Dir = home
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "TAI_VAULT=" + home + "/vault.db"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: u.cred}
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
			pid := pidIn(t, pidFile)
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("tai did not end on %v within 60 s; it was killed", sig)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) {
				t.Errorf("tai ended with %v, want status %d", err, 128+int(sig))
			}
			if alive(t, pid) {
				t.Fatalf("the detached sleep (pid %d) outlived tai", pid)
			}
		})
	}
}
