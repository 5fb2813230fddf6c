package sandbox

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ProtectProcess hardens the calling process for its life: it becomes
// non-dumpable (PR_SET_DUMPABLE 0, as ssh-agent and gpg-agent do), so a
// process of the same non-root user can neither read its /proc environ or
// memory nor ptrace it, and a child subreaper (PR_SET_CHILD_SUBREAPER), so
// descendants that detach (setsid, double fork) are re-parented to it
// instead of to init, where StopChildren can still find them. Root, and
// anything that can read the vault file, stay outside this protection:
// sealing is what protects secrets at rest.
//
// It also has Go's runtime make now the one-time check it would make on
// the first process start, whose helper child could otherwise count one
// Ctrl-C twice (see settleStarts): call it before listening for SIGINT.
func ProtectProcess() error {
	settleStarts()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return errors.New("cannot make tai non-dumpable (prctl PR_SET_DUMPABLE): " + err.Error())
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return errors.New("cannot make tai a child subreaper (prctl PR_SET_CHILD_SUBREAPER): " + err.Error())
	}
	return nil
}

// StopChildren kills (SIGKILL) and reaps every child of the calling
// process, again and again until none is left, so the grandchildren a
// killed child leaves to a subreaper go too. It returns how many of them
// were still running (zombies only reaped are not counted). Call it when
// nothing else waits for a child any more: at exit, or in a process whose
// only child has been waited for. It gives up after limit.
func StopChildren(limit time.Duration) int {
	self := os.Getpid()
	deadline := time.Now().Add(limit)
	stopped := map[int]bool{}
	for time.Now().Before(deadline) {
		kids := childrenOf(self)
		if len(kids) == 0 {
			break
		}
		for _, k := range kids {
			if !k.zombie && unix.Kill(k.pid, unix.SIGKILL) == nil {
				stopped[k.pid] = true
			}
		}
		for _, k := range kids {
			for {
				_, err := unix.Wait4(k.pid, nil, 0, nil)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
	}
	return len(stopped)
}

// child is one entry of childrenOf.
type child struct {
	pid    int
	zombie bool
}

// childrenOf lists the processes whose parent is pid, from /proc/*/stat
// (the kernel's children files are not always built in).
func childrenOf(pid int) []child {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []child
	for _, n := range names {
		p, err := strconv.Atoi(n)
		if err != nil || p == pid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses,
		// so the fields start after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(string(f[1])); err == nil && pp == pid {
			out = append(out, child{pid: p, zombie: string(f[0]) == "Z" || string(f[0]) == "X"})
		}
	}
	return out
}
