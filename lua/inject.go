package lua

import (
	"io"
	"sync"
)

// injectReader sits between the terminal and the line editor: what the
// terminal sends passes through, and Inject adds bytes as if typed, also
// while the editor is blocked waiting for input (an OAuth login that
// finished in the browser ends the line the person was asked for). It
// reads the terminal only when asked to, never ahead, so input meant for
// another reader (a passphrase prompt) is not taken; only a read that an
// injection overtook stays outstanding until the next Read.
type injectReader struct {
	in     io.ReadCloser
	reqs   chan []byte
	res    chan readChunk
	inject chan []byte
	done   chan struct{}
	start  sync.Once
	stop   sync.Once

	// Read is called from one goroutine (the editor's).
	outstanding bool
	pending     []byte
}

type readChunk struct {
	b   []byte
	err error
}

func newInjectReader(in io.ReadCloser) *injectReader {
	return &injectReader{in: in, reqs: make(chan []byte), res: make(chan readChunk),
		inject: make(chan []byte, 1), done: make(chan struct{})}
}

// pump performs the reads Read asks for, one at a time.
func (r *injectReader) pump() {
	for {
		select {
		case buf := <-r.reqs:
			n, err := r.in.Read(buf)
			select {
			case r.res <- readChunk{buf[:n], err}:
			case <-r.done:
				return
			}
		case <-r.done:
			return
		}
	}
}

// Read implements io.Reader.
func (r *injectReader) Read(b []byte) (int, error) {
	r.start.Do(func() { go r.pump() })
	if len(r.pending) == 0 {
		if !r.outstanding {
			select {
			case r.reqs <- make([]byte, max(len(b), 1)):
				r.outstanding = true
			case <-r.done:
				return 0, io.EOF
			}
		}
		select {
		case c := <-r.res:
			r.outstanding = false
			if len(c.b) == 0 {
				return 0, c.err
			}
			r.pending = c.b
		case x := <-r.inject:
			r.pending = x
		case <-r.done:
			return 0, io.EOF
		}
	}
	n := copy(b, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// Inject hands b to the next Read (dropping it when an injection is
// already waiting).
func (r *injectReader) Inject(b []byte) {
	select {
	case r.inject <- b:
	default:
	}
}

// Close implements io.Closer.
func (r *injectReader) Close() error {
	r.stop.Do(func() { close(r.done) })
	return r.in.Close()
}
