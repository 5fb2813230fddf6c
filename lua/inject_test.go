package lua

import (
	"io"
	"testing"
	"time"
)

// countingReader counts the reads made of it.
type countingReader struct {
	r     io.Reader
	reads chan struct{}
}

func (c countingReader) Read(b []byte) (int, error) {
	c.reads <- struct{}{}
	return c.r.Read(b)
}

func (c countingReader) Close() error { return nil }

func TestInjectReader(t *testing.T) {
	pr, pw := io.Pipe()
	reads := make(chan struct{}, 16)
	r := newInjectReader(countingReader{r: pr, reads: reads})
	defer r.Close()

	go pw.Write([]byte("typed"))
	buf := make([]byte, 16)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "typed" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	<-reads
	// A Read blocked on the terminal returns what is injected.
	got := make(chan string, 1)
	go func() {
		n, _ := r.Read(buf)
		got <- string(buf[:n])
	}()
	<-reads // the read is outstanding now
	r.Inject([]byte("\r"))
	select {
	case s := <-got:
		if s != "\r" {
			t.Fatalf("injected read %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the injection did not end the blocked read")
	}
	// The overtaken read is still the next one; no second terminal read.
	go pw.Write([]byte("later"))
	n, err = r.Read(buf)
	if err != nil || string(buf[:n]) != "later" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	// One read per Read: the terminal was never read ahead.
	if len(reads) != 0 {
		t.Fatalf("%d terminal reads nobody asked for", len(reads))
	}
}
