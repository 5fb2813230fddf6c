package lua

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/bridge"
	"tai/engine/tool"
	"tai/mcp"
	"tai/vault"
)

// Options configures a Host. A nil *Options means defaults.
type Options struct {
	// Version is tai.version. Empty means "dev".
	Version string
	// Profile is tai.profile, the name the REPL prompt shows. Empty means
	// "default".
	Profile string
	// ConfigDir holds the user's init.lua and lua/ folder. Empty means
	// DefaultConfigDir().
	ConfigDir string
	// StateDir holds the REPL history. Empty means DefaultStateDir().
	StateDir string
	// Clean ignores the user's init.lua and lua/ folder.
	Clean bool
	// Vault opens the vault. It is called lazily, at most once, by the first
	// tai.vault function that needs it; nil means no vault is available.
	Vault func() (*vault.Store, error)
	// Passphrase supplies the current passphrase to tai.vault.seal().
	Passphrase func() (string, error)
	// CurrentPassphrase supplies the vault's present passphrase to
	// tai.vault.unseal(); nil means none can be had.
	CurrentPassphrase func() (string, error)
	// OpenFile opens a file tai saved (tai.media.open) with the desktop's
	// opener and reports whether it did; nil, or false, when there is no
	// display to open it on.
	OpenFile func(path string) (opened bool, err error)
	// ReadHidden shows prompt on the terminal and reads a line typed
	// there without echo (tai.term.read_hidden); nil means there is no
	// terminal to read from.
	ReadHidden func(prompt string) (string, error)
	// HideKey hides key wherever the process's own command line holds it
	// (the process list, which every user of the machine reads) and reports
	// whether it was there. tai.serve calls it with its key; nil means the
	// command line is not the host's to change.
	HideKey func(key string) bool
	// Mode is the approval mode of non-safe tool calls (--auto, --yolo);
	// the zero value asks (through tai.prompter) and denies when nobody can
	// answer.
	Mode tool.Mode
	// Engine is the base of the options the engine is built with (tests set
	// Getenv, NewClient or Dir here); Mode, Profile, Prompter and, unless
	// set, LuaRunner are filled by the host. Nil means defaults.
	Engine *engine.Options
	// MCPClient is the base of the options of every MCP client the host
	// opens, bridged or through tai.mcp.connect (tests shorten
	// CallTimeout here); Version, Redact, OnWarning and OnStartup are
	// filled by the host. Nil means defaults.
	MCPClient *mcp.ClientOptions
	// Stdin, Stdout and Stderr default to the process's own. print and the
	// REPL write to Stdout; notices and errors go to Stderr.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Host is a Lua state for the user's own code (scripts, -e chunks, init.lua,
// the REPL), with the full standard library and the tai module preloaded.
type Host struct {
	// L is the host's Lua state, for bindings that later packages add. Use
	// it only from the goroutine that runs the host (or under onLua).
	L      *glua.LState
	opts   Options
	tai    *glua.LTable
	baton  chan struct{}    // held by whoever uses L (see exec.go)
	exit   func(status int) // os.Exit; Run calls it on a second Ctrl-C
	runs   runState         // the runs Interrupt can stop
	closed bool

	// The parts the bindings keep, each described in the file of the
	// surface that uses it.
	vault       hostVault           // vault.go
	engine      hostEngine          // engine.go
	tools       luaTools            // tools.go
	chat        chatState           // chat.go
	prompter    prompterState       // prompter.go
	term        termState           // term.go
	commands    map[string]*command // command.go
	clients     *clientSet          // mcp.go: tai.mcp.connect sessions, closed with the host
	bridge      *bridge.Bridge      // bridge.go: registered MCP servers, built with the engine
	modules     moduleStates        // normalize.go, resolve.go
	deny        denyList            // sandboxdeny.go: tai.sandbox.deny
	runtimeEnv  runtimeEnvList      // sandboxdeny.go: tai.sandbox.runtime_env
	credentials credentialList      // sandboxdeny.go: tai.vault.credential_words
	families    modelFamilies       // profiles.go: tai.model_families
	media       shownMedia          // media.go: tai.media
	notices     noticeQueue         // notice.go: lines for tai.notify from other goroutines
	sampling    samplingLimit       // mcpsample.go: tai.mcp.sampling_limit
}

// runState is the stack of interruptible runs (a top-level Run, a
// tai.term.protect), innermost last; mu guards it, as Interrupt may be
// called from any goroutine.
type runState struct {
	mu      sync.Mutex
	cancels []runCancel
	count   uint64 // ids of interruptible runs
}

// runCancel is one run that Interrupt can stop.
type runCancel struct {
	id     uint64
	cancel context.CancelFunc
}

// ErrInterrupted reports a run stopped by Interrupt (Ctrl-C).
var ErrInterrupted = errors.New("interrupted")

// DefaultConfigDir returns $XDG_CONFIG_HOME/tai, else ~/.config/tai.
func DefaultConfigDir() string { return xdgDir("XDG_CONFIG_HOME", ".config") }

// DefaultStateDir returns $XDG_STATE_HOME/tai, else ~/.local/state/tai.
func DefaultStateDir() string { return xdgDir("XDG_STATE_HOME", filepath.Join(".local", "state")) }

func xdgDir(env, fallback string) string {
	if d := os.Getenv(env); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "tai")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return filepath.Join(home, fallback, "tai")
}

// New builds a Host: opens the standard libraries, installs the module
// loader and the tai module. It opens no files; the vault is opened on first
// use.
func New(opts *Options) (*Host, error) {
	h := &Host{
		commands: map[string]*command{},
		chat:     chatState{agents: map[chatKey]*engine.Agent{}, sessions: map[string]*engine.Session{}, busy: map[*engine.Agent]bool{}},
		baton:    make(chan struct{}, 1),
		notices:  noticeQueue{ready: make(chan struct{}, 1)},
		clients:  &clientSet{},
		exit:     os.Exit,
	}
	h.baton <- struct{}{} // the goroutine that runs the host holds the state
	if opts != nil {
		h.opts = *opts
	}
	h.engine.profileFlag = h.opts.Profile
	if h.opts.Version == "" {
		h.opts.Version = "dev"
	}
	if h.opts.Profile == "" {
		h.opts.Profile = "default"
	}
	if h.opts.ConfigDir == "" {
		h.opts.ConfigDir = DefaultConfigDir()
	}
	if h.opts.StateDir == "" {
		h.opts.StateDir = DefaultStateDir()
	}
	if h.opts.Stdin == nil {
		h.opts.Stdin = os.Stdin
	}
	if h.opts.Stdout == nil {
		h.opts.Stdout = os.Stdout
	}
	if h.opts.Stderr == nil {
		h.opts.Stderr = os.Stderr
	}

	L := glua.NewState(glua.Options{SkipOpenLibs: true})
	openLibs(L,
		lib{glua.LoadLibName, glua.OpenPackage},
		lib{glua.BaseLibName, glua.OpenBase},
		lib{glua.TabLibName, glua.OpenTable},
		lib{glua.IoLibName, glua.OpenIo},
		lib{glua.OsLibName, glua.OpenOs},
		lib{glua.StringLibName, glua.OpenString},
		lib{glua.MathLibName, glua.OpenMath},
		lib{glua.DebugLibName, glua.OpenDebug},
		lib{glua.CoroutineLibName, glua.OpenCoroutine},
	)
	h.L = L
	// os.exit makes the vault's audit entries durable first, as a clean
	// exit does.
	if osTable, ok := L.GetGlobal("os").(*glua.LTable); ok {
		osTable.RawSetString("exit", L.NewFunction(func(L *glua.LState) int {
			code := L.OptInt(1, 0)
			h.syncVault()
			L.Close()
			os.Exit(code)
			return 0
		}))
	}
	installMarkers(L)
	h.installStdin(L)
	L.SetGlobal("print", L.NewFunction(printTo(h.opts.Stdout)))
	h.installLoader()

	h.tai = L.NewTable()
	h.tai.RawSetString("version", glua.LString(h.opts.Version))
	profileIndex := L.NewTable()
	profileIndex.RawSetString("__index", L.NewFunction(h.luaProfileField))
	L.SetMetatable(h.tai, profileIndex)
	for _, open := range []func(*glua.LState, *glua.LTable){
		h.openJSON,
		h.openTOML,
		h.openVault,
		h.openCommands,
		h.openTerm,
		h.openEngine,
		h.openTools,
		h.openChat,
		h.openPrompter,
		h.openProfiles,
		h.openConversation,
		h.openFiles,
		openText,
		h.openMCP,
		h.openBridge,
		h.openNormalize,
		h.openServe,
		h.openPermissions,
		h.openSandbox,
		h.openHelp,
		h.openMedia,
	} {
		open(L, h.tai)
	}
	L.SetGlobal("tai", h.tai)
	L.PreloadModule("tai", func(L *glua.LState) int {
		L.Push(h.tai)
		return 1
	})
	return h, nil
}

// Module returns the tai table, for bindings added by later packages.
func (h *Host) Module() *glua.LTable { return h.tai }

// Close closes the MCP sessions tai.mcp.connect opened, then releases the
// Lua state and the vault if it was opened. Later calls do nothing.
func (h *Host) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	h.removeMedia()
	if h.bridge != nil {
		h.bridge.Close()
	}
	h.clients.closeAll()
	h.modules.rules.close()
	h.modules.resolve.close()
	h.L.Close()
	if h.vault.store != nil {
		return h.vault.store.Close()
	}
	return nil
}

// printTo returns a print that writes to w, as the standard one does to
// stdout.
func printTo(w io.Writer) glua.LGFunction {
	return func(L *glua.LState) int {
		var b strings.Builder
		for i := 1; i <= L.GetTop(); i++ {
			if i > 1 {
				b.WriteByte('\t')
			}
			b.WriteString(L.ToStringMeta(L.Get(i)).String())
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
		return 0
	}
}

// Interrupt stops the innermost interruptible run (a top-level Run, or a
// function passed to tai.term.protect) as Ctrl-C would. It returns whether
// there was one to stop. It is safe to call from any goroutine.
func (h *Host) Interrupt() bool {
	_, ok := h.interrupt()
	return ok
}

// interrupt is Interrupt, also returning the id of the run it stopped.
func (h *Host) interrupt() (uint64, bool) {
	h.runs.mu.Lock()
	defer h.runs.mu.Unlock()
	if len(h.runs.cancels) == 0 {
		return 0, false
	}
	top := h.runs.cancels[len(h.runs.cancels)-1]
	top.cancel()
	return top.id, true
}

// running reports whether the interruptible run id has not returned yet.
func (h *Host) running(id uint64) bool {
	h.runs.mu.Lock()
	defer h.runs.mu.Unlock()
	for _, c := range h.runs.cancels {
		if c.id == id {
			return true
		}
	}
	return false
}

// interruptible runs call with L's context replaced by a child of parent
// that Interrupt cancels, and restores the previous context afterwards.
func (h *Host) interruptible(parent context.Context, call func() error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	h.runs.mu.Lock()
	h.runs.count++
	h.runs.cancels = append(h.runs.cancels, runCancel{id: h.runs.count, cancel: cancel})
	h.runs.mu.Unlock()
	defer func() {
		h.runs.mu.Lock()
		h.runs.cancels = h.runs.cancels[:len(h.runs.cancels)-1]
		h.runs.mu.Unlock()
	}()

	prev := h.L.Context()
	h.L.SetContext(ctx)
	defer func() {
		if prev != nil {
			h.L.SetContext(prev)
		} else {
			h.L.RemoveContext()
		}
	}()
	err := call()
	if err != nil && ctx.Err() != nil {
		if parent.Err() != nil {
			return fmt.Errorf("%w: %w", parent.Err(), luaError(err))
		}
		return ErrInterrupted
	}
	return luaError(err)
}

// Error is a Lua error with its traceback.
type Error struct {
	Message   string
	Traceback string // "stack traceback:\n\t…", empty when Lua gave none
}

// Error returns the message, then the traceback on the lines below it.
func (e *Error) Error() string {
	if e.Traceback == "" {
		return e.Message
	}
	return e.Message + "\n" + e.Traceback
}

// luaError turns gopher-lua's *ApiError into an *Error; other errors pass
// through.
func luaError(err error) error {
	var api *glua.ApiError
	if errors.As(err, &api) {
		msg := ""
		if api.Object != nil {
			msg = api.Object.String()
		} else if api.Cause != nil {
			msg = api.Cause.Error()
		}
		msg, tb := splitTraceback(msg)
		if tb == "" {
			tb = api.StackTrace
		}
		return &Error{Message: msg, Traceback: tb}
	}
	return err
}

// DoString runs chunk (named name in errors and tracebacks) in the host's
// state, interruptibly, and returns its results converted to Go.
func (h *Host) DoString(ctx context.Context, chunk, name string) ([]any, error) {
	fn, err := h.L.Load(strings.NewReader(chunk), name)
	if err != nil {
		return nil, luaError(err)
	}
	return h.Call(ctx, fn)
}

// Call calls fn with args in the host's state, interruptibly, and returns
// its results converted to Go.
func (h *Host) Call(ctx context.Context, fn glua.LValue, args ...glua.LValue) ([]any, error) {
	L := h.L
	base := L.GetTop()
	err := h.interruptible(ctx, func() (err error) {
		defer recoverLua(L, base, &err)
		return L.CallByParam(glua.P{Fn: fn, NRet: glua.MultRet, Protect: true, Handler: tracebackHandler(L, 0)}, args...)
	})
	if err != nil {
		return nil, err
	}
	n := L.GetTop() - base
	out := make([]any, n)
	for i := 0; i < n; i++ {
		v, cerr := FromLua(L, L.Get(base+1+i))
		if cerr != nil {
			L.SetTop(base)
			return nil, fmt.Errorf("result %d: %w", i+1, cerr)
		}
		out[i] = v
	}
	L.SetTop(base)
	return out, nil
}

// recoverLua, deferred around a protected call made with the stack at
// base, turns a Go panic that escaped it into *err and resets the stack.
// gopher-lua panics past its own protection when a limit is hit again
// while the error is handled (a registry overflow from unpack({}, 1, 1e8)).
func recoverLua(L *glua.LState, base int, err *error) {
	r := recover()
	if r == nil {
		return
	}
	L.SetTop(base)
	if api, ok := r.(*glua.ApiError); ok {
		*err = luaError(api)
		return
	}
	*err = fmt.Errorf("lua: %v", r)
}

// tracebackHandler returns a message handler that appends the Lua traceback
// at the point of the error, where it is still available. skip is the
// number of frames that were on the stack when the protected call was made
// (stackFrames at that point); they belong to the caller and are left out.
func tracebackHandler(L *glua.LState, skip int) *glua.LFunction {
	return L.NewFunction(func(L *glua.LState) int {
		msg := L.Get(1)
		text := L.ToStringMeta(msg).String()
		frames := stackFrames(L)
		if len(frames) > 0 {
			frames = frames[1:] // the handler itself
		}
		if skip <= len(frames) {
			frames = frames[:len(frames)-skip]
		}
		var b strings.Builder
		b.WriteString(text)
		b.WriteString("\nstack traceback:")
		for i, f := range frames {
			if len(frames) > 22 && i >= 20 && i < len(frames)-1 {
				if i == 20 {
					fmt.Fprintf(&b, "\n\t... (%d more)", len(frames)-21)
				}
				continue
			}
			b.WriteString("\n\t")
			b.WriteString(f)
		}
		L.Push(glua.LString(b.String()))
		return 1
	})
}

// stackFrames describes the frames of the running call chain, innermost
// first, down to the frame the chain started from.
func stackFrames(L *glua.LState) []string {
	var out []string
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sln", dbg, glua.LNil); err != nil {
			break
		}
		where := dbg.Source
		if dbg.CurrentLine > 0 {
			where = fmt.Sprintf("%s:%d", dbg.Source, dbg.CurrentLine)
		}
		var what string
		switch {
		case dbg.What == "G":
			where = "[Go]"
			what = "in a Go function"
			if dbg.Name != "" {
				what = fmt.Sprintf("in function '%s'", dbg.Name)
			}
		case dbg.LineDefined == 0:
			what = "in main chunk"
		case dbg.Name != "" && dbg.Name != "main chunk":
			what = fmt.Sprintf("in function '%s'", dbg.Name)
		default:
			what = fmt.Sprintf("in function <%s:%d>", dbg.Source, dbg.LineDefined)
		}
		out = append(out, where+": "+what)
		if dbg.What == "main" { // the first frame of this chain
			break
		}
	}
	return out
}

// splitTraceback separates a handler-produced message from its traceback.
func splitTraceback(msg string) (string, string) {
	if i := strings.LastIndex(msg, "\nstack traceback:"); i >= 0 {
		return msg[:i], msg[i+1:]
	}
	return msg, ""
}

// lib is one standard library to open: its name and its opener.
type lib struct {
	name string
	open glua.LGFunction
}

// syncVault makes the audit entries of the vault, when one is open,
// durable now (before an exit that skips Close).
func (h *Host) syncVault() {
	if h.vault.store != nil {
		_ = h.vault.store.Sync()
	}
}

// openLibs opens libs in L, in order, as glua.OpenLibs does for all of them.
func openLibs(L *glua.LState, libs ...lib) {
	for _, l := range libs {
		L.Push(L.NewFunction(l.open))
		L.Push(glua.LString(l.name))
		L.Call(1, 0)
	}
}
