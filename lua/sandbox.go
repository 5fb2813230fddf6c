package lua

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	glua "github.com/yuin/gopher-lua"
	"golang.org/x/sys/unix"
)

// Sandbox limits. Output beyond MaxSandboxOutput is cut and marked;
// string.rep results beyond MaxSandboxString are refused; the process a
// chunk runs in may grow by MaxSandboxMemory bytes of address space and use
// MaxSandboxCPU of processor time (less when the context's deadline is
// nearer); results whose JSON exceeds MaxSandboxResult bytes are refused.
const (
	MaxSandboxOutput = 1 << 20
	MaxSandboxString = 16 << 20
	MaxSandboxMemory = 192 << 20
	MaxSandboxResult = 16 << 20
	MaxSandboxCPU    = 10 * time.Minute
)

// ErrSandboxMemory reports a chunk stopped for going over MaxSandboxMemory.
var ErrSandboxMemory = fmt.Errorf("the lua chunk used more than the sandbox's %d MiB of memory; build smaller strings and tables", MaxSandboxMemory>>20)

// sandboxEnv marks the environment of the child process RunSandboxed starts;
// RunSandboxIfAsked turns such a process into the sandbox.
const (
	sandboxEnv   = "TAI_LUA_SANDBOX"
	sandboxChild = "child-1"
)

// sandboxOS lists the os functions that only read the clock.
var sandboxOS = []string{"clock", "date", "difftime", "time"}

// RunSandboxIfAsked makes this process the Lua sandbox, and exits when the
// chunk is done, if RunSandboxed started it as one; otherwise it returns at
// once. Every program that runs sandboxed chunks (tai's main, and the
// TestMain of each test binary that does) calls it before anything else,
// since the sandbox is that same executable started again.
func RunSandboxIfAsked() {
	if os.Getenv(sandboxEnv) == sandboxChild {
		os.Exit(sandboxChildMain())
	}
}

// RunSandboxed runs chunk, code that came from a model or the network, in a
// fresh state that has no io, no debug, no package loading or file loading
// (require, dofile, loadfile, module), no os beyond os.clock, os.date,
// os.difftime and os.time, and a tai table holding only version, json and
// toml. The state lives in a child process (this executable started again
// in a hidden mode, with an empty environment, limited to MaxSandboxMemory more bytes of data
// and MaxSandboxCPU, killed when tai dies), so neither a runaway Go builtin
// nor a memory bomb can stall or exhaust tai: when ctx is done the child is
// killed and RunSandboxed returns at once. It returns what the chunk printed
// (at most MaxSandboxOutput bytes), its results converted to Go as FromLua
// does (and as JSON would carry them), and an error carrying a Lua
// traceback when it failed; printed output up to the failure is returned
// too. Going over the memory limit is ErrSandboxMemory.
func RunSandboxed(ctx context.Context, chunk string) (printed string, results []any, err error) {
	run, err := runSandbox(ctx, chunk)
	return run.printed, run.results, err
}

// sandboxRun is what one child run produced.
type sandboxRun struct {
	printed string
	results []any
	maxRSS  int64 // the child's peak resident memory in bytes
}

// sandboxRequest is what the parent sends the child on its stdin.
type sandboxRequest struct {
	Chunk      string `json:"chunk"`
	CPUSeconds int64  `json:"cpu_seconds"`
	Memory     int64  `json:"memory"`
}

// sandboxReply is what the child writes on fd 3 when the chunk ends.
type sandboxReply struct {
	Results   json.RawMessage `json:"results,omitempty"`
	Dropped   int             `json:"dropped,omitempty"`
	Error     string          `json:"error,omitempty"`
	Traceback string          `json:"traceback,omitempty"`
	LuaError  bool            `json:"lua_error,omitempty"`
}

func runSandbox(ctx context.Context, chunk string) (sandboxRun, error) {
	if err := ctx.Err(); err != nil {
		return sandboxRun{}, fmt.Errorf("lua chunk stopped: %w", err)
	}
	cpu := MaxSandboxCPU
	if dl, ok := ctx.Deadline(); ok {
		cpu = min(cpu, time.Until(dl))
	}
	// The child runs Lua on one thread and the collector on another, so it
	// may spend up to twice the wall time in processor time.
	cpuSeconds := max(1, 2*int64(math.Ceil(cpu.Seconds()))+1)
	req, err := json.Marshal(sandboxRequest{Chunk: chunk, CPUSeconds: cpuSeconds, Memory: MaxSandboxMemory})
	if err != nil {
		return sandboxRun{}, err
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		return sandboxRun{}, fmt.Errorf("could not start the lua sandbox: %w", err)
	}
	defer replyR.Close()

	out := &cappedWriter{max: MaxSandboxOutput}
	stderr := &cappedWriter{max: 4096}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{"tai-lua-sandbox"}
	// GORACE matters only to race-detector builds (tests), where it skips
	// the detector's one-second pause at exit.
	cmd.Env = []string{sandboxEnv + "=" + sandboxChild, "GOMAXPROCS=2", "GOTRACEBACK=none",
		strings.TrimSpace("GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0")}
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(req)
	cmd.Stdout = out
	cmd.Stderr = stderr
	cmd.ExtraFiles = []*os.File{replyW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		replyW.Close()
		return sandboxRun{}, fmt.Errorf("could not start the lua sandbox: %w", err)
	}
	replyW.Close()
	replyBuf := &cappedWriter{max: MaxSandboxResult + 4096}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(replyBuf, replyR)
	}()
	waitErr := cmd.Wait()
	<-copied

	run := sandboxRun{}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.maxRSS = ru.Maxrss * 1024
	}
	if ctx.Err() != nil {
		run.printed = out.String()
		return run, fmt.Errorf("lua chunk stopped: %w", ctx.Err())
	}
	var reply sandboxReply
	if replyBuf.dropped > 0 {
		run.printed = out.String()
		return run, fmt.Errorf("the lua chunk's results take more than %d MiB as JSON; return less", MaxSandboxResult>>20)
	}
	if replyBuf.b.Len() == 0 || json.Unmarshal([]byte(replyBuf.b.String()), &reply) != nil {
		run.printed = out.String()
		return run, childFailure(cmd.ProcessState, waitErr, stderr.b.String(), time.Duration(cpuSeconds)*time.Second)
	}
	out.dropped += reply.Dropped
	run.printed = out.String()
	switch {
	case reply.LuaError:
		return run, &Error{Message: reply.Error, Traceback: reply.Traceback}
	case reply.Error != "":
		return run, errors.New(reply.Error)
	}
	if len(reply.Results) > 0 {
		var v any
		if err := unmarshalJSON(reply.Results, &v); err != nil {
			return run, fmt.Errorf("the lua sandbox's results: %w", err)
		}
		run.results, _ = v.([]any)
	}
	return run, nil
}

// childFailure explains a sandbox process that ended without a reply.
func childFailure(ps *os.ProcessState, waitErr error, stderr string, cpu time.Duration) error {
	// Under the sandbox's RLIMIT_DATA a new thread's stack is memory too:
	// the runtime then reports pthread_create failing (EAGAIN).
	for _, oom := range []string{"out of memory", "cannot allocate memory", "failed to allocate", "failed to create new OS thread",
		"pthread_create failed", "newosproc"} {
		if strings.Contains(stderr, oom) {
			return ErrSandboxMemory
		}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU) {
		return fmt.Errorf("the lua chunk used more than %s of processor time and was stopped", cpu.Round(time.Second))
	}
	line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	if line == "" {
		return fmt.Errorf("the lua sandbox failed: %v", waitErr)
	}
	return fmt.Errorf("the lua sandbox failed: %v: %s", waitErr, line)
}

// sandboxChildMain is the whole life of the sandbox process: read the
// request, limit itself, run the chunk with print streaming to stdout, and
// write the reply to fd 3. It returns the exit status.
func sandboxChildMain() int {
	replyTo := os.NewFile(3, "reply")
	if replyTo == nil {
		fmt.Fprintln(os.Stderr, "tai: the lua sandbox mode is started by tai itself")
		return 2
	}
	var req sandboxRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "tai lua sandbox: reading the request: %v\n", err)
		return 2
	}
	if err := limitSelf(req.CPUSeconds, req.Memory); err != nil {
		fmt.Fprintf(os.Stderr, "tai lua sandbox: %v\n", err)
		return 2
	}
	out := &streamWriter{w: os.Stdout, room: MaxSandboxOutput}
	var reply sandboxReply
	results, err := runChunk(req.Chunk, out)
	if err == nil {
		reply.Results, err = json.Marshal(results)
	}
	var le *Error
	switch {
	case errors.As(err, &le):
		reply.Error, reply.Traceback, reply.LuaError = le.Message, le.Traceback, true
	case err != nil:
		reply.Error = err.Error()
	}
	reply.Dropped = out.dropped
	if err := json.NewEncoder(replyTo).Encode(reply); err != nil {
		fmt.Fprintf(os.Stderr, "tai lua sandbox: writing the reply: %v\n", err)
		return 2
	}
	return 0
}

// limitSelf caps the processor time of this process at cpuSeconds and its
// writable private memory (RLIMIT_DATA: heap, stacks, anonymous mappings,
// but not the address space Go merely reserves) at memory bytes above what
// it has now, and tells the garbage collector to work within that.
func limitSelf(cpuSeconds, memory int64) error {
	if cpuSeconds > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: uint64(cpuSeconds), Max: uint64(cpuSeconds)}); err != nil {
			return fmt.Errorf("limiting processor time: %w", err)
		}
	}
	if memory <= 0 {
		return nil
	}
	data, err := dataBytes()
	if err != nil {
		return fmt.Errorf("limiting memory: %w", err)
	}
	limit := uint64(data + memory)
	if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		return fmt.Errorf("limiting memory: %w", err)
	}
	debug.SetMemoryLimit(memory / 2)
	return nil
}

// dataBytes is this process's VmData from /proc/self/status.
func dataBytes() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmData:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmData %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmData in /proc/self/status")
}

// runChunk runs chunk in a fresh sandboxed state, print writing to w, and
// returns its results converted to Go. A Go panic inside the interpreter
// (gopher-lua raises some limits that way) is returned as an error.
func runChunk(chunk string, w io.Writer) (results []any, err error) {
	L := newSandbox()
	defer L.Close()
	defer func() {
		if r := recover(); r != nil {
			results, err = nil, fmt.Errorf("lua chunk failed: %v", r)
			if api, ok := r.(*glua.ApiError); ok {
				err = luaError(api)
			}
		}
	}()
	L.SetGlobal("print", L.NewFunction(printTo(w)))
	fn, err := L.Load(strings.NewReader(chunk), "chunk")
	if err != nil {
		return nil, luaError(err)
	}
	if err := L.CallByParam(glua.P{Fn: fn, NRet: glua.MultRet, Protect: true, Handler: tracebackHandler(L, 0)}); err != nil {
		return nil, luaError(err)
	}
	n := L.GetTop()
	results = make([]any, 0, n)
	for i := 1; i <= n; i++ {
		v, cerr := FromLua(L, L.Get(i))
		if cerr != nil {
			return nil, fmt.Errorf("result %d: %w", i, cerr)
		}
		results = append(results, v)
	}
	return results, nil
}

// newSandbox builds the restricted state RunSandboxed uses.
func newSandbox() *glua.LState {
	L := glua.NewState(glua.Options{SkipOpenLibs: true, CallStackSize: 200, RegistrySize: 1024, RegistryMaxSize: 1024 * 256, RegistryGrowStep: 1024})
	openLibs(L,
		lib{glua.BaseLibName, glua.OpenBase},
		lib{glua.TabLibName, glua.OpenTable},
		lib{glua.StringLibName, glua.OpenString},
		lib{glua.MathLibName, glua.OpenMath},
		lib{glua.CoroutineLibName, glua.OpenCoroutine},
		lib{glua.OsLibName, glua.OpenOs},
	)
	for _, name := range []string{"dofile", "loadfile", "require", "module", "_printregs", "collectgarbage", "newproxy", "getfenv", "setfenv"} {
		L.SetGlobal(name, glua.LNil)
	}
	osmod := L.NewTable()
	full := L.GetGlobal("os").(*glua.LTable)
	for _, name := range sandboxOS {
		osmod.RawSetString(name, full.RawGetString(name))
	}
	L.SetGlobal("os", osmod)
	L.SetGlobal("package", glua.LNil)
	if str, ok := L.GetGlobal("string").(*glua.LTable); ok {
		str.RawSetString("rep", L.NewFunction(cappedRep))
	}
	installMarkers(L)
	h := &Host{}
	tai := L.NewTable()
	tai.RawSetString("version", glua.LString("sandbox"))
	h.openJSON(L, tai)
	h.openTOML(L, tai)
	L.SetGlobal("tai", tai)
	return L
}

// cappedRep is string.rep refusing results over MaxSandboxString bytes.
func cappedRep(L *glua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(glua.LString(""))
		return 1
	}
	if len(s) > MaxSandboxString/n {
		L.RaiseError("string.rep: result would exceed %d bytes", MaxSandboxString)
	}
	L.Push(glua.LString(strings.Repeat(s, n)))
	return 1
}

// cappedWriter keeps at most max bytes and notes what it dropped.
type cappedWriter struct {
	b       strings.Builder
	max     int
	dropped int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	room := w.max - w.b.Len()
	if room >= len(p) {
		w.b.Write(p)
		return len(p), nil
	}
	if room > 0 {
		w.b.Write(p[:room])
	}
	w.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (w *cappedWriter) String() string {
	if w.dropped == 0 {
		return w.b.String()
	}
	return fmt.Sprintf("%s\n[output cut: %d more bytes]", w.b.String(), w.dropped)
}

// streamWriter passes at most room bytes on to w and counts the rest.
type streamWriter struct {
	w       io.Writer
	room    int
	dropped int
}

func (s *streamWriter) Write(p []byte) (int, error) {
	n := min(len(p), s.room)
	if n > 0 {
		if _, err := s.w.Write(p[:n]); err != nil {
			return 0, err
		}
		s.room -= n
	}
	s.dropped += len(p) - n
	return len(p), nil
}
