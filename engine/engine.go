package engine

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"tai/engine/builtin"
	"tai/engine/llm"
	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/vault"
)

// Options tunes New. A nil *Options means defaults.
type Options struct {
	// Mode is the approval mode (--auto, --yolo) of the sessions made
	// without an approver of their own; the zero value is Interactive.
	Mode tool.Mode
	// Prompter asks the person for those sessions; nil means nobody can
	// answer, so non-safe calls are denied in Interactive mode and
	// ask_user always is.
	Prompter tool.Prompter
	// Profile names the profile sessions start on (--profile); empty
	// means the current one (see ResolveProfile).
	Profile string
	// Dir is the working directory of the file and shell tools; empty
	// means the process's.
	Dir string
	// Getenv reads the environment (provider keys, TAI_MODEL); nil means
	// os.Getenv.
	Getenv func(string) string
	// HTTPClient is used by http_fetch; nil means a default client.
	HTTPClient *http.Client
	// Client tunes the model clients built from profiles.
	Client *llm.ClientOptions
	// NewClient builds the model client of a profile; nil means
	// NewChatClient with the vault and Client. Tests put a fake here.
	NewClient func(p llm.Profile) (llm.ChatClient, error)
	// LuaRunner, when set, backs the lua tool.
	LuaRunner builtin.LuaRunner
	// MaxSteps bounds the model calls of each agent turn; zero means
	// DefaultMaxSteps.
	MaxSteps int
	// PassEnv names variables shell commands may see although their names
	// look like credentials (see Engine.PassEnv).
	PassEnv []string
	// SandboxDeny returns the folders shell commands may not read besides
	// the vault's (tai.sandbox.deny); nil, or a nil answer, means
	// sandbox.DefaultDeny. It is asked at each command, so a change of
	// the list applies to the next one.
	SandboxDeny func() []string
	// CredentialWords returns the words that mark a variable's name as a
	// credential's (tai.vault.credential_words, see secret.Credentials);
	// nil, or a nil answer, means secret.CredentialWords. It is asked at
	// each command.
	CredentialWords func() []string
}

// Engine is what every session shares: the vault, the tool registry, the
// working directory and how model clients are built. Each conversation is a
// Session of it (NewSession) with its own profile, model client, approver
// and history. It is safe for concurrent use.
type Engine struct {
	store      *vault.Store
	reg        *tool.Registry
	dir        string
	getenv     func(string) string
	httpClient *http.Client
	newClient  func(llm.Profile) (llm.ChatClient, error)
	maxSteps   int

	// What sessions start with when their options name nothing else.
	profileFlag string
	profile     llm.Profile // resolved at New: the default profile (see Profile)
	mode        tool.Mode
	prompter    tool.Prompter
	rules       tool.Rules // the permission rules kept for dir

	// profileGen counts the profile changes made through the engine
	// (SaveProfile, DeleteProfile), so sessions re-read theirs.
	profileGen atomic.Uint64

	passMu  sync.Mutex
	passEnv map[string]bool // Options.PassEnv and Engine.PassEnv

	sandboxDeny func() []string // Options.SandboxDeny
	credWords   func() []string // Options.CredentialWords

	// shellLifted is set while the person has lifted the shell's sandbox
	// for the rest of this process (see LiftShellSandbox).
	shellLifted atomic.Bool
	// gitGuard puts back the git config and hooks the model's sandboxed
	// commands change, before a command runs outside the sandbox.
	gitGuard sandbox.Guard
	// instructions, when set, is what follows a profile's system prompt
	// (see SetInstructions).
	instructions atomic.Pointer[func(profile string) string]
}

// SetInstructions installs what follows every session's system prompt on
// profile: the instructions of the MCP servers enabled there (the
// bridge's SystemPrompt). nil removes it.
func (e *Engine) SetInstructions(fn func(profile string) string) {
	if fn == nil {
		e.instructions.Store(nil)
		return
	}
	e.instructions.Store(&fn)
}

// withInstructions is system followed by the instructions of the
// servers enabled for profile, when any.
func (e *Engine) withInstructions(system, profile string) string {
	fn := e.instructions.Load()
	if fn == nil {
		return system
	}
	extra := (*fn)(profile)
	switch {
	case extra == "":
		return system
	case system == "":
		return extra
	}
	return system + "\n\n" + extra
}

// New builds an Engine on store with the native tools registered and the
// profile resolved (no network I/O: a local Ollama is probed only when a
// model is first needed). An unknown Options.Profile is an error wrapping
// ErrProfileNotFound.
func New(store *vault.Store, opts *Options) (*Engine, error) {
	if store == nil {
		return nil, fmt.Errorf("engine: New needs an open vault store")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("engine: working directory: %w", err)
		}
		o.Dir = wd
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	ruleDir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("engine: working directory: %w", err)
	}
	e := &Engine{
		rules:       tool.KeptRules(store, ruleDir),
		store:       store,
		dir:         o.Dir,
		getenv:      o.Getenv,
		httpClient:  o.HTTPClient,
		newClient:   o.NewClient,
		maxSteps:    o.MaxSteps,
		profileFlag: o.Profile,
		mode:        o.Mode,
		prompter:    o.Prompter,
		sandboxDeny: o.SandboxDeny,
		credWords:   o.CredentialWords,
	}
	if e.newClient == nil {
		copts := llm.ClientOptions{}
		if o.Client != nil {
			copts = *o.Client
		}
		if copts.Getenv == nil {
			copts.Getenv = o.Getenv
		}
		e.newClient = func(p llm.Profile) (llm.ChatClient, error) { return llm.NewChatClient(p, store, &copts) }
	}
	// Calls made outside of any session have nobody to ask: non-safe tools
	// are denied.
	e.reg = tool.NewRegistry(store, tool.NewApprover(tool.Interactive, nil))
	p, err := llm.ResolveProfile(store, o.Profile, o.Getenv)
	if err != nil {
		return nil, err
	}
	e.profile = p
	if err := e.PassEnv(o.PassEnv...); err != nil {
		return nil, err
	}
	e.redactEnv()
	for _, t := range e.nativeTools(o.LuaRunner) {
		if err := e.reg.Add(t); err != nil {
			return nil, fmt.Errorf("engine: register %s: %w", t.Name, err)
		}
	}
	return e, nil
}

func (e *Engine) nativeTools(lua builtin.LuaRunner) []tool.Tool {
	tools := []tool.Tool{
		builtin.Shell{Dir: e.dir, Store: e.store, Env: e.shellEnv, Policy: e.shellPolicy, Lifted: e.shellLift, Guard: &e.gitGuard}.Tool(),
		builtin.Fetch{Client: e.httpClient, Store: e.store}.Tool(),
		builtin.AskUser{Registry: e.reg}.Tool(),
		e.toolSearchTool(), e.forkTool(),
	}
	tools = append(tools, builtin.Files{Dir: e.dir, Store: e.store}.Tools()...)
	tools = append(tools, builtin.Vault{Store: e.store}.Tools()...)
	tools = append(tools, e.profileTools()...)
	if lua != nil {
		tools = append(tools, builtin.Lua{Run: lua, Redact: e.reg.RedactValue}.Tool())
	}
	return tools
}

// Store returns the engine's vault.
func (e *Engine) Store() *vault.Store { return e.store }

// Tools returns the tool registry (tai.tool adds to it; the MCP bridge sets
// its fallback and spec source).
func (e *Engine) Tools() *tool.Registry { return e.reg }

// Dir returns the working directory of the file and shell tools.
func (e *Engine) Dir() string { return e.dir }

// Profile returns the profile resolved when the engine was built (the
// --profile flag's, else the vault's current one then). Sessions have
// their own: see Session.Profile.
func (e *Engine) Profile() llm.Profile { return e.profile }

// SaveProfile stores p; sessions on that profile pick up the change on
// their next model call.
func (e *Engine) SaveProfile(p llm.Profile) error {
	if err := llm.SaveProfile(e.store, p); err != nil {
		return err
	}
	e.redactEnv()
	e.profileGen.Add(1)
	return nil
}

// DeleteProfile removes the stored profile name. Sessions on it fall back
// to the default resolution (the vault's current profile, the environment,
// a local Ollama) for their next model call.
func (e *Engine) DeleteProfile(name string) error {
	if err := llm.DeleteProfile(e.store, name); err != nil {
		return err
	}
	e.profileGen.Add(1)
	return nil
}
