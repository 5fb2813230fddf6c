package lua

import (
	"sync/atomic"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
)

// samplingLimit is tai.mcp.sampling_limit's setting: how many sampling
// requests a server may make a minute (0: bridge.DefaultSamplingLimit).
type samplingLimit struct{ n atomic.Int64 }

// get returns the limit in force.
func (s *samplingLimit) get() int {
	if n := s.n.Load(); n > 0 {
		return int(n)
	}
	return bridge.DefaultSamplingLimit
}

// mcpSamplingLimit is tai.mcp.sampling_limit([n]) -> n: sets, with n,
// how many sampling requests (sampling/createMessage) each server may
// make a minute, and returns the limit in force (default 10). More are
// refused at once, with a note on the call's line.
func (h *Host) mcpSamplingLimit(L *glua.LState) int {
	if L.GetTop() >= 1 {
		n := L.CheckInt(1)
		if n < 1 || n > 1000 {
			L.ArgError(1, "the sampling limit is a number of requests a minute, from 1 to 1000")
		}
		h.sampling.n.Store(int64(n))
	}
	L.Push(glua.LNumber(h.sampling.get()))
	return 1
}
