package engine

import (
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fileSize is the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestServedHugeToolNameIsRefusedBriefly: a client calling tools with
// 9 MB names (the body cap is 10 MB) gets a short invalid-params error
// that quotes the name clipped, and the vault does not grow by the names.
func TestServedHugeToolNameIsRefusedBriefly(t *testing.T) {
	e := newEngine(t, nil, nil)
	sess := sdkSession(t, serveEngine(t, e))
	// Sync folds the audit journal into the vault file.
	if err := e.Store().Sync(); err != nil {
		t.Fatal(err)
	}
	path := e.Store().Path()
	before := fileSize(t, path)
	for _, name := range []string{
		strings.Repeat("Z", 9<<20),
		"read_file\n#9999 2025-12-01T21:00:00Z tool write_file digest=0 ok 1ms 0B" + strings.Repeat("Y", 9<<20),
		strings.Repeat("Q", 9<<20),
	} {
		_, err := sess.CallTool(turnCtx(t), &sdk.CallToolParams{Name: name})
		if err == nil {
			t.Fatal("a 9 MB tool name was not refused")
		}
		msg := err.Error()
		if len(msg) > 1024 || !strings.Contains(msg, "not valid") || !strings.Contains(msg, " bytes)") || strings.Contains(msg, "\n") {
			t.Fatalf("the refusal is %d bytes: %.300q", len(msg), msg)
		}
	}
	if err := e.Store().Sync(); err != nil {
		t.Fatal(err)
	}
	after := fileSize(t, path)
	t.Logf("the vault file: %d bytes before, %d after", before, after)
	if after-before > 1<<20 {
		t.Fatalf("the vault grew by %d bytes for three calls with 9 MB names", after-before)
	}
	tail, err := e.Store().AuditTail(3, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != 3 {
		t.Fatalf("%d audit entries, want the three refusals", len(tail))
	}
	for _, a := range tail {
		if a.Outcome != "invalid" || len(a.Subject) > 2*1024 {
			t.Errorf("audit entry: outcome %q, subject of %d bytes", a.Outcome, len(a.Subject))
		}
	}
}
