package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// world is a throwaway home folder with secrets in it: an ssh key, a
// vault file, a file in another project, and a project to work in.
type world struct {
	home, vault, key, other, project string
	env                              []string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{home: filepath.Join(root, "home")}
	w.key = filepath.Join(w.home, ".ssh", "id_ed25519")
	w.vault = filepath.Join(w.home, ".local", "share", "tai", "vault.db")
	w.other = filepath.Join(w.home, "other", "secret.txt")
	w.project = filepath.Join(w.home, "project")
	for _, f := range []string{w.key, w.vault, w.other, filepath.Join(w.project, "README")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("SECRET of "+filepath.Base(f)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.home, ".bashrc"), []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + filepath.Join(root, "tmp")}
	os.Mkdir(filepath.Join(root, "tmp"), 0o700)
	return w
}

// run runs argv under the keeper with p and returns its reply and output.
func run(t *testing.T, argv []string, dir string, env []string, p *Policy) (Reply, string) {
	t.Helper()
	cmd, pipes, err := Command(argv, dir, env, p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		pipes.Failed()
		t.Fatal(err)
	}
	if err := pipes.Started(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the keeper did not end within 30 s")
	}
	b, _ := readAll(pipes.Reply())
	pipes.Reply().Close()
	rep, err := ReadReply(b)
	if err != nil {
		t.Fatalf("%v; output:\n%s", err, out.String())
	}
	return rep, out.String()
}

func readAll(f *os.File) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.Bytes(), err
}

func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
}

// The shell's policy: everything is readable but the denied folders and
// the vault's; only the project, temp folders and caches are writable.
func TestShellPolicyRefusesSecrets(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	p := ForShell(ShellSpec{Dir: w.project, Env: w.env, Vault: w.vault})
	script := `
cat "$KEY" && echo READ-KEY
cat "$VAULT" && echo READ-VAULT
cat "$OTHER" && echo READ-OTHER-OK
cat README >/dev/null && echo READ-PROJECT-OK
echo x > made.txt && echo WROTE-PROJECT-OK
echo x >> "$HOME/.bashrc" && echo WROTE-BASHRC
echo x > "$HOME/new-file" && echo WROTE-HOME
mkdir -p "$HOME/.ssh/more" && echo MADE-IN-SSH
echo x > "$TMPDIR/t" && echo WROTE-TMP-OK
ls "$HOME/.ssh" >/dev/null && echo LISTED-SSH
cat /proc/self/root$KEY && echo READ-VIA-PROC-ROOT
ln -s "$HOME/.ssh" link && cat link/id_ed25519 && echo READ-VIA-SYMLINK
true
`
	env := append(w.env, "KEY="+w.key, "VAULT="+w.vault, "OTHER="+w.other)
	rep, out := run(t, []string{"sh", "-c", script}, w.project, env, &p)
	if rep.Error != "" {
		t.Fatalf("could not run: %s", rep.Error)
	}
	for _, want := range []string{"READ-OTHER-OK", "READ-PROJECT-OK", "WROTE-PROJECT-OK", "WROTE-TMP-OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s missing: a sandboxed command could not do what it may\n%s", want, out)
		}
	}
	for _, bad := range []string{"READ-KEY", "READ-VAULT", "WROTE-BASHRC", "WROTE-HOME", "MADE-IN-SSH", "READ-VIA-PROC-ROOT", "READ-VIA-SYMLINK", "SECRET of id_ed25519", "SECRET of vault.db"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: the sandbox let a command through\n%s", bad, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.home, ".bashrc")); string(b) != "# rc\n" {
		t.Errorf(".bashrc was changed: %q", b)
	}
	t.Logf("%s\n%s", p.Describe(), out)
}

func TestUnrestrictedRunsAsBefore(t *testing.T) {
	w := newWorld(t)
	rep, out := run(t, []string{"cat", w.key}, "/", w.env, nil)
	if rep.Exit != 0 || !strings.Contains(out, "SECRET") {
		t.Fatalf("exit %d, %q", rep.Exit, out)
	}
}

// TestSandboxedCommandHoldsNoCapabilities: a command under a policy holds
// no capability, even when tai runs as root, so it cannot pass the
// ptrace and file checks that keep tai's /proc files from it; without a
// policy, root's command keeps root's.
func TestSandboxedCommandHoldsNoCapabilities(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	p := ForShell(ShellSpec{Dir: w.project, Env: w.env, Vault: w.vault})
	caps := []string{"grep", "^Cap", "/proc/self/status"}
	rep, out := run(t, caps, w.project, w.env, &p)
	if rep.Error != "" || rep.Exit != 0 {
		t.Fatalf("exit %d %s\n%s", rep.Exit, rep.Error, out)
	}
	for _, f := range []string{"CapPrm", "CapEff", "CapAmb"} {
		if !strings.Contains(out, f+":\t0000000000000000") {
			t.Errorf("%s is not empty under the sandbox:\n%s", f, out)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	if !strings.Contains(out, "CapBnd:\t0000000000000000") {
		t.Errorf("root's command keeps a bounding set under the sandbox:\n%s", out)
	}
	_, out = run(t, caps, w.project, w.env, nil)
	if strings.Contains(out, "CapEff:\t0000000000000000") {
		t.Errorf("root's command without a policy lost its capabilities:\n%s", out)
	}
}
