package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openTerminal opens a new pseudo-terminal and returns its master and
// the path of its other end, which stands for the person's terminal.
func openTerminal(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return m, "/dev/pts/" + strconv.Itoa(n)
}

// A sandboxed command can neither write to another terminal (a line
// that looks like tai's own) nor open it to push keystrokes into it
// (TIOCSTI, which root may do on any terminal it can open).
func TestSandboxedCommandCannotReachAnotherTerminal(t *testing.T) {
	needLandlock(t)
	_, pts := openTerminal(t)
	w := newWorld(t)
	script := fmt.Sprintf(`echo spoofed > %[1]s && echo WROTE-TERMINAL; exec 3<%[1]s && echo OPENED-TERMINAL; true`, pts)
	policies := map[string]Policy{
		"server": ForServer(ServerSpec{Name: "s", Command: "sh", Env: w.env, Vault: w.vault}),
		"shell":  ForShell(ShellSpec{Dir: w.project, Env: w.env, Vault: w.vault}),
	}
	for name, p := range policies {
		_, out := run(t, []string{"sh", "-c", script}, w.project, w.env, &p)
		for _, bad := range []string{"WROTE-TERMINAL", "OPENED-TERMINAL"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %s:\n%s", name, bad, out)
			}
		}
	}
}

// A shell command runs in a session of its own, so /dev/tty is never
// tai's terminal: it cannot read what the person types to tai nor push
// keystrokes into it.
func TestShellCommandHasASessionOfItsOwn(t *testing.T) {
	w := newWorld(t)
	p := ForShell(ShellSpec{Dir: w.project, Env: w.env, Vault: w.vault})
	for _, pol := range []*Policy{nil, &p} {
		rep, out := run(t, []string{"sh", "-c", `read -r stat </proc/self/stat; set -- ${stat##*) }; echo "pid=$$ session=$4"`}, w.project, w.env, pol)
		var pid, sid int
		if _, err := fmt.Sscanf(strings.TrimSpace(out), "pid=%d session=%d", &pid, &sid); err != nil {
			t.Fatalf("output %q (%+v): %v", out, rep, err)
		}
		if pid != sid {
			t.Errorf("the command (pid %d) is in session %d, not one of its own", pid, sid)
		}
	}
}
