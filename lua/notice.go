package lua

import (
	"io"
	"sync"

	glua "github.com/yuin/gopher-lua"
)

// Every "tai: …" line Go writes for the person goes through tell or
// tellSoon, and so through the current tai.notify (an init.lua that
// replaces it hears them all), at a level tai.notify takes ("warn",
// "error"). Only when there is no tai.notify to call (no Lua state yet,
// or a state of the rules' own) is the line written to Stderr directly.

// noticeQueue holds what goroutines that do not hold the Lua state had to
// say while it was busy, for its holder to say next (flushNotices): when
// it lends the state (Await), gives it back (onLua), or waits at rl:read.
type noticeQueue struct {
	mu    sync.Mutex
	queue []notice
	ready chan struct{} // one token while the queue holds something
}

// notice is one line for tai.notify.
type notice struct{ level, text string }

// tell says text at level through tai.notify, in L: the host's own state
// (called by whoever holds it), else a state without tai.notify, where
// the line goes to Stderr.
func (h *Host) tell(L *glua.LState, level, text string) {
	fn := glua.LNil
	if L == h.L && h.tai != nil {
		fn = h.tai.RawGetString("notify")
	}
	if fn.Type() != glua.LTFunction {
		io.WriteString(h.opts.Stderr, text+"\n")
		return
	}
	top := L.GetTop()
	if err := L.CallByParam(glua.P{Fn: fn, NRet: 0, Protect: true}, glua.LString(text), glua.LString(level)); err != nil {
		L.SetTop(top)
		// A tai.notify of one's own that fails loses no line.
		io.WriteString(h.opts.Stderr, text+"\n"+"tai: tai.notify failed: "+luaError(err).Error()+"\n")
	}
}

// tellSoon is tell from a goroutine that does not hold the state (a
// server's reader, a model client's retry, a login): said at once when
// the state is lent and free, else queued for its holder, so that no such
// goroutine ever waits on the Lua state.
func (h *Host) tellSoon(level, text string) {
	h.notices.mu.Lock()
	h.notices.queue = append(h.notices.queue, notice{level, text})
	h.notices.mu.Unlock()
	select {
	case h.notices.ready <- struct{}{}:
	default:
	}
	select {
	case h.baton <- struct{}{}:
		h.flushNotices()
		<-h.baton
	default:
	}
}

// flushNotices says what tellSoon queued, in order; called by the holder
// of the state.
func (h *Host) flushNotices() {
	for {
		h.notices.mu.Lock()
		q := h.notices.queue
		h.notices.queue = nil
		h.notices.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, n := range q {
			h.tell(h.L, n.level, n.text)
		}
	}
}

// startupSay is where a server's slow start is told off a terminal (see
// startupLine): the launcher's progress comes from the goroutine that
// starts the server.
func (h *Host) startupSay(line string) { h.tellSoon("warn", line) }
