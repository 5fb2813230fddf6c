package bridge

import (
	"strings"
	"sync"
	"testing"

	"tai/engine/tool"
)

// A server's progress reaches the Caller of the call it belongs to: only
// progress for the call's own token and going forward, its message
// redacted, on one visible line and cut short, a total below the
// progress left out; a notification over progressParamsMax not shown.
func TestProgressReachesTheCaller(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	if err := f.store.SecretSet("sv", "s3cr3t-value-42", nil); err != nil {
		t.Fatal(err)
	}
	f.add(t, "srv", map[string]string{"SECRET_VALUE": "${sv}"})
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []tool.Progress
	ctx := tool.WithCaller(ctxT(t), tool.Caller{Progress: func(p tool.Progress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	}})
	res, err := f.reg.Dispatch(ctx, "mcp_srv_progress", nil)
	if err != nil || text(res) != "progressed" {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("progress seen = %d, want the two of the call going forward and not too large", len(seen))
	}
	if p := seen[0]; p.Progress != 1 || p.Total != 3 || p.Message != `reading \x1b[31m[REDACTED:sv]` {
		t.Errorf("first progress = %+v", p)
	}
	if p := seen[1]; p.Progress != 2 || p.Total != 0 || len(p.Message) > progressMessageMax+len("…") || !strings.HasSuffix(p.Message, "é…") {
		t.Errorf("second progress = %+v, want no total and a message cut whole", p)
	}
}
