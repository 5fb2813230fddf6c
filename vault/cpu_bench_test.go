package vault

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU reports the process's CPU time (user and system, all threads)
// per operation since start: a figure that does not swing with the load of
// the machine the way wall-clock ns/op does.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
