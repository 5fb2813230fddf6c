package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestServerLogFloodIsBoundedAndCallCompletes: a server sends 100,000 log
// messages ahead of a tools/call's answer. The call completes within a
// bounded wait, the log keeps at most LogMaxEntries messages and
// LogMaxBytes of text, counts the rest as dropped, keeps the newest, and
// redacts a secret in the last one.
func TestServerLogFloodIsBoundedAndCallCompletes(t *testing.T) {
	const n = 100_000
	const secret = "s3cr3t-token-value-42"
	log := NewServerLog(func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") })
	e := fakeEntry(t, "logging")
	e.Env["TAI_TEST_SECRET"] = secret
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Connect(ctx, e, &ClientOptions{CallTimeout: 50 * time.Second,
		Notifications: map[string]NotificationHandler{MethodLogMessage: log.Notify}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "log_flood", map[string]any{"n": n})
	if err != nil || res.Text() != "flooded" {
		t.Fatalf("call under a log flood: %v, %v", res, err)
	}
	v := log.View("")
	if v.Kept > LogMaxEntries || len(v.Entries) != v.Kept || v.Kept+v.Dropped != n+1 {
		t.Fatalf("kept %d (%d entries), dropped %d; want at most %d kept and %d in all", v.Kept, len(v.Entries), v.Dropped, LogMaxEntries, n+1)
	}
	size := 0
	for _, e := range v.Entries {
		size += e.size()
	}
	if size > LogMaxBytes {
		t.Fatalf("the log holds %d bytes, over %d", size, LogMaxBytes)
	}
	last := v.Entries[len(v.Entries)-1]
	if last.Level != LogError || last.Text != `{"token":"[redacted]"}` {
		t.Fatalf("newest entry %+v, want the error with its secret redacted", last)
	}
	if prev := v.Entries[len(v.Entries)-2]; prev.Text != fmt.Sprintf("line %d", n-1) || prev.Logger != "flood" {
		t.Fatalf("entry before it %+v, want line %d of logger flood", prev, n-1)
	}
	if errs := log.View(LogError); len(errs.Entries) != 1 {
		t.Fatalf("at error and above: %d entries, want 1", len(errs.Entries))
	}
}

// TestServerLogBounds: the byte bound evicts as the entry bound does, a
// long text is cut on a rune boundary with its length kept, an unknown
// level is kept as sent, and params that are not a log message are
// dropped.
func TestServerLogBounds(t *testing.T) {
	log := NewServerLog(nil)
	notify := func(v any) {
		b, _ := json.Marshal(v)
		log.Notify(context.Background(), b)
	}
	long := strings.Repeat("é", LogEntryMax) // 2 bytes a rune
	for range LogMaxBytes/LogEntryMax + 10 {
		notify(map[string]any{"level": "info", "data": long})
	}
	v := log.View("")
	if v.Kept >= LogMaxEntries || v.Dropped == 0 {
		t.Fatalf("kept %d, dropped %d: the byte bound did not evict", v.Kept, v.Dropped)
	}
	e := v.Entries[0]
	if len(e.Text) > LogEntryMax || !strings.HasPrefix(long, e.Text) || e.Cut != len(long) || !json.Valid([]byte(`"`+e.Text+`"`)) {
		t.Fatalf("cut entry: %d bytes, Cut %d", len(e.Text), e.Cut)
	}
	before := v.Dropped
	log.Notify(context.Background(), json.RawMessage(`[1,2]`))
	if v = log.View(""); v.Dropped != before+1 {
		t.Fatalf("params that are no log message: dropped %d, want %d", v.Dropped, before+1)
	}
	notify(map[string]any{"level": "verbose", "data": "odd"})
	v = log.View(LogDebug)
	if v.Entries[len(v.Entries)-1].Level != "verbose" {
		t.Fatalf("dropped %d (was %d), newest %+v", v.Dropped, before, v.Entries[len(v.Entries)-1])
	}
	if got := log.View(LogInfo); got.Entries[len(got.Entries)-1].Level != LogInfo {
		t.Fatalf("an unknown level ranks with debug, so it is not at info and above")
	}
}

// TestSetLogLevel: logging/setLevel reaches a server that declares
// logging (it then sends only what is asked), and is refused before
// sending for one that does not, or for a level MCP does not name.
func TestSetLogLevel(t *testing.T) {
	log := NewServerLog(nil)
	c := connectFake(t, "logging", &ClientOptions{Notifications: map[string]NotificationHandler{MethodLogMessage: log.Notify}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.SetLogLevel(ctx, LogError); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "log_flood", map[string]any{"n": 10}); err != nil {
		t.Fatal(err)
	}
	if v := log.View(""); v.Kept != 1 || v.Entries[0].Level != LogError {
		t.Fatalf("after setLevel error the log holds %+v", v)
	}
	if err := c.SetLogLevel(ctx, "loud"); err == nil || !strings.Contains(err.Error(), "levels: debug, info") {
		t.Fatalf("an unknown level: %v", err)
	}
	plain := connectFake(t, "default", nil)
	if err := plain.SetLogLevel(ctx, LogDebug); !errors.Is(err, ErrNoLogging) || !strings.Contains(err.Error(), "fake-default") {
		t.Fatalf("a server without logging: %v", err)
	}
	if lv, err := ParseLogLevel(" Warning "); err != nil || lv != LogWarning {
		t.Fatalf("ParseLogLevel: %v %v", lv, err)
	}
}

// BenchmarkCallUnderLogFlood measures a tools/call preceded by 1,000 log
// messages, kept by a ServerLog (kept) or handled by nothing (ignored):
// the ring costs the reader little beside reading the messages at all.
func BenchmarkCallUnderLogFlood(b *testing.B) {
	for _, mode := range []string{"ignored", "kept"} {
		b.Run(mode, func(b *testing.B) {
			opts := &ClientOptions{}
			if mode == "kept" {
				opts.Notifications = map[string]NotificationHandler{MethodLogMessage: NewServerLog(nil).Notify}
			}
			c := connectFake(b, "logging", opts)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Call(ctx, "log_flood", map[string]any{"n": 1000}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestServerLogFloodAllocatesNothing: once the ring is full, keeping one
// more message reuses the buffer of the one it evicts, so a flood costs
// the reading goroutine no allocation.
func TestServerLogFloodAllocatesNothing(t *testing.T) {
	log := NewServerLog(nil)
	params := json.RawMessage(`{"level":"debug","logger":"flood","data":"line 12345"}`)
	ctx := context.Background()
	for range LogMaxEntries + 1 {
		log.Notify(ctx, params)
	}
	if n := testing.AllocsPerRun(1000, func() { log.Notify(ctx, params) }); n != 0 {
		t.Fatalf("Notify allocates %v times a message once the ring is full, want 0", n)
	}
	if v := log.View(""); v.Kept != LogMaxEntries || v.Entries[0].Text != "line 12345" {
		t.Fatalf("kept %d, first %+v", v.Kept, v.Entries[0])
	}
}
