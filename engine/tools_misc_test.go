package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"tai/engine/builtin"
	"tai/engine/tool"
)

func TestLuaToolDeadline(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	deadlines := make(chan time.Duration, 10)
	runner := func(ctx context.Context, chunk string) (string, []any, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			deadlines <- -1
		} else {
			deadlines <- time.Until(dl)
		}
		switch chunk {
		case "honours":
			<-ctx.Done()
			return "partial\n", nil, ctx.Err()
		case "ignores":
			// A Go builtin that never looks at the context.
			<-release
			return "", nil, nil
		}
		return "", []any{1.0}, nil
	}
	e := newEngine(t, nil, &Options{Mode: tool.Yolo, LuaRunner: runner})
	tests := []struct {
		name    string
		args    map[string]any
		maxDL   time.Duration
		want    []string
		errRes  bool
		noDLChk bool
	}{
		{name: "default deadline", args: map[string]any{"chunk": "quick"}, maxDL: builtin.LuaDefaultTimeout, want: []string{"returned: [1]"}},
		{name: "timeout argument", args: map[string]any{"chunk": "quick", "timeout": 90.0}, maxDL: 90 * time.Second, want: []string{"returned: [1]"}},
		{name: "runner stops at the deadline", args: map[string]any{"chunk": "honours", "timeout": 1.0}, maxDL: time.Second,
			want: []string{"partial", "timeout of 1s"}, errRes: true},
		{name: "runner ignores the deadline", args: map[string]any{"chunk": "ignores", "timeout": 1.0}, maxDL: time.Second,
			want: []string{"timeout of 1s", "abandoned"}, errRes: true},
		{name: "timeout over the cap", args: map[string]any{"chunk": "quick", "timeout": 1e6}, want: []string{"out of range", "600"}, errRes: true, noDLChk: true},
		{name: "negative timeout", args: map[string]any{"chunk": "quick", "timeout": -1.0}, want: []string{"out of range"}, errRes: true, noDLChk: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan tool.Result, 1)
			go func() {
				res, err := newSession(t, e).Dispatch(context.Background(), "lua", tt.args)
				if err != nil {
					res = tool.ErrorResult("Go error: %v", err)
				}
				done <- res
			}()
			var res tool.Result
			select {
			case res = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the lua tool did not return")
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text(), w) {
					t.Errorf("result lacks %q:\n%s", w, res.Text())
				}
			}
			if res.IsError != tt.errRes {
				t.Errorf("isError = %v, want %v:\n%s", res.IsError, tt.errRes, res.Text())
			}
			if tt.noDLChk {
				return
			}
			if dl := <-deadlines; dl <= 0 || dl > tt.maxDL {
				t.Errorf("runner's deadline in %v, want at most %v", dl, tt.maxDL)
			}
		})
	}
}
