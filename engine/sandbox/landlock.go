package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABIEnv, set to a number, lowers the Landlock ABI version tai uses to at
// most that: 0 makes tai behave as on a kernel without Landlock (it warns
// and runs commands unrestricted, and refuses what requires the sandbox),
// 3 as on one whose Landlock cannot close the network.
const ABIEnv = "TAI_LANDLOCK_ABI"

// NetworkABI is the first Landlock ABI version that can close TCP.
const NetworkABI = 4

// ErrUnavailable reports a system where no Landlock policy can be applied.
var ErrUnavailable = errors.New("this system has no Landlock")

// Available returns the Landlock ABI version the sandbox uses: the
// kernel's, lowered by $TAI_LANDLOCK_ABI. With none, it returns 0 and an
// error wrapping ErrUnavailable that says why.
func Available() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 1 {
		if err == nil {
			err = errors.New("the kernel reports no Landlock ABI")
		}
		return 0, fmt.Errorf("%w (%v): an older kernel, Landlock not enabled at boot, or another system", ErrUnavailable, err)
	}
	if s, ok := os.LookupEnv(ABIEnv); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: $%s is %q, not a version number", ErrUnavailable, ABIEnv, s)
		}
		if n < 1 {
			return 0, fmt.Errorf("%w: $%s=%s turns it off", ErrUnavailable, ABIEnv, s)
		}
		v = min(v, n)
	}
	return v, nil
}

// Check says whether p can be applied with the Landlock ABI version abi
// (from Available): an error when it is required and cannot be, nil when
// it can or is not required (the command then runs as the notes say).
func (p Policy) Check(abi int, why error) error {
	switch {
	case p.Off || !p.Required:
		return nil
	case abi < 1:
		if why == nil {
			why = ErrUnavailable
		}
		return fmt.Errorf("the sandbox is required, and %v", why)
	case p.NoNetwork && abi < NetworkABI:
		return fmt.Errorf("the sandbox is required with the network closed, and this kernel's Landlock (ABI %d) cannot close it (ABI %d can)", abi, NetworkABI)
	}
	return nil
}

// configFor is go-landlock's configuration for ABI version abi, with the
// network restricted only when p closes it. Best effort: where the kernel
// knows less, it restricts what the kernel knows.
func configFor(abi int, p *Policy) landlock.Config {
	presets := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
		landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	v := presets[min(abi, len(presets))-1]
	c := landlock.Config{HandledAccessFS: v.HandledAccessFS, Scoped: v.Scoped}
	if p.NoNetwork {
		c.HandledAccessNet = v.HandledAccessNet
	}
	return c.BestEffort()
}

// restrictThread applies p to the calling OS thread only, with the
// Landlock ABI version abi, so that what this thread starts next runs
// under p. The caller has locked the goroutine to its thread and never
// unlocks it: the thread ends with the goroutine, and no other goroutine
// ever runs restricted. With abi 0 it restricts nothing.
func restrictThread(p *Policy, abi int) error {
	if p == nil || p.Off || abi < 1 {
		return nil
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	cfg := configFor(abi, p)
	fd, flags, err := cfg.NewRulesetFD(rulesFor(p, cfg.HandledAccessFS)...)
	if err != nil {
		return fmt.Errorf("building the Landlock rules: %w", err)
	}
	if fd < 0 {
		return nil // best effort on a kernel without Landlock
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// dropCapabilities empties the calling thread's capability bounding set
// and ambient set when it runs as root, so a command it starts next runs
// as root without capabilities. Landlock and tai's non-dumpable flag keep
// a process of the same non-root user from tai's /proc files (environ,
// where the model keys are); root passes both with CAP_SYS_PTRACE and the
// DAC overrides, which a sandboxed command so no longer holds. Files that
// root owns stay readable as the policy allows.
func dropCapabilities() error {
	if unix.Geteuid() != 0 {
		return nil
	}
	last := unix.CAP_LAST_CAP
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	return nil
}
