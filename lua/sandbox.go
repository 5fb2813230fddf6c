package lua

import (
	"context"
	"fmt"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// Sandbox limits. Output beyond MaxSandboxOutput is cut and marked;
// string.rep results beyond MaxSandboxString are refused.
const (
	MaxSandboxOutput = 1 << 20
	MaxSandboxString = 16 << 20
)

// sandboxOS lists the os functions that only read the clock.
var sandboxOS = []string{"clock", "date", "difftime", "time"}

// RunSandboxed runs chunk, code that came from a model or the network, in a
// fresh state that has no io, no debug, no package loading or file loading
// (require, dofile, loadfile, module), no os beyond os.clock, os.date,
// os.difftime and os.time, and a tai table holding only version, json and
// toml. The run stops when ctx is done. It returns what the chunk printed
// (at most MaxSandboxOutput bytes), its results converted to Go, and an
// error carrying a Lua traceback when it failed; printed output up to the
// failure is returned too.
func RunSandboxed(ctx context.Context, chunk string) (printed string, results []any, err error) {
	L := newSandbox()
	defer L.Close()
	out := &cappedWriter{max: MaxSandboxOutput}
	L.SetGlobal("print", L.NewFunction(printTo(out)))

	fn, err := L.Load(strings.NewReader(chunk), "chunk")
	if err != nil {
		return "", nil, luaError(err)
	}
	L.SetContext(ctx)
	err = L.CallByParam(glua.P{Fn: fn, NRet: glua.MultRet, Protect: true, Handler: tracebackHandler(L, 0)})
	if err != nil {
		if ctx.Err() != nil {
			return out.String(), nil, fmt.Errorf("lua chunk stopped: %w", ctx.Err())
		}
		return out.String(), nil, luaError(err)
	}
	n := L.GetTop()
	for i := 1; i <= n; i++ {
		v, cerr := FromLua(L, L.Get(i))
		if cerr != nil {
			return out.String(), nil, fmt.Errorf("result %d: %w", i, cerr)
		}
		results = append(results, v)
	}
	return out.String(), results, nil
}

// newSandbox builds the restricted state RunSandboxed uses.
func newSandbox() *glua.LState {
	L := glua.NewState(glua.Options{SkipOpenLibs: true, CallStackSize: 200, RegistrySize: 1024, RegistryMaxSize: 1024 * 256, RegistryGrowStep: 1024})
	for _, lib := range []struct {
		name string
		open glua.LGFunction
	}{
		{glua.BaseLibName, glua.OpenBase},
		{glua.TabLibName, glua.OpenTable},
		{glua.StringLibName, glua.OpenString},
		{glua.MathLibName, glua.OpenMath},
		{glua.CoroutineLibName, glua.OpenCoroutine},
		{glua.OsLibName, glua.OpenOs},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(glua.LString(lib.name))
		L.Call(1, 0)
	}
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
