package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tai/engine/tool"
	"tai/mcp"
)

// BenchmarkBridgedEcho compares, in one run, an echo through the registry
// and the bridge under --yolo (Dispatch of mcp_srv_echo: approval, the
// bridge's lookups, audit, redaction) with a direct mcp.Client call to the
// same server program, the bridge's call alone (no registry), and
// Dispatch of a native no-op tool (the registry and its audit alone).
// bridge-call − direct is the bridge's overhead; bridged − bridge-call is
// the registry's.
func BenchmarkBridgedEcho(b *testing.B) {
	f := newFixture(b, tool.Yolo, "")
	f.add(b, "srv", nil)
	ctx := context.Background()
	if _, err := f.b.SetEnabled(ctx, "srv", "", true); err != nil {
		b.Fatal(err)
	}
	if err := f.reg.Add(tool.Tool{Name: "noop", Description: "does nothing",
		Run: func(context.Context, map[string]any) (tool.Result, error) { return tool.TextResult("ok"), nil }}); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"text": "hello, benchmark"}
	b.Run("direct", func(b *testing.B) {
		entries, _, err := jsonNormalize(serverJSON(b, "srv", nil), "")
		if err != nil {
			b.Fatal(err)
		}
		c, err := mcp.Connect(ctx, entries[0], nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.Call(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("registry", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.reg.Dispatch(ctx, "noop", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bridge-call", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.b.call(ctx, "srv", "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bridged", func(b *testing.B) {
		for b.Loop() {
			res, err := f.reg.Dispatch(ctx, "mcp_srv_echo", args)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}

// BenchmarkBridgeOwnWork measures the bridge's own work per call, without
// the wire: resolving the bridged name (Fallback), the checks before the
// call (profile, policy, pin) and turning a server's result into the
// engine's.
func BenchmarkBridgeOwnWork(b *testing.B) {
	f := newFixture(b, tool.Yolo, "")
	f.add(b, "srv", nil)
	ctx := context.Background()
	if _, err := f.b.SetEnabled(ctx, "srv", "", true); err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"content":[{"type":"text","text":"hello, benchmark"}]}`)
	res, err := decodeForBench(raw)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		t, ok := f.b.fallback("mcp_srv_echo")
		if !ok || t.Run == nil {
			b.Fatal("not resolved")
		}
		s, err := f.b.current()
		if err != nil {
			b.Fatal(err)
		}
		st := s.servers["srv"]
		if !st.profiles[f.b.profileFor(ctx)] || st.refusal("echo") != "" {
			b.Fatal("not callable")
		}
		if out := convert("bench", res, nil); len(out.Content) != 1 {
			b.Fatal("convert")
		}
	}
}

func decodeForBench(raw []byte) (*mcp.CallResult, error) {
	var r mcp.CallResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// BenchmarkBridgeInterleaved alternates, call by call, a direct
// mcp.Client echo and a bridged Dispatch of the same tool (on two
// processes of the same server program), so load on the machine falls on
// both alike. It reports each one's time per call and the difference:
// the bridge and the registry (approval, audit, redaction) together.
func BenchmarkBridgeInterleaved(b *testing.B) {
	f := newFixture(b, tool.Yolo, "")
	f.add(b, "srv", nil)
	ctx := context.Background()
	if _, err := f.b.SetEnabled(ctx, "srv", "", true); err != nil {
		b.Fatal(err)
	}
	entries, _, err := jsonNormalize(serverJSON(b, "srv", nil), "")
	if err != nil {
		b.Fatal(err)
	}
	c, err := mcp.Connect(ctx, entries[0], nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"text": "hello, benchmark"}
	if _, err := f.reg.Dispatch(ctx, "mcp_srv_echo", args); err != nil {
		b.Fatal(err)
	}
	var direct, bridged, bare time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.Call(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := f.b.call(ctx, "srv", "echo", args); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if res, err := f.reg.Dispatch(ctx, "mcp_srv_echo", args); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		t3 := time.Now()
		direct += t1.Sub(t0)
		bare += t2.Sub(t1)
		bridged += t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/call")
	b.ReportMetric(float64(bare.Nanoseconds())/n, "bridge-ns/call")
	b.ReportMetric(float64(bridged.Nanoseconds())/n, "dispatch-ns/call")
	b.ReportMetric(float64((bare-direct).Nanoseconds())/n, "bridge-overhead-ns/call")
	b.ReportMetric(float64((bridged-bare).Nanoseconds())/n, "registry-overhead-ns/call")
}

// BenchmarkRegisterBombs registers a hostile server whose two pages list
// three usable tools beside schema bombs (bombListing: 100,000 levels of
// nesting, a million-entry enum, 200,000 required names, a megabyte of
// property description, a 100 KB description), about 8 MB in all: the
// work is one pass over the listing per bound, not a walk of the schemas.
func BenchmarkRegisterBombs(b *testing.B) {
	state := filepath.Join(b.TempDir(), "state")
	if err := os.WriteFile(state, []byte(bombListing()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		f := newFixture(b, tool.Yolo, "")
		f.add(b, fmt.Sprint("h", i), map[string]string{serverEnv: hostileServer, serverStateEnv: state})
		f.b.Close()
		f.store.Close()
	}
}

// BenchmarkListingBombs is the bridge's own part of that: bounds,
// duplicates and hashes of the decoded listing.
func BenchmarkListingBombs(b *testing.B) {
	var tools []mcp.Tool
	for _, page := range bombPages() {
		for _, raw := range page {
			var t mcp.Tool
			if err := json.Unmarshal([]byte(raw), &t); err != nil {
				// encoding/json stops at 10,000 levels: the deep tool
				// is built by hand.
				t = mcp.Tool{Name: "deep", InputSchema: json.RawMessage(strings.Repeat(`{"type":"object","properties":{"a":`, 100000) + `{}` + strings.Repeat("}}", 100000))}
			}
			tools = append(tools, t)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if rows := listing(tools); len(rows) == 0 {
			b.Fatal("no rows")
		}
	}
}
