package mcp

import (
	"bytes"
	"os"
	"strconv"
)

// treeWork is how much work a process and all its descendants have done:
// what a launcher that prints nothing while it downloads (npx with its
// stderr on a pipe) still shows.
type treeWork struct {
	// CPU is user plus system time in clock ticks, the reaped children's
	// included.
	CPU uint64
	// IO is the bytes passed to read and write (rchar plus wchar): the
	// network a download reads and the files it writes.
	IO uint64
	// Procs counts the processes found.
	Procs int
}

// sampleTree reads /proc for the work done so far by pid and its
// descendants. A process that cannot be read (gone, or not this user's)
// counts for nothing.
func sampleTree(pid int) treeWork {
	var w treeWork
	if pid <= 0 {
		return w
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return w
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	children := map[int][]int{}
	cpu := map[int]uint64{}
	for _, n := range names {
		p, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		ppid, ticks, ok := readStat(p)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], p)
		cpu[p] = ticks
	}
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		ticks, ok := cpu[p]
		if !ok {
			continue
		}
		w.Procs++
		w.CPU += ticks
		w.IO += readIO(p)
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return w
}

// readStat returns a process's parent and its CPU time in clock ticks
// (utime, stime, cutime and cstime) from /proc/PID/stat.
func readStat(pid int) (ppid int, ticks uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces and parentheses: the fields start
	// after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	if len(f) < 15 {
		return 0, 0, false
	}
	pp, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, 0, false
	}
	for _, k := range f[11:15] {
		v, err := strconv.ParseUint(string(k), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += v
	}
	return pp, ticks, true
}

// readIO returns rchar plus wchar from /proc/PID/io, 0 when unreadable.
func readIO(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	var sum uint64
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || (string(k) != "rchar" && string(k) != "wchar") {
			continue
		}
		if n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64); err == nil {
			sum += n
		}
	}
	return sum
}
