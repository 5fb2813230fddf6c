package builtin

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"tai/vault/vaulttest"
)

// TestShellBackgroundJobs: a command that leaves a background process
// behind reports its own exit status, and the leftovers are stopped.
func TestShellBackgroundJobs(t *testing.T) {
	e := newShell(t)
	tests := []struct {
		name    string
		command string
		want    []string
		errRes  bool
	}{
		{name: "holding the output", command: "sleep 30 & echo $!; echo started",
			want: []string{"exit status 0", "started", "background processes", "stopped"}},
		{name: "output redirected", command: "sleep 30 >/dev/null 2>&1 & echo $!",
			want: []string{"exit status 0", "background processes", "stopped"}},
		{name: "detached into its own session", command: "setsid sleep 778 >/dev/null 2>&1 </dev/null & echo $!",
			want: []string{"exit status 0", "background processes", "stopped"}},
		{name: "double fork", command: "(setsid sh -c 'sleep 779 & echo $!' &) | head -1",
			want: []string{"exit status 0"}},
		{name: "failing leader", command: "sleep 30 & echo $!; exit 3",
			want: []string{"exit status 3", "background processes"}, errRes: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := dispatch(t, e, "shell", map[string]any{"command": tt.command})
			text := res.Text()
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "could not run") || strings.Contains(text, "WaitDelay") {
				t.Errorf("reported as a failure to run:\n%s", text)
			}
			if res.IsError != tt.errRes {
				t.Errorf("isError = %v, want %v:\n%s", res.IsError, tt.errRes, text)
			}
			_, out, _ := strings.Cut(text, "--- stdout ---\n")
			pid, err := strconv.Atoi(strings.SplitN(out, "\n", 2)[0])
			if err != nil {
				t.Fatalf("no pid in the output:\n%s", text)
			}
			// The call returns only once everything it started has ended
			// and been reaped.
			if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
				t.Errorf("process %d is still there after the call returned (kill 0: %v)", pid, err)
			}
			waitGone(t, pid)
		})
	}
}

// waitGone fails the test unless process pid ends within 10 s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
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
		if n == 0 {
			unix.Kill(pid, unix.SIGKILL)
			t.Fatalf("background process %d still runs after the command ended", pid)
		}
		return
	}
}

// TestShellTimeoutStopsDetached: a command killed at its timeout takes
// down what it detached too.
func TestShellTimeoutStopsDetached(t *testing.T) {
	e := newShell(t)
	res := dispatch(t, e, "shell", map[string]any{"timeout": 1.0,
		"command": "setsid sleep 781 >/dev/null 2>&1 </dev/null & echo $!; exec sleep 30"})
	text := res.Text()
	if !res.IsError || !strings.Contains(text, "longer than its timeout") {
		t.Fatalf("not reported as timed out:\n%s", text)
	}
	_, out, _ := strings.Cut(text, "--- stdout ---\n")
	pid, err := strconv.Atoi(strings.SplitN(out, "\n", 2)[0])
	if err != nil {
		t.Fatalf("no pid in the output:\n%s", text)
	}
	waitGone(t, pid)
}

// TestShellKeeperKilledByTheCommand: a command that kills its keeper
// (after detaching a process that holds nothing of tai's) still ends its
// call promptly, saying what happened. Only an unsandboxed command (the
// person's own) can: the model's cannot signal its keeper.
func TestShellKeeperKilledByTheCommand(t *testing.T) {
	e := newShell(t)
	res := dispatch(t, e, "shell", map[string]any{"command": "setsid sleep 783 </dev/null & echo $!; kill -9 $PPID; sleep 30"})
	text := res.Text()
	if !res.IsError || !strings.Contains(text, "keeper was killed") {
		t.Fatalf("not reported:\n%s", text)
	}
	_, out, _ := strings.Cut(text, "--- stdout ---\n")
	if pid, err := strconv.Atoi(strings.SplitN(out, "\n", 2)[0]); err == nil {
		// Outside tai (no subreaper here) it is left to us.
		unix.Kill(pid, unix.SIGKILL)
	}
}

func TestCappedBufferReportsWhatItDrops(t *testing.T) {
	c := &cappedBuffer{max: 10}
	for _, s := range []string{"01234", "56789ab", "cdef"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	var b strings.Builder
	c.section(&b, "stdout")
	want := "--- stdout ---\n0123456789\n--- stdout: 6 more bytes were not kept"
	if !strings.HasPrefix(b.String(), want) {
		t.Fatalf("section = %q", b.String())
	}
}

// Shell output is redacted before it is cut to its limit: the cut cannot
// leave the first bytes of a secret.
func TestShellCutComesAfterRedaction(t *testing.T) {
	secret := "cut-secret-Zq8Wm3Xv7Pk2"
	store := vaulttest.Open(t)
	if err := store.SecretSet("cut", secret, nil); err != nil {
		t.Fatal(err)
	}
	red, err := store.Redactor()
	if err != nil {
		t.Fatal(err)
	}
	c := &cappedBuffer{max: 10, slack: 64, red: red}
	c.Write([]byte("0123456" + secret + "tail"))
	var b strings.Builder
	c.section(&b, "stdout")
	if got := b.String(); strings.Contains(got, secret[:8]) || !strings.Contains(got, "[REDACTED:cut]") {
		t.Fatalf("shell output cut at 10 bytes: %q", got)
	}
}

// TestLiveOutputNeverShowsASplitSecret: output shown as it comes holds a
// secret back while it may be arriving in pieces, and shows it redacted.
func TestLiveOutputNeverShowsASplitSecret(t *testing.T) {
	secret := "live-secret-Zq8Wm3Xv7Pk2"
	store := vaulttest.Open(t)
	if err := store.SecretSet("live", secret, nil); err != nil {
		t.Fatal(err)
	}
	red, err := store.Redactor()
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	o := &liveOutput{red: red, show: func(s string) { shown = append(shown, s) }}
	out := o.stream()
	out.Write([]byte("before " + secret[:9]))
	if len(shown) != 1 || shown[0] != "before " {
		t.Fatalf("shown %q, want the text before the secret's start", shown)
	}
	out.Write([]byte(secret[9:] + " after\n"))
	o.flush()
	got := strings.Join(shown, "")
	if got != "before [REDACTED:live] after\n" {
		t.Fatalf("shown %q", got)
	}
	for _, s := range shown {
		if strings.Contains(s, secret[:9]) || strings.Contains(s, secret[9:]) {
			t.Fatalf("a piece of the secret was shown: %q", shown)
		}
	}
}
