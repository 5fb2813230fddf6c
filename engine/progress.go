package engine

import (
	"sync"
	"time"

	"tai/engine/tool"
)

// ProgressEvery is the shortest time between two OnToolProgress events of
// one call: what a tool reports in between is coalesced into the latest.
const ProgressEvery = 50 * time.Millisecond

// progressRelay hands the progress a running call reports to
// OnToolProgress: report keeps the latest and returns at once (it may run
// on the goroutine reading an MCP server); one goroutine at a time
// delivers it, then waits ProgressEvery before delivering what came
// meanwhile. The latest progress is always delivered.
type progressRelay struct {
	ev   ToolEvent
	send func(ToolEvent)
	done chan struct{} // closed by stop

	mu      sync.Mutex
	idle    sync.Cond // broadcast when busy turns false
	latest  tool.Progress
	pending bool // latest is not delivered yet
	busy    bool // a goroutine is delivering
	stopped bool
}

func newProgressRelay(ev ToolEvent, send func(ToolEvent)) *progressRelay {
	r := &progressRelay{ev: ev, send: send, done: make(chan struct{})}
	r.idle.L = &r.mu
	return r
}

// report keeps p as the latest progress and makes sure it is delivered.
func (r *progressRelay) report(p tool.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.latest, r.pending = p, true
	if !r.busy {
		r.busy = true
		go r.deliver()
	}
}

// deliver sends the latest progress until none is left, pausing
// ProgressEvery after each (not once stop was called).
func (r *progressRelay) deliver() {
	for {
		r.mu.Lock()
		if !r.pending {
			r.busy = false
			r.idle.Broadcast()
			r.mu.Unlock()
			return
		}
		e := r.ev
		p := r.latest
		e.Progress, r.pending = &p, false
		r.mu.Unlock()
		r.send(e)
		select {
		case <-time.After(ProgressEvery):
		case <-r.done:
		}
	}
}

// stop ends the relay: the latest progress not delivered yet is, without
// the pause, and nothing is once stop returns (a call's end comes after
// its last progress).
func (r *progressRelay) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopped = true
		close(r.done)
	}
	for r.busy {
		r.idle.Wait()
	}
}
