package vault

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Child processes: the test binary re-executed with TAI_VAULT_TEST_CHILD
// set runs one of these instead of the tests.
const childEnv = "TAI_VAULT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := runChild(mode, os.Getenv("TAI_VAULT_TEST_PATH"), os.Getenv("TAI_VAULT_TEST_ARG")); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(mode, path, arg string) error {
	in := bufio.NewReader(os.Stdin)
	switch mode {
	case "write":
		// Wait for "go", then write n secrets and n audit entries.
		prefix, nStr, _ := strings.Cut(arg, ":")
		n, _ := strconv.Atoi(nStr)
		s, err := Open(path, &Options{LockTimeout: 30 * time.Second})
		if err != nil {
			return err
		}
		fmt.Println("ready")
		if _, err := in.ReadString('\n'); err != nil {
			return err
		}
		for i := range n {
			if err := s.SecretSet(fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("value-%s-%d", prefix, i), nil); err != nil {
				return err
			}
			if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: fmt.Sprintf("%s/%d", prefix, i)}); err != nil {
				return err
			}
		}
		fmt.Println("done")
		return nil
	case "audit":
		// Append audit entries forever, saying each one's Seq on stdout
		// once AuditAppend returned, until killed.
		s, err := Open(path, nil)
		if err != nil {
			return err
		}
		for i := 0; ; i++ {
			e, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: fmt.Sprintf("%s/%d", arg, i), Outcome: "ok"})
			if err != nil {
				return err
			}
			fmt.Println(e.Seq)
		}
	case "set":
		// Set secret arg (name=value) and exit.
		name, value, _ := strings.Cut(arg, "=")
		s, err := Open(path, nil)
		if err != nil {
			return err
		}
		return s.SecretSet(name, value, nil)
	case "set-hold":
		// Set secret arg (name=value), then hold the file's exclusive lock
		// until stdin closes.
		name, value, _ := strings.Cut(arg, "=")
		s, err := Open(path, nil)
		if err != nil {
			return err
		}
		if err := s.SecretSet(name, value, nil); err != nil {
			return err
		}
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			return err
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, in)
		return db.Close()
	case "hold":
		// Hold the file's exclusive lock until stdin closes.
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			return err
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, in)
		return db.Close()
	case "crash":
		// Write numbered secrets and records forever, acknowledging each
		// committed index on stdout, until killed.
		s, err := Open(path, nil)
		if err != nil {
			return err
		}
		for i := 0; ; i++ {
			if err := s.SecretSet(fmt.Sprintf("crash-%d", i), fmt.Sprintf("value-%d", i), nil); err != nil {
				return err
			}
			if _, err := s.RecordPut(crashRecord(i), nil); err != nil {
				return err
			}
			fmt.Println(i)
		}
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

func crashRecord(i int) string {
	return fmt.Sprintf("record %d: %s", i, strings.Repeat("x", 1000+i))
}

// child is a re-executed test binary with line-by-line access to its stdout.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startChild(t *testing.T, ctx context.Context, mode, path, arg string) *child {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "TAI_VAULT_TEST_PATH="+path, "TAI_VAULT_TEST_ARG="+arg)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

// expect waits (bounded by ctx) for the child's next line and checks it.
func (c *child) expect(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	select {
	case got, ok := <-c.lines:
		if !ok {
			t.Fatalf("child exited before saying %q", want)
		}
		if got != want {
			t.Fatalf("child said %q, want %q", got, want)
		}
	case <-ctx.Done():
		t.Fatalf("child did not say %q in time", want)
	}
}

func TestTwoProcessesWriteConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := Open(path, &Options{LockTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	a := startChild(t, ctx, "write", path, "a:"+strconv.Itoa(n))
	b := startChild(t, ctx, "write", path, "b:"+strconv.Itoa(n))
	a.expect(t, ctx, "ready")
	b.expect(t, ctx, "ready")
	io.WriteString(a.stdin, "go\n")
	io.WriteString(b.stdin, "go\n")
	// This process writes too, at the same time.
	for i := range n {
		if err := s.SecretSet(fmt.Sprintf("p-%d", i), fmt.Sprintf("value-p-%d", i), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AuditAppend(AuditEntry{Kind: "test", Subject: fmt.Sprintf("p/%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	a.expect(t, ctx, "done")
	b.expect(t, ctx, "done")
	for _, c := range []*child{a, b} {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	for _, p := range []string{"a", "b", "p"} {
		for i := range n {
			v, _, err := s.SecretGet(fmt.Sprintf("%s-%d", p, i))
			if want := fmt.Sprintf("value-%s-%d", p, i); err != nil || v != want {
				t.Fatalf("secret %s-%d = %q, %v; want %q", p, i, v, err, want)
			}
		}
	}
	got, err := s.AuditVerify()
	if err != nil || got != 3*n {
		t.Fatalf("AuditVerify = %d, %v; want %d entries, no break", got, err, 3*n)
	}
}

func TestLockedVaultNamesFileAndHolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := Open(path, &Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SecretSet("before", "value-before", nil); err != nil {
		t.Fatal(err)
	}
	patient, err := Open(path, &Options{LockTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := startChild(t, ctx, "hold", path, "")
	h.expect(t, ctx, "locked")

	pid := strconv.Itoa(h.cmd.Process.Pid)
	for name, op := range map[string]func() error{
		"write": func() error { return s.SecretSet("during", "value-during", nil) },
		"read":  func() error { _, _, err := s.SecretGet("before"); return err },
		"open":  func() error { _, err := Open(path, &Options{LockTimeout: 100 * time.Millisecond}); return err },
	} {
		err := op()
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("%s while locked: err = %v, want ErrLocked", name, err)
		}
		if msg := err.Error(); !strings.Contains(msg, s.Path()) || !strings.Contains(msg, "pid "+pid) {
			t.Fatalf("%s while locked: %q does not name the file %s and holder pid %s", name, msg, s.Path(), pid)
		}
	}

	// A patient writer gets the lock as soon as the holder lets go.
	done := make(chan error, 1)
	go func() { done <- patient.SecretSet("after", "value-after", nil) }()
	h.stdin.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the writer did not get the lock after the holder released it")
	}
	if v, _, err := s.SecretGet("after"); err != nil || v != "value-after" {
		t.Fatalf("after release: %q, %v", v, err)
	}
}

func TestKilledWriterLosesNoCommittedWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "vault.db")
	c := startChild(t, ctx, "crash", path, "")
	const acks = 40
	last := -1
	for last < acks-1 {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("writer exited after %d acknowledgements", last+1)
			}
			i, err := strconv.Atoi(line)
			if err != nil || i != last+1 {
				t.Fatalf("writer said %q after %d", line, last)
			}
			last = i
		case <-ctx.Done():
			t.Fatalf("writer acknowledged only %d writes in time", last+1)
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Acknowledgements already in the pipe count too.
	for line := range c.lines {
		if i, err := strconv.Atoi(line); err == nil && i == last+1 {
			last = i
		}
	}
	_ = c.cmd.Wait()

	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	for i := 0; i <= last; i++ {
		if v, _, err := s.SecretGet(fmt.Sprintf("crash-%d", i)); err != nil || v != fmt.Sprintf("value-%d", i) {
			t.Fatalf("acknowledged secret %d: %q, %v", i, v, err)
		}
		text, _, err := s.RecordGet("r"+strconv.Itoa(i+1), 0, 0)
		if err != nil || text != crashRecord(i) {
			t.Fatalf("acknowledged record %d: %v", i, err)
		}
	}
	if err := s.SecretSet("after-crash", "value", nil); err != nil {
		t.Fatalf("write after SIGKILL: %v", err)
	}
	if err := s.withDB(func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		})
	}); err != nil {
		t.Fatalf("consistency check after SIGKILL: %v", err)
	}
}
