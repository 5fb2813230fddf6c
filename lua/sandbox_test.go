package lua

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSandboxEscapesFail(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TAI_SANDBOX_SECRET", "hunter2")
	tests := []struct {
		name, chunk string
	}{
		{"io.open", `return io.open("` + victim + `")`},
		{"io.popen", `return io.popen("id")`},
		{"os.execute", `return os.execute("true")`},
		{"os.remove", `return os.remove("` + victim + `")`},
		{"os.rename", `return os.rename("` + victim + `", "x")`},
		{"os.exit", `os.exit(3)`},
		{"os.getenv", `return os.getenv("TAI_SANDBOX_SECRET")`},
		{"os.setenv", `return os.setenv("X", "1")`},
		{"os.tmpname", `return os.tmpname()`},
		{"dofile", `return dofile("` + victim + `")`},
		{"loadfile", `return loadfile("` + victim + `")`},
		{"require from disk", `return require("victim")`},
		{"package.loaders", `return package.loaders`},
		{"debug", `return debug.getregistry()`},
		{"getfenv", `return getfenv(0)`},
		{"string.rep bomb", `return string.rep("x", 1e9)`},
		{"method rep bomb", `return ("xx"):rep(1e9)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			printed, results, err := RunSandboxed(ctx, tt.chunk)
			if err == nil {
				t.Fatalf("escape %q succeeded: printed %q, results %v", tt.chunk, printed, results)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error leaks the environment: %v", err)
			}
		})
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "keep me" {
		t.Fatalf("victim file changed: %q, %v", data, err)
	}
}

func TestSandboxAllowsSafeCode(t *testing.T) {
	tests := []struct {
		name, chunk string
		printed     string
		results     []any
	}{
		{"print and return", `print("hi", 1, nil) return 1 + 1, "x"`, "hi\t1\tnil\n", []any{int64(2), "x"}},
		{"tables", `return {a = {1, 2}, b = tai.json.array()}`, "", []any{map[string]any{"a": []any{int64(1), int64(2)}, "b": []any{}}}},
		{"json", `return tai.json.decode('{"k":[true]}')`, "", []any{map[string]any{"k": []any{true}}}},
		{"toml", `return tai.toml.decode('a = 1').a`, "", []any{int64(1)}},
		{"clock", `return type(os.time()), type(os.clock()), type(os.date("%Y"))`, "", []any{"number", "number", "string"}},
		{"load a string", `return loadstring("return 7")()`, "", []any{int64(7)}},
		{"coroutines", `local co = coroutine.wrap(function() coroutine.yield(5) end) return co()`, "", []any{int64(5)}},
		{"recursion grows the stack", `local function f(n) if n == 0 then return 0 end local a, b, c = n, n, n return 1 + f(n - 1) end return f(150)`, "", []any{int64(150)}},
		{"big tables", `local t = {} for i = 1, 100000 do t[i] = i end return #t`, "", []any{int64(100000)}},
		{"string methods", `return ("abc"):upper(), string.rep("ab", 3)`, "", []any{"ABC", "ababab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			printed, results, err := RunSandboxed(ctx, tt.chunk)
			if err != nil {
				t.Fatal(err)
			}
			if printed != tt.printed {
				t.Errorf("printed %q, want %q", printed, tt.printed)
			}
			if !reflect.DeepEqual(results, tt.results) {
				t.Errorf("results %#v, want %#v", results, tt.results)
			}
		})
	}
}

func TestSandboxDeadlineStopsLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	printed, _, err := RunSandboxed(ctx, `print("before") while true do end`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if printed != "before\n" {
		t.Fatalf("printed %q, want the output before the loop", printed)
	}
}

func TestSandboxErrorCarriesTraceback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := RunSandboxed(ctx, "local function inner()\n  error('boom')\nend\nlocal function outer() inner() end\nouter()\n")
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("got %T %v, want *Error", err, err)
	}
	if !strings.Contains(le.Message, "chunk:2: boom") {
		t.Errorf("message %q lacks the position", le.Message)
	}
	for _, want := range []string{"stack traceback:", "chunk:2: in function 'inner'", "chunk:4:"} {
		if !strings.Contains(le.Traceback, want) {
			t.Errorf("traceback lacks %q:\n%s", want, le.Traceback)
		}
	}
	if _, _, err := RunSandboxed(ctx, "x = = 1"); err == nil || !strings.Contains(err.Error(), "chunk") {
		t.Errorf("syntax error: got %v", err)
	}
}

func TestSandboxOutputIsCapped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	printed, _, err := RunSandboxed(ctx, `local s = string.rep("x", 1023) for i = 1, 2048 do print(s) end`)
	if err != nil {
		t.Fatal(err)
	}
	if len(printed) > MaxSandboxOutput+100 || !strings.Contains(printed, "[output cut: 1048576 more bytes]") {
		t.Fatalf("printed %d bytes, tail %q", len(printed), printed[len(printed)-60:])
	}
}

func TestSandboxStackOverflowIsAnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := RunSandboxed(ctx, `local function f(n) return 1 + f(n + 1) end return f(1)`)
	if err == nil || !strings.Contains(err.Error(), "stack overflow") {
		t.Fatalf("got %v, want a stack overflow error", err)
	}
}

func TestSandboxResultsMustBeData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := RunSandboxed(ctx, `return print`); err == nil || !strings.Contains(err.Error(), "result 1") {
		t.Fatalf("got %v, want an error naming result 1", err)
	}
}

// runBounded runs chunk under a deadline of d and fails the test when
// RunSandboxed has not returned within a generous bound after it, so a
// sandbox that ignores its context fails instead of hanging the run.
func runBounded(t *testing.T, d time.Duration, chunk string) (sandboxRun, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	type outcome struct {
		run sandboxRun
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := runSandbox(ctx, chunk)
		done <- outcome{r, err}
	}()
	bound := time.NewTimer(d + 20*time.Second)
	defer bound.Stop()
	select {
	case o := <-done:
		return o.run, o.err
	case <-bound.C:
		t.Fatalf("RunSandboxed(%.40q) still running 20 s after its deadline", chunk)
	}
	return sandboxRun{}, nil
}

// TestSandboxBoundsMemory runs each chunk through a small process of its
// own (sandboxRSSMode), which starts the sandbox: a child's ru_maxrss on
// Linux counts the peak of the process that started it, since Go starts
// a child sharing its parent's memory until exec, and exec records that
// memory's high-water mark as the child's. Started from this test binary,
// with hundreds of MiB of its own under -race, every chunk would report
// the binary's peak, not the sandbox's.
func TestSandboxBoundsMemory(t *testing.T) {
	tests := []struct {
		name, chunk string
	}{
		{"table of big strings", `local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep("x", 16*1024*1024 - 8) .. i end`},
		{"doubling concatenation", `local s = string.rep("x", 1024*1024) while true do s = s .. s end`},
		{"table of numbers", `local t = {} local i = 0 while true do i = i + 1 t[i] = i end`},
		{"table of small tables", `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i + 1, tostring(i)} end`},
		{"table.concat", `local t = {} for i = 1, 64 do t[i] = string.rep("y", 8*1024*1024) end local s = table.concat(t) local u = {} while true do u[#u+1] = s .. #u end`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0])
			cmd.Env = append(os.Environ(), "TAI_LUA_TEST_MCP="+sandboxRSSMode, sandboxRSSChunk+"="+tt.chunk)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the process starting the sandbox: %v (%s)", err, out)
			}
			var got sandboxRSSReport
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("its report %q: %v", out, err)
			}
			t.Logf("peak resident memory %d MiB (the process starting it: %d MiB)", got.RSS>>20, got.StarterRSS>>20)
			if !got.Memory {
				t.Fatalf("got %q, want ErrSandboxMemory", got.Err)
			}
			if got.RSS > 300<<20 {
				t.Fatalf("the sandbox reached %d MiB resident, want < 300 MiB", got.RSS>>20)
			}
		})
	}
}

// sandboxRSSMode makes the test binary run one chunk (from sandboxRSSChunk)
// in the sandbox and print a sandboxRSSReport: the small process
// TestSandboxBoundsMemory measures through.
const (
	sandboxRSSMode  = "sandbox-rss"
	sandboxRSSChunk = "TAI_LUA_TEST_CHUNK"
)

type sandboxRSSReport struct {
	RSS        int64  `json:"rss"`
	StarterRSS int64  `json:"starter_rss"`
	Memory     bool   `json:"memory"`
	Err        string `json:"err"`
}

// sandboxRSS is the whole life of a sandboxRSSMode process.
func sandboxRSS() int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	run, err := runSandbox(ctx, os.Getenv(sandboxRSSChunk))
	rep := sandboxRSSReport{RSS: run.maxRSS, Memory: errors.Is(err, ErrSandboxMemory)}
	if err != nil {
		rep.Err = err.Error()
	}
	var self syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) == nil {
		rep.StarterRSS = self.Maxrss * 1024
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

func TestSandboxStopsLongBuiltins(t *testing.T) {
	tests := []struct {
		name, chunk string
	}{
		{"pathological find", `print("before") return string.rep("a", 3000):find(".-.-.-b")`},
		{"pathological gsub", `print("before") return (string.rep("a", 3000):gsub(".-.-.-b", ""))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := runBounded(t, time.Second, tt.chunk)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want a deadline error", err)
			}
			if run.printed != "before\n" {
				t.Fatalf("printed %q, want the output before the stall", run.printed)
			}
		})
	}
}

func TestSandboxGoPanicIsAnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := RunSandboxed(ctx, `return unpack({}, 1, 1e8)`)
	var le *Error
	if !errors.As(err, &le) || !strings.Contains(le.Message, "registry overflow") {
		t.Fatalf("got %T %v, want a Lua error naming the registry overflow", err, err)
	}
}
