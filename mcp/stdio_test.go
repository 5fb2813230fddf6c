package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawTransport starts the "raw" fake (each line echoed back verbatim).
func rawTransport(t *testing.T, opts *StdioOptions) *StdioTransport {
	t.Helper()
	e := fakeEntry(t, "raw")
	if opts == nil {
		opts = &StdioOptions{}
	}
	opts.Env = e.Env
	st := NewStdioTransport(e.Command, e.Args, opts)
	if err := st.Connect(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestStdioSendRecv(t *testing.T) {
	st := rawTransport(t, nil)
	ctx := testCtx(t)
	msgs := []*Message{
		{ID: IntID(0), Method: "tools/call", Params: json.RawMessage("{\"name\":\"x\",\n\"arguments\":{\"s\":\"line\\nbreak\"}}")},
		{ID: StringID("s-1"), Result: json.RawMessage(`{}`)},
		{Method: MethodInitialized},
		{ID: IntID(9), Result: json.RawMessage(`"` + strings.Repeat("z", 200<<10) + `"`)}, // longer than the read buffer
	}
	for _, m := range msgs {
		// The echo starts before the whole line is written: send and
		// receive at once, as the client's reader does.
		sent := make(chan error, 1)
		go func() { sent <- st.Send(ctx, m) }()
		got, err := st.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		back, _ := json.Marshal(got)
		if string(want) != string(back) {
			t.Errorf("sent %.80s, got back %.80s", want, back)
		}
	}
}

func TestStdioRecvHonoursContext(t *testing.T) {
	st := rawTransport(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := st.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv with nothing to read: %v", err)
	}
	// The transport stays usable after an abandoned Recv.
	if err := st.Send(testCtx(t), &Message{Method: "after"}); err != nil {
		t.Fatal(err)
	}
	m, err := st.Recv(testCtx(t))
	if err != nil || m.Method != "after" {
		t.Fatalf("Recv after a cancelled Recv: %+v %v", m, err)
	}
}

func TestStdioMaxMessage(t *testing.T) {
	st := rawTransport(t, &StdioOptions{MaxMessage: 100})
	ctx := testCtx(t)
	long := &Message{Method: "m", Params: json.RawMessage(`"` + strings.Repeat("a", 200) + `"`)}
	if err := st.Send(ctx, long); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized Send: %v", err)
	}
	// Sending is refused before any byte is written, so the leg still works.
	if err := st.Send(ctx, &Message{Method: "ok"}); err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(ctx); err != nil || m.Method != "ok" {
		t.Fatalf("Recv: %+v %v", m, err)
	}
}

func TestStdioUseBeforeConnectAndAfterClose(t *testing.T) {
	st := NewStdioTransport("cat", nil, nil)
	if err := st.Send(testCtx(t), &Message{Method: "x"}); err == nil || !strings.Contains(err.Error(), "before Connect") {
		t.Errorf("Send before Connect: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Connect(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Connect after Close: %v", err)
	}

	st = rawTransport(t, nil)
	if err := st.Connect(testCtx(t)); err == nil {
		t.Error("second Connect succeeded")
	}
	st.Close()
	if err := st.Send(testCtx(t), &Message{Method: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if _, err := st.Recv(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
}

func TestStdioCloseEscalates(t *testing.T) {
	// A server that ignores stdin EOF and SIGTERM must still be gone when
	// Close returns.
	st := NewStdioTransport("sh", []string{"-c", `trap "" TERM; echo ready >&2; while :; do sleep 1; done`},
		&StdioOptions{ShutdownGrace: 100 * time.Millisecond})
	if err := st.Connect(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	pid := st.Pid()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(testCtx(t), pid); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Stderr(), "ready") {
		t.Errorf("stderr tail %q", st.Stderr())
	}
}

func TestStdioBadCwd(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "gone")
	tests := []struct {
		name, cwd, want string
	}{
		{"missing", missing, "cwd " + missing + " does not exist"},
		{"a file", file, "cwd " + file + " is not a folder"},
		{"missing parent", filepath.Join(file, "sub"), "cwd " + filepath.Join(file, "sub") + " does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewStdioTransport("cat", nil, &StdioOptions{Dir: tt.cwd})
			defer st.Close()
			err := st.Connect(testCtx(t))
			if err == nil {
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			var pe *ProcessError
			if errors.As(err, &pe) {
				t.Fatalf("a bad cwd is reported as the command failing: %v", err)
			}
		})
	}
	// The same command starts in a folder that exists.
	st := NewStdioTransport("cat", nil, &StdioOptions{Dir: dir})
	defer st.Close()
	if err := st.Connect(testCtx(t)); err != nil {
		t.Fatalf("Connect with an existing cwd: %v", err)
	}
}

func TestArgv(t *testing.T) {
	st := NewStdioTransport("npx", []string{"-y", "@scope/pkg", "two words", "it's", ""}, nil)
	if got, want := st.Argv(), `npx -y @scope/pkg 'two words' 'it'\''s' ''`; got != want {
		t.Errorf("Argv() = %s, want %s", got, want)
	}
}

func TestStderrTail(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "short", writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "one write over the cap", writes: []string{"0123456789"}, want: "6789"},
		{name: "rolling", writes: []string{"abc", "def", "ghi"}, want: "fghi"},
		{name: "exact", writes: []string{"wxyz"}, want: "wxyz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStderrTail(4)
			for _, w := range tc.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if s.String() != tc.want || s.Cap() > 8 {
				t.Errorf("String() = %q (cap %d), want %q", s.String(), s.Cap(), tc.want)
			}
		})
	}
}

func TestLastLines(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"one\n", 3, "one"},
		{"a\nb\nc\nd\n", 2, "c\nd"},
		{"a\nb", 5, "a\nb"},
	}
	for _, tc := range tests {
		if got := lastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "PATH=/bin"}, map[string]string{"B": "two", "C": "3"})
	if strings.Join(got, " ") != "A=1 PATH=/bin B=two C=3" {
		t.Errorf("mergeEnv = %q", got)
	}
	base := os.Environ()
	if got := mergeEnv(base, nil); len(got) != len(base) {
		t.Errorf("nil overlay changed the environment")
	}
}
