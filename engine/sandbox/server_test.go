package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServer starts script with sh as a stdio server would be, through
// StartServer under p, and returns what it printed once it ended.
func startServer(t *testing.T, w *world, p Policy, script string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(append([]string(nil), w.env...), env...)
	cmd.Dir = w.project
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := StartServer(p)(cmd); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(30 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("the server did not end within 30 s")
	}
	return "", nil
}

// A hostile stdio server can read neither the vault, nor an ssh key, nor
// another project, and writes only its own state and temp folders.
func TestHostileServerIsContained(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	p := ForServer(ServerSpec{Name: "evil/one", Command: "sh", Cwd: w.project, Env: w.env, Vault: w.vault})
	state := filepath.Join(w.home, ".local", "state", "tai", "servers", "evil_one")
	script := `
cat "$KEY" && echo READ-KEY
cat "$VAULT" && echo READ-VAULT
cat "$OTHER" && echo READ-OTHER
cat "$HOME/.bashrc" && echo READ-BASHRC
echo x >> "$HOME/.bashrc" && echo WROTE-BASHRC
echo x > "$HOME/other/planted" && echo WROTE-OTHER
cat /proc/self/root$KEY && echo READ-VIA-PROC-ROOT
cat README >/dev/null && echo READ-CWD-OK
echo x > "$STATE/s" && echo WROTE-STATE-OK
echo x > "$TMPDIR/t" && echo WROTE-TEMP-OK
case "$TMPDIR" in "$PARENT"/tai-*) echo PRIVATE-TEMP-OK;; esac
cat /etc/hostname >/dev/null && echo READ-ETC-OK
true
`
	out, err := startServer(t, w, p, script, "KEY="+w.key, "VAULT="+w.vault, "OTHER="+w.other, "STATE="+state,
		"PARENT="+lookEnv(w.env, "TMPDIR"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"READ-CWD-OK", "WROTE-STATE-OK", "WROTE-TEMP-OK", "PRIVATE-TEMP-OK", "READ-ETC-OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s missing: the server could not do what it may\n%s", want, out)
		}
	}
	for _, bad := range []string{"READ-KEY", "READ-VAULT", "READ-OTHER", "READ-BASHRC", "WROTE-BASHRC", "WROTE-OTHER", "READ-VIA-PROC-ROOT", "SECRET"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: the sandbox let a server through\n%s", bad, out)
		}
	}
	if _, err := os.Stat(filepath.Join(w.home, "other", "planted")); err == nil {
		t.Error("the server planted a file in another project")
	}
	if m, _ := filepath.Glob(filepath.Join(lookEnv(w.env, "TMPDIR"), "tai-*")); len(m) != 0 {
		t.Errorf("the private temp folder outlived the server: %v", m)
	}
}

// A server that cannot start is reported as such, and nothing is left.
func TestServerThatCannotStart(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command("no-such-program-here")
	cmd.Env = w.env
	err := StartServer(ForServer(ServerSpec{Name: "x", Command: "no-such-program-here", Env: w.env}))(cmd)
	if err == nil || !strings.Contains(err.Error(), "no-such-program-here") {
		t.Fatalf("err = %v, want one naming the program", err)
	}
}

// Required refuses to start where Landlock is missing ($TAI_LANDLOCK_ABI=0
// simulates it); otherwise the server runs unrestricted.
func TestMissingLandlock(t *testing.T) {
	t.Setenv(ABIEnv, "0")
	if abi, err := Available(); abi != 0 || err == nil {
		t.Fatalf("Available() = %d, %v with %s=0", abi, err, ABIEnv)
	}
	w := newWorld(t)
	p := ForServer(ServerSpec{Name: "s", Command: "sh", Env: w.env, Vault: w.vault})
	out, err := startServer(t, w, p, `cat "$KEY"`, "KEY="+w.key)
	if err != nil || !strings.Contains(out, "SECRET") {
		t.Fatalf("without Landlock a server runs as before: %v %q", err, out)
	}
	p.Required = true
	if _, err := startServer(t, w, p, `true`); err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("a required sandbox started without Landlock: %v", err)
	}
	t.Setenv(ABIEnv, "3")
	p = ForServer(ServerSpec{Name: "s", Command: "sh", Env: w.env, Required: true, NoNetwork: true})
	if _, err := startServer(t, w, p, `true`); err == nil || !strings.Contains(err.Error(), "cannot close") {
		t.Fatalf("a required closed network started on ABI 3: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	w := newWorld(t)
	data := filepath.Join(w.home, "data")
	os.Mkdir(data, 0o700)
	p := ForServer(ServerSpec{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", data}, Dir: w.home,
		Env: w.env, Vault: w.vault, NoNetwork: true})
	want := "reads: system; writes: its own package cache, its own state, ~/data, a private temp folder; network: closed"
	if got := p.Describe(); got != want {
		t.Errorf("Describe() =\n %s\nwant\n %s", got, want)
	}
	p = ForServer(ServerSpec{Name: "fs", Command: "sh", Write: []string{"~/.local/share/tai/x", "~"}, Env: w.env, Vault: w.vault})
	if len(p.Notes) != 3 || !strings.Contains(p.Notes[0], "~/.local/share/tai/x is left out: it is inside the vault's folder") ||
		p.Notes[1] != "~ is granted without the vault's folder, ~/.ssh, ~/.gnupg, ~/.aws, ~/.azure, ~/.config/gcloud, ~/.oci, ~/.kube, ~/.docker" ||
		p.Notes[2] != "~ is granted: the server reaches your whole home folder, but what is denied" {
		t.Errorf("notes = %q", p.Notes)
	}
	if got := (Policy{Off: true}).Describe(); !strings.Contains(got, "all of your rights") {
		t.Errorf("off: %q", got)
	}
}
