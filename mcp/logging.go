package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// LogLevel is the severity of a server's log message (RFC 5424's, as
// MCP's logging names them), from LogDebug up to LogEmergency.
type LogLevel string

// The levels, least severe first.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// LogLevels lists the levels, least severe first.
var LogLevels = []LogLevel{LogDebug, LogInfo, LogNotice, LogWarning, LogError, LogCritical, LogAlert, LogEmergency}

// rank is the level's place in LogLevels; -1 for a level MCP does not
// name.
func (l LogLevel) rank() int {
	for i, v := range LogLevels {
		if v == l {
			return i
		}
	}
	return -1
}

// ParseLogLevel returns the level called name (any case), or an error
// naming the levels there are.
func ParseLogLevel(name string) (LogLevel, error) {
	l := LogLevel(strings.ToLower(strings.TrimSpace(name)))
	if l.rank() < 0 {
		names := make([]string, len(LogLevels))
		for i, v := range LogLevels {
			names[i] = string(v)
		}
		return "", fmt.Errorf("no log level is named %q; levels: %s", name, strings.Join(names, ", "))
	}
	return l, nil
}

// The bounds of a ServerLog: however much a server sends, its log holds at
// most LogMaxEntries messages and LogMaxBytes of text, each message's text
// cut at LogEntryMax bytes (after redaction). The oldest go first.
const (
	LogMaxEntries = 500
	LogMaxBytes   = 256 * 1024
	LogEntryMax   = 2048
)

// MethodSetLogLevel asks a server to send log messages at a level and
// above.
const MethodSetLogLevel = "logging/setLevel"

// LogEntry is one log message a server sent.
type LogEntry struct {
	// Time is when tai received it.
	Time time.Time `json:"time"`
	// Level is its severity as sent; a level MCP does not name is kept as
	// sent, and ranks with LogDebug.
	Level LogLevel `json:"level"`
	// Logger names what logged it, when the server says.
	Logger string `json:"logger,omitempty"`
	// Text is its data: a string as sent, anything else as compact JSON;
	// redacted, then cut at LogEntryMax bytes.
	Text string `json:"text"`
	// Cut is the length of the redacted text before it was cut, when it
	// was (0 otherwise).
	Cut int `json:"cut,omitempty"`
}

// ServerLog keeps the log messages (notifications/message) one server
// sends, in a ring bounded by LogMaxEntries and LogMaxBytes. They are for
// a person to read: nothing here reaches a model. Its methods are safe for
// concurrent use. Notify, which runs on the goroutine reading the
// connection, only copies a message of up to logRawMax bytes (a larger one
// is decoded, redacted and cut at once); View decodes and redacts what it
// returns, so a server flooding its log never slows the connection, and a
// secret learnt after a message arrived is still redacted.
//
//	log := mcp.NewServerLog(store.Redact)
//	opts := &mcp.ClientOptions{Notifications: map[string]mcp.NotificationHandler{
//		mcp.MethodLogMessage: log.Notify}}
type ServerLog struct {
	redact func(string) string

	mu      sync.Mutex
	ring    []logged // oldest at head
	head    int
	n       int
	bytes   int
	dropped int    // messages evicted or refused since the start
	spare   []byte // the buffer of the last message evicted, for the next
}

// logged is one kept message: its params as sent (raw), or, for one
// larger than logRawMax, the entry made of them at once (raw nil).
type logged struct {
	at    time.Time
	raw   []byte
	entry LogEntry
}

// logRawMax is the largest message kept as sent, to be read later.
const logRawMax = 2*LogEntryMax + 512

// size is what a kept message counts against LogMaxBytes.
func (m *logged) size() int {
	if m.raw != nil {
		return len(m.raw)
	}
	return m.entry.size()
}

// NewServerLog returns an empty log whose entries are redacted with
// redact (nil keeps them as sent).
func NewServerLog(redact func(string) string) *ServerLog {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &ServerLog{redact: redact}
}

// Notify keeps one notifications/message; it is a NotificationHandler.
func (l *ServerLog) Notify(_ context.Context, params json.RawMessage) {
	m := logged{at: time.Now()}
	if len(params) <= logRawMax {
		l.add(m, params)
		return
	}
	e, ok := l.entryOf(params)
	if !ok {
		l.mu.Lock()
		l.dropped++
		l.mu.Unlock()
		return
	}
	m.entry = e
	l.add(m, nil)
}

// entryOf decodes, redacts and cuts one message's params; ok is false
// when they are not a log message.
func (l *ServerLog) entryOf(params []byte) (e LogEntry, ok bool) {
	var p struct {
		Level  LogLevel        `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if json.Unmarshal(params, &p) != nil || p.Level == "" {
		return LogEntry{}, false
	}
	text := string(p.Data)
	var s string
	if json.Unmarshal(p.Data, &s) == nil {
		text = s
	}
	e = LogEntry{Level: LogLevel(cut(l.redact(string(p.Level)), 32)), Logger: cut(l.redact(p.Logger), 128)}
	text = l.redact(text)
	e.Text = cut(text, LogEntryMax)
	if len(e.Text) < len(text) {
		e.Cut = len(text)
	}
	return e, true
}

// cut returns s cut to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// size is what an entry counts against LogMaxBytes.
func (e *LogEntry) size() int { return len(e.Text) + len(e.Logger) + len(e.Level) }

// add appends m, with raw (params of at most logRawMax bytes) copied in
// as its text to read later, evicting the oldest messages past the
// bounds. A flood reuses the evicted messages' buffers, so once the ring
// is full a message costs no allocation.
func (l *ServerLog) add(m logged, raw []byte) {
	size := m.entry.size()
	if raw != nil {
		size = len(raw)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ring == nil {
		l.ring = make([]logged, LogMaxEntries)
	}
	for l.n > 0 && (l.n == LogMaxEntries || l.bytes+size > LogMaxBytes) {
		old := &l.ring[l.head]
		l.bytes -= old.size()
		if old.raw != nil {
			l.spare = old.raw
		}
		*old = logged{}
		l.head = (l.head + 1) % LogMaxEntries
		l.n--
		l.dropped++
	}
	if raw != nil {
		m.raw = append(l.spare[:0], raw...)
		l.spare = nil
	}
	l.ring[(l.head+l.n)%LogMaxEntries] = m
	l.n++
	l.bytes += size
}

// LogView is what a ServerLog holds at one moment.
type LogView struct {
	// Entries are the kept messages at or above the level asked for,
	// oldest first.
	Entries []LogEntry `json:"entries"`
	// Dropped counts the messages no longer kept (evicted by newer ones,
	// or not log messages at all) since the log began.
	Dropped int `json:"dropped"`
	// Kept counts the messages kept, whatever their level.
	Kept int `json:"kept"`
}

// View returns the kept messages at or above min (every one for "").
// Kept params that are not a log message are counted as dropped.
func (l *ServerLog) View(min LogLevel) LogView {
	l.mu.Lock()
	kept := make([]logged, l.n)
	for i := range l.n {
		// The text is copied: its buffer is reused once evicted.
		m := l.ring[(l.head+i)%LogMaxEntries]
		m.raw = bytes.Clone(m.raw)
		kept[i] = m
	}
	v := LogView{Dropped: l.dropped, Kept: l.n, Entries: []LogEntry{}}
	l.mu.Unlock()
	floor := min.rank()
	for _, m := range kept {
		e := m.entry
		if m.raw != nil {
			var ok bool
			if e, ok = l.entryOf(m.raw); !ok {
				v.Dropped++
				v.Kept--
				continue
			}
		}
		e.Time = m.at
		if max(e.Level.rank(), 0) >= floor {
			v.Entries = append(v.Entries, e)
		}
	}
	return v
}

// ErrNoLogging is returned by SetLogLevel for a server that does not
// declare the logging capability.
var ErrNoLogging = fmt.Errorf("the server does not declare logging, so it cannot be asked for a level; it sends what it chooses")

// SetLogLevel asks the server to send log messages at level and above
// (logging/setLevel). A server that did not declare logging is not asked:
// the error wraps ErrNoLogging.
func (c *Client) SetLogLevel(ctx context.Context, level LogLevel) error {
	if level.rank() < 0 {
		_, err := ParseLogLevel(string(level))
		return err
	}
	var caps struct {
		Logging json.RawMessage `json:"logging"`
	}
	if json.Unmarshal(c.Capabilities(), &caps) != nil || len(caps.Logging) == 0 || string(caps.Logging) == "null" {
		return fmt.Errorf("mcp server %q: %w", c.Name(), ErrNoLogging)
	}
	_, err := c.request(ctx, MethodSetLogLevel, map[string]any{"level": level})
	return c.scrub(err)
}
