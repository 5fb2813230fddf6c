package sandbox

import "os"

// settleStarts makes Go's runtime run now the check it otherwise runs on
// the first process start of this process: whether the kernel gives
// process handles (pidfd). To check, it clones a child that shares this
// process's memory and signal handlers and, unlike its real starts,
// leaves signals unblocked in it; the child stays in its parent's process
// group until it exits. For tai that group is the terminal's foreground
// group, so a Ctrl-C that came while the child lived reached the child
// too, whose copy of the runtime's signal handler then recorded the
// SIGINT in tai's memory: os/signal reported two interrupts for one key,
// and the first command of a session could turn one Ctrl-C into
// "interrupted again; exiting". Run before tai listens for Ctrl-C, the
// check is over before a key can count. A process lookup runs the same
// check (Go 1.23 on); TestProtectProcessSettlesTheStartCheck fails should
// that stop being so.
func settleStarts() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
}
