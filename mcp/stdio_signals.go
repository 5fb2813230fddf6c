package mcp

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A signal this process ignores is ignored by every program it starts:
// exec resets only the signals a process handles. Under nohup, SIGHUP is
// ignored, and a stdio server's descendants, which die through the
// hang-up of the server's private terminal (see privateTTY), would then
// outlive this process. Go itself handles every other signal that
// matters here (SIGTERM, SIGQUIT, ...) even when it started with them
// ignored, and it starts children with those unblocked, so only SIGHUP
// and SIGINT, which Go leaves ignored, need this.

// childDefaultSignals makes the programs this process starts until undo
// is called begin with SIGHUP and SIGINT at their default action, while
// this process goes on surviving them: a signal it ignores is handled
// meanwhile by delivery to a channel that nothing reads, and ignored
// again once undo has run (os/signal: once Stop was called on every
// channel notified of a signal that started ignored, it is ignored
// again). So the change lasts only as long as a start, and what else
// this process starts (a shell command under nohup, say) keeps what it
// would have inherited. Signals it does not ignore are left alone.
func childDefaultSignals() (undo func()) {
	var chans []chan os.Signal
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if ignoredNow(sig) {
			c := make(chan os.Signal, 1)
			signal.Notify(c, sig)
			chans = append(chans, c)
		}
	}
	return func() {
		for _, c := range chans {
			signal.Stop(c)
		}
	}
}

// ignoredNow reports whether sig's action in this process is to ignore
// it, asking the kernel: signal.Ignored misses a signal that was ignored
// at start, then notified and stopped, which Go sets back to ignored.
func ignoredNow(sig syscall.Signal) bool {
	// The kernel's struct sigaction begins with the handler; the rest
	// (flags, restorer, mask) fits in the words after it.
	var act [4]uintptr
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&act[0])), 8, 0, 0)
	if errno != 0 {
		return signal.Ignored(sig)
	}
	const sigIgn = 1 // SIG_IGN
	return act[0] == sigIgn
}
