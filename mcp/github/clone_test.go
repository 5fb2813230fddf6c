package github_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tai/mcp/github/githubtest"
)

// TestFreshCloneSkipsWithoutFixtures clones this repository into a
// folder with nothing beside it, as a newcomer's clone is, and runs this
// package's tests that read the shared fixtures there: they pass, each
// skipped with one line naming what is missing; with
// TAI_REQUIRE_FIXTURES=1 they fail instead. The clone holds what is
// committed (HEAD), which in CI is what is tested.
func TestFreshCloneSkipsWithoutFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: it clones the repository and builds a package")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to clone the repository: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	clone := filepath.Join(t.TempDir(), "tai")
	if out, err := exec.CommandContext(ctx, git, "clone", "-q", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v\n%s", root, err, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(clone), "shared")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the clone has something named shared beside it: %v", err)
	}
	const tests = "^(TestServerJSONGolden|TestClientReadsFixtures)$"
	run := func(require string) (string, error) {
		cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", "-run", tests, "./mcp/github/")
		cmd.Dir = clone
		for _, v := range os.Environ() {
			if !strings.HasPrefix(v, githubtest.RequireFixtures+"=") {
				cmd.Env = append(cmd.Env, v)
			}
		}
		cmd.Env = append(cmd.Env, githubtest.RequireFixtures+"="+require)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := run("")
	if err != nil {
		t.Fatalf("go test in a clone without ../shared failed: %v\n%s", err, out)
	}
	skips := strings.Count(out, "--- SKIP: ")
	lines := strings.Count(out, "skipped: needs ../shared/fixtures/repos beside the module, absent here (TAI_REQUIRE_FIXTURES=1 makes it a failure)")
	if skips < 2 || lines != skips {
		t.Errorf("want each of the fixture tests skipped with one line saying why (%d skips, %d lines):\n%s", skips, lines, out)
	}
	out, err = run("1")
	if err == nil || !strings.Contains(out, "TAI_REQUIRE_FIXTURES=1 requires them") {
		t.Errorf("with TAI_REQUIRE_FIXTURES=1 the missing fixtures do not fail the tests (%v):\n%s", err, out)
	}
}
