package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// watchedGuard is a real sandbox.Guard that says when a command outside
// the sandbox starts waiting on it.
type watchedGuard struct {
	*sandbox.Guard
	waiting chan struct{}
}

func (g watchedGuard) Unsandboxed() func() {
	g.waiting <- struct{}{}
	return g.Guard.Unsandboxed()
}

// TestEveryUnsandboxedCommandWaitsOnTheGuard: while a sandboxed command
// has changed .git/config, a command run outside the sandbox (the
// profile's sandbox off, or no policy at all) waits until the guard has
// put it back, and so reads the config as it was.
func TestEveryUnsandboxedCommandWaitsOnTheGuard(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy *sandbox.Policy
	}{
		{name: "the profile's sandbox off", policy: &sandbox.Policy{Off: true}},
		{name: "no policy", policy: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			config := filepath.Join(dir, ".git", "config")
			if err := os.MkdirAll(filepath.Dir(config), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(config, []byte("[core]\n\tbare = false\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			g := watchedGuard{Guard: new(sandbox.Guard), waiting: make(chan struct{}, 1)}
			store := vaulttest.Open(t)
			reg := tool.NewRegistry(store, tool.NewApprover(tool.Yolo, nil))
			sh := Shell{Dir: dir, Store: store, Env: func(context.Context) []string { return os.Environ() },
				Policy: func(context.Context, string, []string) *sandbox.Policy { return tt.policy }, Guard: g}
			if err := reg.Add(sh.Tool()); err != nil {
				t.Fatal(err)
			}

			// A sandboxed command runs and plants a command in the config.
			done := g.Sandboxed([]string{config})
			if err := os.WriteFile(config, []byte("[core]\n\tsshCommand = planted\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			results := make(chan tool.Result, 1)
			go func() {
				res, err := reg.Dispatch(ctx, "shell", map[string]any{"command": "cat .git/config"})
				if err != nil {
					res = tool.ErrorResult("%v", err)
				}
				results <- res
			}()
			select {
			case <-g.waiting:
			case res := <-results:
				t.Fatalf("the command ran while a sandboxed one held the guard:\n%s", res.Text())
			case <-ctx.Done():
				t.Fatal("the command neither ran nor waited on the guard")
			}
			if back := done(); len(back) != 1 || back[0] != config {
				t.Fatalf("put back %v, want the config", back)
			}
			select {
			case res := <-results:
				if text := res.Text(); strings.Contains(text, "planted") || !strings.Contains(text, "bare = false") {
					t.Fatalf("the command outside the sandbox read:\n%s", text)
				}
			case <-ctx.Done():
				t.Fatal("the command did not end once the guard had put the config back")
			}
		})
	}
}
