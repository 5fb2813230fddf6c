package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// sseResult is everything a parse run observes: the events, then the final
// LastID and retry.
type sseResult struct {
	events   []Event
	lastID   string
	retry    time.Duration
	retrySet bool
	err      error
}

// errCap is the too-large error the tests give the parser.
var errCap = errors.New("over the test's cap")

func runSSE(r io.Reader, max int64) sseResult {
	p := NewParser(r, max, errCap)
	var res sseResult
	for {
		ev, err := p.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.err = err
			}
			break
		}
		res.events = append(res.events, ev)
	}
	res.lastID, res.retry, res.retrySet = p.LastID, p.Retry, p.RetrySet
	return res
}

func ev(typ, data, id string) Event { return Event{Type: typ, Data: []byte(data), ID: id} }

func TestSSEParser(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []Event
		lastID   string
		retry    time.Duration
		retrySet bool
	}{
		{name: "single LF event", in: "data: {\"a\":1}\n\n", want: []Event{ev("message", `{"a":1}`, "")}},
		{name: "CRLF line ends", in: "data: x\r\n\r\n", want: []Event{ev("message", "x", "")}},
		{name: "CR line ends", in: "data: x\r\rdata: y\r\r", want: []Event{ev("message", "x", ""), ev("message", "y", "")}},
		{name: "mixed line ends", in: "data: a\r\ndata: b\rdata: c\n\r\n", want: []Event{ev("message", "a\nb\nc", "")}},
		{name: "multi-line data joins with LF", in: "data: one\ndata: two\ndata:three\n\n", want: []Event{ev("message", "one\ntwo\nthree", "")}},
		{name: "only one leading space is removed", in: "data:  two spaces\n\n", want: []Event{ev("message", " two spaces", "")}},
		{name: "field without colon", in: "data\ndata: x\n\n", want: []Event{ev("message", "\nx", "")}},
		{name: "comments and keepalives ignored", in: ": keepalive\n:\ndata: x\n: mid\n\n", want: []Event{ev("message", "x", "")}},
		{name: "leading BOM dropped", in: "\xEF\xBB\xBFdata: x\n\n", want: []Event{ev("message", "x", "")}},
		{name: "BOM only stripped once", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", want: []Event{ev("message", "y", "")}},
		{name: "event type", in: "event: ping\ndata: x\n\ndata: y\n\n", want: []Event{ev("ping", "x", ""), ev("message", "y", "")}},
		{name: "event type reset after empty dispatch", in: "event: other\n\ndata: y\n\n", want: []Event{ev("message", "y", "")}},
		{name: "id persists", in: "id: 7\ndata: a\n\ndata: b\n\n", want: []Event{ev("message", "a", "7"), ev("message", "b", "7")}, lastID: "7"},
		{name: "id reset by empty id", in: "id: 7\ndata: a\n\nid\ndata: b\n\n", want: []Event{ev("message", "a", "7"), ev("message", "b", "")}},
		{name: "id with NUL ignored", in: "id: 7\ndata: a\n\nid: 8\x009\ndata: b\n\n", want: []Event{ev("message", "a", "7"), ev("message", "b", "7")}, lastID: "7"},
		{name: "priming event not dispatched", in: "id: event-1\nretry: 500\ndata: \n\n", lastID: "event-1", retry: 500 * time.Millisecond, retrySet: true},
		{name: "priming event with no data field", in: "id: p\n\n", lastID: "p"},
		{name: "priming then message", in: "id: e1\nretry: 500\ndata: \n\nid: e2\ndata: {}\n\n", want: []Event{ev("message", "{}", "e2")}, lastID: "e2", retry: 500 * time.Millisecond, retrySet: true},
		{name: "retry needs all digits", in: "retry: 12a\nretry: -1\nretry: 1.5\nretry:\ndata: x\n\n", want: []Event{ev("message", "x", "")}},
		{name: "retry digits", in: "retry: 0\nretry:250\n\n", retry: 250 * time.Millisecond, retrySet: true},
		{name: "retry huge is clamped", in: "retry: 99999999999999999999999\n\n", retry: 24 * time.Hour, retrySet: true},
		{name: "unknown fields ignored", in: "foo: bar\ndata: x\nDATA: y\n\n", want: []Event{ev("message", "x", "")}},
		{name: "incomplete event at EOF dropped", in: "data: x\n\ndata: partial\n", want: []Event{ev("message", "x", "")}},
		{name: "incomplete id at EOF not committed", in: "id: 1\ndata: x\n\nid: 2\n", want: []Event{ev("message", "x", "1")}, lastID: "1"},
		{name: "unterminated line at EOF dropped", in: "data: x", want: nil},
		{name: "colon in value kept", in: "data: a:b: c\n\n", want: []Event{ev("message", "a:b: c", "")}},
		{name: "empty stream", in: ""},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data err", iotest.DataErrReader},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got := runSSE(rd.wrap(strings.NewReader(tc.in)), 1<<20)
				if got.err != nil {
					t.Fatalf("unexpected error: %v", got.err)
				}
				if !sameEvents(got.events, tc.want) {
					t.Fatalf("events = %q, want %q", got.events, tc.want)
				}
				if got.lastID != tc.lastID {
					t.Errorf("LastID = %q, want %q", got.lastID, tc.lastID)
				}
				if got.retrySet != tc.retrySet || got.retry != tc.retry {
					t.Errorf("Retry = %v (set %v), want %v (set %v)", got.retry, got.retrySet, tc.retry, tc.retrySet)
				}
			})
		}
	}
}

func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].ID != b[i].ID || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func TestSSEParserCaps(t *testing.T) {
	const max = 1024
	tests := []struct {
		name    string
		in      string
		wantErr bool
		events  int
	}{
		{name: "line at cap", in: "data:" + strings.Repeat("x", max-5) + "\n\n", events: 1},
		{name: "line over cap", in: "data:" + strings.Repeat("x", max) + "\n\n", wantErr: true},
		{name: "endless line", in: strings.Repeat("y", 10*max), wantErr: true},
		{name: "event over cap in many lines", in: strings.Repeat("data: "+strings.Repeat("z", 100)+"\n", 20) + "\n", wantErr: true},
		{name: "many small events under cap", in: strings.Repeat("data: "+strings.Repeat("z", 100)+"\n\n", 100), events: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runSSE(iotest.HalfReader(strings.NewReader(tc.in)), max)
			if tc.wantErr {
				if !errors.Is(got.err, errCap) {
					t.Fatalf("err = %v, want the caller's too-large error", got.err)
				}
				return
			}
			if got.err != nil {
				t.Fatalf("unexpected error: %v", got.err)
			}
			if len(got.events) != tc.events {
				t.Fatalf("got %d events, want %d", len(got.events), tc.events)
			}
		})
	}
}

// TestSSEParserBoundedMemory feeds an endless line and checks the parser
// stops at the cap instead of buffering it all.
func TestSSEParserBoundedMemory(t *testing.T) {
	const max = 64 << 10
	src := &countingReader{r: endless('a')}
	got := runSSE(src, max)
	if got.err == nil {
		t.Fatal("endless line parsed without error")
	}
	if src.n > max+2*readSize {
		t.Fatalf("read %d bytes before refusing a line over %d", src.n, max)
	}
}

func TestSSEParserReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("id: 3\ndata: a\n\ndata: b"), iotest.ErrReader(boom))
	got := runSSE(r, 1<<20)
	if !errors.Is(got.err, boom) {
		t.Fatalf("err = %v, want %v", got.err, boom)
	}
	if len(got.events) != 1 || got.lastID != "3" {
		t.Fatalf("events %q lastID %q, want one event and id 3", got.events, got.lastID)
	}
}

type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// refSSE is a deliberately naive second reading of the WHATWG rules over a
// whole string, used as the oracle for the fuzz test.
func refSSE(in string) sseResult {
	in = strings.TrimPrefix(in, "\xEF\xBB\xBF")
	var lines []string
	for {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			break // unterminated last line is discarded
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var res sseResult
	var data, typ, idBuf string
	for _, line := range lines {
		if line == "" {
			res.lastID = idBuf
			d := strings.TrimSuffix(data, "\n")
			if d != "" {
				t := typ
				if t == "" {
					t = "message"
				}
				res.events = append(res.events, Event{Type: t, Data: []byte(d), ID: idBuf})
			}
			data, typ = "", ""
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			typ = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.Contains(value, "\x00") {
				idBuf = value
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				n, err := strconv.ParseInt(value, 10, 64)
				if err != nil || n > maxRetryMillis {
					n = maxRetryMillis
				}
				res.retry, res.retrySet = time.Duration(n)*time.Millisecond, true
			}
		}
	}
	return res
}

func FuzzSSEParser(f *testing.F) {
	seeds := []string{
		"data: x\n\n",
		"id: event-1\nretry: 500\ndata: \n\n",
		"\xEF\xBB\xBFevent: e\r\ndata: a\rdata: b\r\n\r\n",
		": c\nid: 1\x00\nid: 2\ndata\n\n",
		"retry: 123abc\nretry: 42\ndata: {\"jsonrpc\":\"2.0\"}\n\n",
		"data: a\r",
		"\r\n\r\n\n\r",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want := refSSE(in)
		for _, rd := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
		} {
			got := runSSE(rd(strings.NewReader(in)), 1<<20)
			if got.err != nil {
				t.Fatalf("error on %q: %v", in, got.err)
			}
			if !sameEvents(got.events, want.events) {
				t.Fatalf("events for %q = %q, want %q", in, got.events, want.events)
			}
			if got.lastID != want.lastID || got.retry != want.retry || got.retrySet != want.retrySet {
				t.Fatalf("state for %q = (%q, %v, %v), want (%q, %v, %v)", in, got.lastID, got.retry, got.retrySet, want.lastID, want.retry, want.retrySet)
			}
			for _, e := range got.events {
				if len(e.Data) == 0 || bytes.ContainsAny(e.Data, "\r") {
					t.Fatalf("event data %q is empty or holds CR", e.Data)
				}
			}
		}
	})
}
