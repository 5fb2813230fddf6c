package engine

import (
	"sync"
	"testing"
	"time"

	"tai/engine/tool"
)

// A flood of progress never waits for the front end: report returns at
// once while the one delivery in flight is stuck, the front end then gets
// the latest only, and nothing after stop.
func TestProgressRelayCoalescesAFlood(t *testing.T) {
	stuck := make(chan struct{})
	var mu sync.Mutex
	var got []float64
	delivered := make(chan struct{}, 1)
	r := newProgressRelay(ToolEvent{ID: "c1", Name: "slow"}, func(e ToolEvent) {
		if e.ID != "c1" || e.Progress == nil {
			t.Errorf("event = %+v", e)
			return
		}
		mu.Lock()
		got = append(got, e.Progress.Progress)
		first := len(got) == 1
		mu.Unlock()
		if first {
			<-stuck
		}
		select {
		case delivered <- struct{}{}:
		default:
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 100000; i++ {
			r.report(tool.Progress{Progress: float64(i), Total: 100000})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("reporting progress waited for the front end")
	}
	close(stuck)
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		last := 0.0
		if n > 0 {
			last = got[n-1]
		}
		mu.Unlock()
		if last == 100000 {
			if n > 3 {
				t.Errorf("%d deliveries for one flood, want the first and the latest", n)
			}
			break
		}
		select {
		case <-delivered:
		case <-deadline:
			t.Fatalf("the latest progress never came: %v", got)
		}
	}
	r.stop()
	r.report(tool.Progress{Progress: 100001})
	mu.Lock()
	defer mu.Unlock()
	if got[len(got)-1] != 100000 {
		t.Errorf("progress delivered after stop: %v", got)
	}
}

// The latest progress reaches the front end before the call's end, however
// soon the call ends after reporting it.
func TestProgressRelayDeliversTheLatestBeforeTheEnd(t *testing.T) {
	for range 100 {
		var got []float64
		r := newProgressRelay(ToolEvent{ID: "c1"}, func(e ToolEvent) { got = append(got, e.Progress.Progress) })
		r.report(tool.Progress{Progress: 1})
		r.report(tool.Progress{Progress: 2})
		r.stop()
		if len(got) == 0 || got[len(got)-1] != 2 {
			t.Fatalf("delivered %v before the end, want 2 last", got)
		}
	}
}
