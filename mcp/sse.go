package mcp

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	// Type is the event type; "message" when the stream named none.
	Type string
	// Data is the event's data, lines joined with "\n". It is never empty:
	// an event with empty data is not dispatched.
	Data []byte
	// ID is the last event id in force when the event was dispatched.
	ID string
}

// sseReadSize is how much the parser asks the body for at a time (longer
// lines accumulate across reads).
const sseReadSize = 4 << 10

// sseParser reads a text/event-stream body incrementally, following the
// WHATWG HTML "event stream interpretation" rules: lines end with CRLF, LF
// or CR; one leading BOM is dropped; ":" lines are comments; a blank line
// dispatches; "data" lines join with LF; "id" persists across events, takes
// effect even when the data is empty, and is ignored when it holds NUL;
// "retry" counts only when it is all ASCII digits. An event whose data is
// empty (such as a priming event carrying just an id and a retry) updates
// LastID and Retry but is never returned.
//
// A line or an event's data larger than max bytes fails the stream with an
// error naming MCP_HTTP_MAX_BODY (ErrEventTooLarge when plainSize is set),
// before more than max bytes are buffered.
type sseParser struct {
	r   io.Reader
	max int

	buf        []byte // read buffer; buf[start:end] is unread
	start, end int
	rerr       error // sticky error from r, reported once buf is drained
	skipLF     bool  // the previous line ended with CR: a leading LF belongs to it
	line       []byte
	first      bool // no line returned yet (BOM check pending)

	// Event under construction.
	data      []byte
	eventType string // kept across events to spare allocations
	typeSet   bool   // the current event named its type
	idBuf     string

	// LastID is the last event id string, set when an event is dispatched
	// (even one with empty data). Empty when the stream never sent an id.
	LastID string
	// SawID reports whether any dispatched event carried an id field, so an
	// id explicitly reset to "" can be told from no id at all.
	SawID bool
	// Retry is the reconnection delay the stream asked for; RetrySet says
	// whether it asked at all.
	Retry    time.Duration
	RetrySet bool

	// plainSize makes an oversize line or event fail with
	// ErrEventTooLarge instead of ErrTooLarge (set by NewSSEReader, whose
	// cap is the caller's, not MCP_HTTP_MAX_BODY).
	plainSize bool
}

// newSSEParser returns a parser reading r with lines and events capped at
// max bytes.
func newSSEParser(r io.Reader, max int) *sseParser {
	return &sseParser{r: r, max: max, buf: make([]byte, sseReadSize), first: true}
}

// errTooLarge reports an event stream line or event over the cap; it
// wraps ErrTooLarge (ErrEventTooLarge for an SSEReader).
func (p *sseParser) errTooLarge(what string) error {
	if p.plainSize {
		return fmt.Errorf("%w: the server sent an SSE %s over %d bytes; refusing it", ErrEventTooLarge, what, p.max)
	}
	return fmt.Errorf("%w: the server sent an SSE %s over %d bytes; refusing it", ErrTooLarge, what, p.max)
}

// readLine returns the next complete line without its terminator. The slice
// is valid until the next call. At the end of the stream an unterminated
// final line is discarded (WHATWG: an incomplete event is not dispatched)
// and the reader's error (io.EOF on a clean end) is returned.
func (p *sseParser) readLine() ([]byte, error) {
	p.line = p.line[:0]
	partial := false
	for {
		if p.start == p.end {
			if p.rerr != nil {
				return nil, p.rerr
			}
			n, err := p.r.Read(p.buf)
			p.start, p.end, p.rerr = 0, n, err
			continue
		}
		chunk := p.buf[p.start:p.end]
		if p.skipLF {
			p.skipLF = false
			if chunk[0] == '\n' {
				p.start++
				continue
			}
		}
		i := indexLineEnd(chunk)
		if i < 0 {
			if len(p.line)+len(chunk) > p.max {
				return nil, p.errTooLarge("line")
			}
			p.line = appendDoubling(p.line, chunk)
			partial = true
			p.start = p.end
			continue
		}
		if chunk[i] == '\r' {
			p.skipLF = true
		}
		p.start += i + 1
		line := chunk[:i]
		if partial {
			if len(p.line)+i > p.max {
				return nil, p.errTooLarge("line")
			}
			p.line = appendDoubling(p.line, line)
			line = p.line
		} else if i > p.max {
			return nil, p.errTooLarge("line")
		}
		if p.first {
			p.first = false
			if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
				line = line[3:]
			}
		}
		return line, nil
	}
}

// appendDoubling appends b to buf, at least doubling the capacity when it
// must grow, so accumulating a line of n bytes allocates about 2n in all
// (append's own growth for large slices is gentler and costs several n).
func appendDoubling(buf, b []byte) []byte {
	if need := len(buf) + len(b); need > cap(buf) {
		nb := make([]byte, len(buf), max(need, 2*cap(buf)))
		copy(nb, buf)
		buf = nb
	}
	return append(buf, b...)
}

// ended reports whether the parser has consumed the whole stream (the
// reader reported its end or an error, and nothing is left unread).
func (p *sseParser) ended() bool { return p.start == p.end && p.rerr != nil }

// indexLineEnd returns the index of the first CR or LF in b, or -1.
func indexLineEnd(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// Next returns the next event with non-empty data. It returns io.EOF when
// the stream ends cleanly (a trailing incomplete event is dropped), or the
// reader's error.
func (p *sseParser) Next() (sseEvent, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if ev, ok := p.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		for i, c := range line {
			if c == ':' {
				field, value = line[:i], line[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
				break
			}
		}
		switch string(field) {
		case "event":
			if string(value) != p.eventType { // compares without allocating
				p.eventType = string(value)
			}
			p.typeSet = true
		case "data":
			if len(p.data)+len(value)+1 > p.max+1 {
				return sseEvent{}, p.errTooLarge("event")
			}
			p.data = appendDoubling(p.data, value)
			p.data = append(p.data, '\n')
		case "id":
			if !containsNUL(value) {
				if string(value) != p.idBuf {
					p.idBuf = string(value)
				}
				p.SawID = true
			}
		case "retry":
			if ms, ok := parseDigits(value); ok {
				p.Retry = time.Duration(ms) * time.Millisecond
				p.RetrySet = true
			}
		}
	}
}

// dispatch ends the event under construction. It always commits the id
// buffer to LastID; it reports an event only when the data is non-empty.
func (p *sseParser) dispatch() (sseEvent, bool) {
	p.LastID = p.idBuf
	data := p.data
	typ := "message"
	if p.typeSet && p.eventType != "" {
		typ = p.eventType
	}
	p.typeSet = false
	p.data = p.data[:0]
	if len(data) <= 1 {
		return sseEvent{}, false
	}
	out := make([]byte, len(data)-1)
	copy(out, data)
	return sseEvent{Type: typ, Data: out, ID: p.LastID}, true
}

// containsNUL reports whether b holds a NUL byte.
func containsNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// maxRetryMillis bounds a retry field so the conversion to a Duration
// cannot overflow; a larger value is clamped (the caller bounds the wait by
// its context anyway).
const maxRetryMillis = int64(24 * time.Hour / time.Millisecond)

// parseDigits parses a non-empty all-ASCII-digit value as milliseconds,
// clamping huge values to maxRetryMillis.
func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n > maxRetryMillis {
		return maxRetryMillis, true
	}
	return n, true
}

// ErrEventTooLarge reports, from an SSEReader, a line or an event's data
// over the reader's cap.
var ErrEventTooLarge = errors.New("server-sent event too large")

// SSEEvent is one event read by an SSEReader.
type SSEEvent struct {
	// Type is the event type; "message" when the stream named none.
	Type string
	// Data is the event's data, lines joined with "\n"; never empty.
	Data []byte
}

// SSEReader reads a text/event-stream body with the same WHATWG parser the
// HTTP transport uses, for other streams over HTTP (such as a model API's
// streamed answer). Its id and retry fields are parsed but not reported.
type SSEReader struct {
	p *sseParser
}

// NewSSEReader returns a reader of r whose lines and events' data are each
// capped at max bytes; over the cap, Next fails with ErrEventTooLarge
// before more than max bytes are buffered.
func NewSSEReader(r io.Reader, max int64) *SSEReader {
	n := int(min(max, math.MaxInt))
	p := newSSEParser(r, n)
	p.plainSize = true
	return &SSEReader{p: p}
}

// Next returns the next event with non-empty data. It returns io.EOF when
// the stream ends, also inside an event (an incomplete event is dropped,
// as WHATWG says), or the reader's error.
func (r *SSEReader) Next() (SSEEvent, error) {
	ev, err := r.p.Next()
	if err != nil {
		return SSEEvent{}, err
	}
	return SSEEvent{Type: ev.Type, Data: ev.Data}, nil
}
