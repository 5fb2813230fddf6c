package sandbox

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkKeeperStart runs /bin/true under the keeper, unrestricted and
// under each default policy, in the same run: the sandbox's cost is the
// difference (the aim is under 5 ms per start).
func BenchmarkKeeperStart(b *testing.B) {
	home, _ := os.UserHomeDir()
	dir := b.TempDir()
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	server := ForServer(ServerSpec{Name: "bench", Command: "/bin/true", Env: env, Vault: home + "/.local/share/tai/vault.db"})
	shell := ForShell(ShellSpec{Dir: dir, Env: env, Vault: home + "/.local/share/tai/vault.db"})
	for _, c := range []struct {
		name string
		p    *Policy
	}{{"unsandboxed", nil}, {"server", &server}, {"shell", &shell}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd, pipes, err := Command([]string{"/bin/true"}, dir, env, c.p)
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				if err := pipes.Started(); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				rep, err := readAll(pipes.Reply())
				pipes.Reply().Close()
				if r, err2 := ReadReply(rep); err != nil || err2 != nil || r.Exit != 0 || r.Error != "" {
					b.Fatalf("%v %v %+v", err, err2, r)
				}
			}
		})
	}
}

// BenchmarkForServer builds a server's policy, as each start does: for a
// program on the system, and for python3 through a pyenv shim, whose
// chain (the shim, bash, pyenv's libexec script) is read and whose
// toolchain is looked for.
func BenchmarkForServer(b *testing.B) {
	w := newWorld(b)
	path, command, args := pyenvLayout(b, w, w.home+"/.pyenv", pythonVersion(b))
	env := append([]string{"PATH=" + path}, w.env[0], w.env[2])
	for _, c := range []struct{ name, command string }{{"system", "/bin/true"}, {"pyenv", command}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ForServer(ServerSpec{Name: "bench", Command: c.command, Args: args, Cwd: w.project, Env: env, Vault: w.vault})
			}
		})
	}
}

// BenchmarkGuard keeps and checks a fresh repository's config and hooks
// (git init's fifteen example hooks), as each of the model's sandboxed
// shell commands does around its run: a cost to set beside
// BenchmarkKeeperStart's.
func BenchmarkGuard(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Skipf("git init: %v %s", err, out)
	}
	paths := gitGuarded(dir)
	var g Guard
	for b.Loop() {
		if back := g.Sandboxed(paths)(); len(back) != 0 {
			b.Fatalf("put back %q", back)
		}
	}
}
