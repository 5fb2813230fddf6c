package lua

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// interruptRig runs body (Lua) in h through Call on its own goroutine and
// feeds signals to watchInterrupts, recording the exit status it asks for.
type interruptRig struct {
	h       *testHost
	sigs    chan os.Signal
	stop    chan struct{}
	watched chan struct{}
	exits   chan int
	entered chan struct{}
	release chan struct{}
	callErr chan error
}

func startInterruptRig(t *testing.T, body string) *interruptRig {
	t.Helper()
	r := &interruptRig{
		h:       newHost(t, Options{}, nil),
		sigs:    make(chan os.Signal),
		stop:    make(chan struct{}),
		watched: make(chan struct{}),
		exits:   make(chan int, 2),
		entered: make(chan struct{}),
		release: make(chan struct{}),
		callErr: make(chan error, 1),
	}
	r.h.exit = func(status int) { r.exits <- status }
	// entered() tells the test the run is under way; block() is a Go
	// builtin that ignores the context, like a pathological string.find.
	r.h.L.SetGlobal("entered", r.h.L.NewFunction(func(*glua.LState) int { close(r.entered); return 0 }))
	r.h.L.SetGlobal("block", r.h.L.NewFunction(func(*glua.LState) int { <-r.release; return 0 }))
	fn, err := r.h.L.LoadString(body)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.watched)
		r.h.watchInterrupts(r.sigs, r.stop)
	}()
	go func() {
		_, err := r.h.Call(context.Background(), fn)
		r.callErr <- err
	}()
	t.Cleanup(func() {
		select {
		case <-r.stop:
		default:
			close(r.stop)
		}
		close(r.release)
		select {
		case <-r.callErr: // the run is over before the host closes
		case <-time.After(10 * time.Second):
			t.Error("the run did not end after its builtin returned")
		}
	})
	r.wait(t, r.entered, "the run to start")
	return r
}

func (r *interruptRig) wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// finish stops the watcher and returns the exit statuses it asked for.
func (r *interruptRig) finish(t *testing.T) []int {
	t.Helper()
	close(r.stop)
	r.wait(t, r.watched, "the signal watcher to stop")
	var got []int
	for {
		select {
		case s := <-r.exits:
			got = append(got, s)
		default:
			return got
		}
	}
}

func TestSecondInterruptExitsWhenTheRunIgnoresTheFirst(t *testing.T) {
	r := startInterruptRig(t, `entered() block()`)
	r.sigs <- os.Interrupt
	r.sigs <- os.Interrupt
	got := r.finish(t)
	if len(got) != 1 || got[0] != ExitInterrupted {
		t.Fatalf("exit statuses %v, want [%d]", got, ExitInterrupted)
	}
	if !strings.Contains(r.h.errOut.String(), "interrupted") {
		t.Errorf("stderr %q does not say why tai exits", r.h.errOut.String())
	}
}

func TestInterruptThatStopsTheRunDoesNotExit(t *testing.T) {
	r := startInterruptRig(t, `entered() while true do end`)
	r.sigs <- os.Interrupt
	select {
	case err := <-r.callErr:
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("run ended with %v, want ErrInterrupted", err)
		}
		r.callErr <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the first interrupt did not stop the loop")
	}
	r.sigs <- os.Interrupt // nothing is running: no reason to exit
	if got := r.finish(t); len(got) != 0 {
		t.Fatalf("exit statuses %v, want none", got)
	}
}
