package sandbox

import (
	"os"
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
