package sse

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the event type; "message" when the stream named none.
	Type string
	// Data is the event's data, lines joined with "\n". It is never empty:
	// an event with empty data is not dispatched.
	Data []byte
	// ID is the last event id in force when the event was dispatched.
	ID string
}

// readSize is how much the parser asks the body for at a time (longer
// lines accumulate across reads).
const readSize = 4 << 10

// Parser reads a text/event-stream body incrementally, following the
// WHATWG HTML "event stream interpretation" rules: lines end with CRLF, LF
// or CR; one leading BOM is dropped; ":" lines are comments; a blank line
// dispatches; "data" lines join with LF; "id" persists across events, takes
// effect even when the data is empty, and is ignored when it holds NUL;
// "retry" counts only when it is all ASCII digits. An event whose data is
// empty (such as a priming event carrying just an id and a retry) updates
// LastID and Retry but is never returned.
//
// A line or an event's data larger than max bytes fails the stream with an
// error wrapping the parser's too-large error (ErrTooLarge unless the
// caller named its own), before more than max bytes are buffered.
type Parser struct {
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

	// tooLarge is the error an oversize line or event wraps.
	tooLarge error
}

// ErrTooLarge reports a line or an event's data over the parser's cap,
// when the caller named no error of its own.
var ErrTooLarge = errors.New("server-sent event too large")

// NewParser returns a parser reading r with lines and events capped at max
// bytes (at most math.MaxInt). Over the cap, Next fails with an error
// wrapping tooLarge, or ErrTooLarge when tooLarge is nil, so a caller can
// tell the stream's size from its own limit.
func NewParser(r io.Reader, max int64, tooLarge error) *Parser {
	if tooLarge == nil {
		tooLarge = ErrTooLarge
	}
	return &Parser{r: r, max: int(min(max, math.MaxInt)), buf: make([]byte, readSize), first: true, tooLarge: tooLarge}
}

// Resumed returns a parser for r, the body of a resumed stream, carrying
// p's cap, last event id and retry delay over (they belong to the event
// source, not one body).
func (p *Parser) Resumed(r io.Reader) *Parser {
	q := NewParser(r, int64(p.max), p.tooLarge)
	q.LastID, q.idBuf, q.SawID = p.LastID, p.LastID, p.SawID
	q.Retry, q.RetrySet = p.Retry, p.RetrySet
	return q
}

// errTooLarge reports an event stream line or event over the cap.
func (p *Parser) errTooLarge(what string) error {
	return fmt.Errorf("%w: the server sent an SSE %s over %d bytes; refusing it", p.tooLarge, what, p.max)
}

// readLine returns the next complete line without its terminator. The slice
// is valid until the next call. At the end of the stream an unterminated
// final line is discarded (WHATWG: an incomplete event is not dispatched)
// and the reader's error (io.EOF on a clean end) is returned.
func (p *Parser) readLine() ([]byte, error) {
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

// Ended reports whether the parser has consumed the whole stream (the
// reader reported its end or an error, and nothing is left unread).
func (p *Parser) Ended() bool { return p.start == p.end && p.rerr != nil }

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
func (p *Parser) Next() (Event, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return Event{}, err
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
				return Event{}, p.errTooLarge("event")
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
func (p *Parser) dispatch() (Event, bool) {
	p.LastID = p.idBuf
	data := p.data
	typ := "message"
	if p.typeSet && p.eventType != "" {
		typ = p.eventType
	}
	p.typeSet = false
	p.data = p.data[:0]
	if len(data) <= 1 {
		return Event{}, false
	}
	out := make([]byte, len(data)-1)
	copy(out, data)
	return Event{Type: typ, Data: out, ID: p.LastID}, true
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
