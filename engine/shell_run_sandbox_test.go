package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/sandbox"
	"tai/engine/tool"
)

// shellWorld is a throwaway home with an ssh key and the engine's vault
// in it, and a small Go project to work in.
func shellWorld(t *testing.T) (e *Engine, home, key string) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	// The Go caches stay where they are, so go test builds nothing twice.
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		v, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, strings.TrimSpace(string(v)))
	}
	home = t.TempDir()
	t.Setenv("HOME", home)
	// The home lies in /tmp here, so nothing can be made directly in /tmp
	// (see sandbox's carve): temporary files go to a folder of their own.
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("GOFLAGS", "-mod=mod")
	key = filepath.Join(home, ".ssh", "id_ed25519")
	project := filepath.Join(home, "project")
	files := map[string]string{
		key:                                 "-----BEGIN OPENSSH PRIVATE KEY----- not really\n",
		filepath.Join(home, ".bashrc"):      "# rc\n",
		filepath.Join(project, "go.mod"):    "module example.com/p\n\ngo 1.22\n",
		filepath.Join(project, "p.go"):      "package p\n\nfunc Add(a, b int) int { return a + b }\n",
		filepath.Join(project, "p_test.go"): "package p\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
	}
	for f, body := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return newEngine(t, nil, &Options{Mode: tool.Yolo, Dir: project}), home, key
}

// The model's shell commands read everything but the keys and the vault,
// and write only the project, temp folders and caches; go test works.
func TestShellSandboxForTheModel(t *testing.T) {
	e, home, key := shellWorld(t)
	vaultFile := e.store.Path()
	cases := []struct {
		command string
		refused bool
		says    string // in the result
	}{
		{`cat ~/.ssh/id_ed25519`, true, "refused this command access to ~/.ssh/id_ed25519: commands may not read or write ~/.ssh"},
		{`cat ` + vaultFile, true, "commands may not read or write the vault's folder"},
		{`echo evil >> ~/.bashrc`, true, "writing ~/.bashrc: commands may write only ~/project"},
		{`go test ./...`, false, "ok  \texample.com/p"},
		{`echo fine > notes.txt && cat notes.txt`, false, "fine"},
		{`touch ~/new-here`, true, "making ~/new-here: nothing new can be made directly in ~"},
	}
	for _, c := range cases {
		res := dispatch(t, e, "shell", map[string]any{"command": c.command})
		text := res.Text()
		if res.IsError != c.refused || !strings.Contains(text, c.says) {
			t.Errorf("%s: error %v, want %v, and %q in:\n%s", c.command, res.IsError, c.refused, c.says, text)
		}
		if c.refused && !strings.Contains(text, "!COMMAND at tai's prompt") {
			t.Errorf("%s: no word on how to allow it:\n%s", c.command, text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "# rc\n" {
		t.Errorf(".bashrc was changed: %q", b)
	}
	// The person's own command is theirs: not sandboxed.
	res, err := newSession(t, e).Dispatch(tool.ByPerson(turnCtx(t)), "shell", map[string]any{"command": "cat " + key})
	if err != nil || res.IsError || !strings.Contains(res.Text(), "not really") {
		t.Errorf("the person's own command was refused: %v\n%s", err, res.Text())
	}
}

// A failure that is not the sandbox's gets no word about it.
func TestShellSandboxSaysNothingOfOtherFailures(t *testing.T) {
	e, _, _ := shellWorld(t)
	res := dispatch(t, e, "shell", map[string]any{"command": "cat /no/such/file; exit 3"})
	if !res.IsError || strings.Contains(res.Text(), "[sandbox]") {
		t.Fatalf("%s", res.Text())
	}
}
