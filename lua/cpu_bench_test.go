package lua

import (
	"testing"
	"time"
)

// reportCPU reports the process's CPU time (user and system, all threads;
// cpuTime) per operation since start: a figure that does not swing with
// the load of the machine the way wall-clock ns/op does.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}
