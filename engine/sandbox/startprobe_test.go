package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startProbeEnv makes this test binary the process of
// TestProtectProcessSettlesTheStartCheck ("helper"), or the command that
// process starts ("exit"); see TestMain.
const startProbeEnv = "TAI_TEST_START_PROBE"

// TestProtectProcessSettlesTheStartCheck: once ProtectProcess has run,
// starting a command clones no child that shares tai's memory and signal
// handlers with signals left unblocked (Go's one-time pidfd check). Such a
// child stays in tai's process group, the terminal's foreground group, so
// a Ctrl-C that came while it lived ran tai's signal handler twice, and
// one key counted as two interrupts ("interrupted again; exiting"). The
// process below starts a command after ProtectProcess under a seccomp
// filter that kills it on such a clone.
func TestProtectProcessSettlesTheStartCheck(t *testing.T) {
	if _, ok := auditArch[runtime.GOARCH]; !ok {
		t.Fatalf("no seccomp architecture for GOARCH %s: add it to auditArch", runtime.GOARCH)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), startProbeEnv+"=helper")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGSYS {
			t.Fatal("a command started after ProtectProcess made Go clone its pidfd check's child, " +
				"which shares this process's memory and signal handlers: a Ctrl-C while it lives counts twice")
		}
	}
	if err != nil {
		t.Fatalf("the helper process failed: %v\n%s", err, out)
	}
}

// startProbeHelper is the process of TestProtectProcessSettlesTheStartCheck:
// it runs ProtectProcess as tai's main does, then starts a command from a
// thread where a clone that shares memory, is no thread and reports no
// exit signal (the check's child; a real start reports SIGCHLD) kills the
// process.
func startProbeHelper() int {
	if err := ProtectProcess(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// The filter holds for this thread only; the start runs on it.
	runtime.LockOSThread()
	if err := killUnsignalledSharedClones(); err != nil {
		fmt.Fprintln(os.Stderr, "installing the seccomp filter:", err)
		return 2
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = []string{startProbeEnv + "=exit"}
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "starting a command: %v\n%s", err, out)
		return 1
	}
	return 0
}

// auditArch is the seccomp architecture of each little-endian GOARCH the
// filter below was written for.
var auditArch = map[string]uint32{
	"amd64":   unix.AUDIT_ARCH_X86_64,
	"arm64":   unix.AUDIT_ARCH_AARCH64,
	"riscv64": unix.AUDIT_ARCH_RISCV64,
}

// killUnsignalledSharedClones installs, on the calling thread, a seccomp
// filter that kills the process on clone(2) with CLONE_VM set,
// CLONE_THREAD clear and no exit signal.
func killUnsignalledSharedClones() error {
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no seccomp architecture for GOARCH %s", runtime.GOARCH)
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: nr at 0, arch at 4, args at 16 (the low word
	// of args[0] first, little-endian).
	prog := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, K: arch, Jt: 0, Jf: 7},
		{Code: ld, K: 0},
		{Code: jeq, K: unix.SYS_CLONE, Jt: 0, Jf: 5},
		{Code: ld, K: 16},
		{Code: jset, K: unix.CLONE_VM, Jt: 0, Jf: 3},
		{Code: jset, K: unix.CLONE_THREAD, Jt: 2, Jf: 0},
		{Code: jset, K: 0xff, Jt: 1, Jf: 0}, // the exit signal
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
