package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tai/engine/tool"
)

// TestFileToolsRefuseNonRegularFiles: a FIFO with no writer (or reader)
// would block the call forever, and a device such as /dev/zero never ends.
func TestFileToolsRefuseNonRegularFiles(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	fifo := filepath.Join(e.Dir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"read_file fifo", "read_file", map[string]any{"path": "pipe"}, "named pipe"},
		{"read_file fifo lines", "read_file", map[string]any{"path": "pipe", "start_line": 1.0}, "named pipe"},
		{"read_file device", "read_file", map[string]any{"path": "/dev/zero"}, "device"},
		{"edit_file fifo", "edit_file", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, "named pipe"},
		{"write_file fifo", "write_file", map[string]any{"path": "pipe", "content": "x"}, "named pipe"},
		{"grep fifo", "grep", map[string]any{"pattern": "x", "path": "pipe"}, "named pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			done := make(chan tool.Result, 1)
			go func() {
				res, err := newSession(t, e).Dispatch(context.Background(), tt.tool, tt.args)
				if err != nil {
					res = tool.ErrorResult("Go error: %v", err)
				}
				done <- res
			}()
			select {
			case res := <-done:
				if !res.IsError || !strings.Contains(res.Text(), tt.want) || !strings.Contains(res.Text(), "regular file") {
					t.Errorf("%s = %q (isError %v); want an error naming a %s", tt.tool, res.Text(), res.IsError, tt.want)
				}
			case <-ctx.Done():
				// Unblock the stuck call so the test can end.
				if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					f.Close()
				}
				t.Fatalf("%s on a non-regular file blocked", tt.tool)
			}
		})
	}
}
