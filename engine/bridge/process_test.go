package bridge

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tai/engine/tool"
	"tai/vault"
)

// A child process (the test binary with childEnv set to a server name)
// opens the vault at childVaultEnv, says "ready", waits for a line on
// stdin, adds the test server under that name and exits.
const (
	childEnv      = "TAI_BRIDGE_TEST_CHILD"
	childVaultEnv = "TAI_BRIDGE_TEST_VAULT"
)

func runAddChild(name, path string) error {
	store, err := vault.Open(path, &vault.Options{LockTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer store.Close()
	reg := tool.NewRegistry(store, tool.NewApprover(tool.Yolo, nil))
	b, err := New(reg, store, &Options{Normalize: jsonNormalize, Profile: func() string { return "work" }})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := b.Add(ctx, AddRequest{Source: serverJSON(nil, name, nil)})
	if err != nil {
		return err
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added {
		return fmt.Errorf("add %s: %+v", name, rep)
	}
	return nil
}

// TestTwoProcessesAddAtOnce: two tai processes registering servers in the
// same vault at the same moment both land.
func TestTwoProcessesAddAtOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vault.db")
	type child struct {
		cmd *exec.Cmd
		in  *os.File
	}
	var kids []child
	for _, name := range []string{"left", "right"} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+name, childVaultEnv+"="+path)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = r
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "ready\n" {
			t.Fatalf("child %s: %q, %v (%s)", name, line, err, stderr.String())
		}
		kids = append(kids, child{cmd, w})
		t.Cleanup(func() { cmd.Process.Kill() })
	}
	for _, k := range kids {
		fmt.Fprintln(k.in, "go")
	}
	for _, k := range kids {
		k.in.Close()
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	store, err := vault.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	states, err := store.ServerStates()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 || states[0].Server.Name != "left" || states[1].Server.Name != "right" {
		t.Fatalf("stored %+v", states)
	}
	for _, st := range states {
		if len(st.Pins) == 0 || len(st.Tools) != len(st.Pins) {
			t.Fatalf("%s: %d pins, %d tools", st.Server.Name, len(st.Pins), len(st.Tools))
		}
	}
}
