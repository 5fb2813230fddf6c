package vault

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockedOpen opens name and takes its flock (exclusive or shared) before
// bbolt sees the file. bbolt's own lock then succeeds at once, because a
// flock belongs to the open file description and this one already holds it.
//
// The wait is a blocking flock(2) on a duplicate descriptor in a goroutine,
// bounded by timeout: when the holder closes, the kernel wakes the waiter
// immediately, so two busy processes take turns instead of one starving the
// other's polling. On timeout the file is closed; if the abandoned flock
// later succeeds, closing the duplicate (the last descriptor of that open
// file description) releases it again.
func lockedOpen(name string, flag int, perm os.FileMode, exclusive bool, timeout time.Duration) (*os.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	fd := int(f.Fd())
	if err := flockRetry(fd, how|unix.LOCK_NB); err == nil {
		return f, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("vault: lock %s: %w", name, err)
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vault: lock %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() {
		err := flockRetry(dup, how)
		unix.Close(dup)
		done <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("vault: lock %s: %w", name, err)
		}
		return f, nil
	case <-timer.C:
		f.Close()
		return nil, lockedError(name, timeout)
	}
}

// flockRetry is flock(2) restarted after signal interruptions.
func flockRetry(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// lockedError builds the ErrLocked error for path, naming the process that
// holds the lock when /proc/locks tells.
func lockedError(path string, timeout time.Duration) error {
	holder := ""
	if pid := lockHolder(path); pid > 0 {
		holder = " by pid " + strconv.Itoa(pid)
		if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
			holder += " (" + strings.TrimSpace(string(comm)) + ")"
		}
	}
	return fmt.Errorf("%w: %s is held%s for more than %s; wait for that command to finish or stop it, then retry",
		ErrLocked, path, holder, timeout)
}

// lockHolder returns the pid holding a flock on path according to
// /proc/locks, or 0 when it cannot be found.
func lockHolder(path string) int {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters carry "->".
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		if fields[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
