package engine

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"

	"tai/vault"
)

// LuaRunner runs a chunk of Lua in a fresh sandboxed state and returns what
// it printed and the values it returned. The lua package supplies it at
// boot; the engine registers the lua tool only when one is given.
type LuaRunner func(ctx context.Context, chunk string) (printed string, results []any, err error)

// Options tunes New. A nil *Options means defaults.
type Options struct {
	// Mode is the approval mode (--auto, --yolo); the zero value is
	// Interactive.
	Mode Mode
	// Prompter asks the person; nil means nobody can answer, so non-safe
	// calls are denied in Interactive mode and ask_user always is.
	Prompter Prompter
	// Profile names the profile to use (--profile); empty means the
	// current one (see ResolveProfile).
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
	Client *ClientOptions
	// NewClient builds the model client of a profile; nil means
	// NewChatClient with the vault and Client. Tests put a fake here.
	NewClient func(p Profile) (ChatClient, error)
	// LuaRunner, when set, backs the lua tool.
	LuaRunner LuaRunner
	// MaxSteps bounds the model calls of each agent turn; zero means
	// DefaultMaxSteps.
	MaxSteps int
}

// Engine ties a vault, the current profile and its model client, the tool
// registry, the approval mode and the prompter together. It is safe for
// concurrent use.
type Engine struct {
	store      *vault.Store
	reg        *Registry
	approver   *Approver
	dir        string
	getenv     func(string) string
	httpClient *http.Client
	newClient  func(Profile) (ChatClient, error)
	maxSteps   int

	mu      sync.Mutex
	profile Profile
	client  ChatClient // built lazily for profile
}

// New builds an Engine on store with the native tools registered and the
// profile resolved (no network I/O: a local Ollama is probed only when a
// model is first needed).
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
	e := &Engine{
		store:      store,
		approver:   NewApprover(o.Mode, o.Prompter),
		dir:        o.Dir,
		getenv:     o.Getenv,
		httpClient: o.HTTPClient,
		newClient:  o.NewClient,
		maxSteps:   o.MaxSteps,
	}
	if e.newClient == nil {
		copts := ClientOptions{}
		if o.Client != nil {
			copts = *o.Client
		}
		if copts.Getenv == nil {
			copts.Getenv = o.Getenv
		}
		e.newClient = func(p Profile) (ChatClient, error) { return NewChatClient(p, store, &copts) }
	}
	e.reg = NewRegistry(store, e.approver)
	p, err := ResolveProfile(store, o.Profile, o.Getenv)
	if err != nil {
		return nil, err
	}
	e.profile = p
	e.redactEnv()
	for _, t := range e.nativeTools(o.LuaRunner) {
		if err := e.reg.Add(t); err != nil {
			return nil, fmt.Errorf("engine: register %s: %w", t.Name, err)
		}
	}
	return e, nil
}

func (e *Engine) nativeTools(lua LuaRunner) []Tool {
	tools := []Tool{e.shellTool(), e.httpFetchTool(), e.askUserTool(), e.toolSearchTool(), e.forkTool()}
	tools = append(tools, e.fileTools()...)
	tools = append(tools, e.vaultTools()...)
	tools = append(tools, e.profileTools()...)
	if lua != nil {
		tools = append(tools, luaTool(lua))
	}
	return tools
}

// Store returns the engine's vault.
func (e *Engine) Store() *vault.Store { return e.store }

// Tools returns the tool registry (tai.tool adds to it; the MCP bridge sets
// its fallback and spec source).
func (e *Engine) Tools() *Registry { return e.reg }

// Approver returns the approver (to change mode or prompter at run time).
func (e *Engine) Approver() *Approver { return e.approver }

// Dir returns the working directory of the file and shell tools.
func (e *Engine) Dir() string { return e.dir }

// Dispatch runs a tool through the registry: approval, run, audit,
// redaction, spill. It refuses while the vault holds sealed secrets it
// cannot decrypt (see Registry.Prepare).
func (e *Engine) Dispatch(ctx context.Context, name string, args map[string]any) (Result, error) {
	return e.reg.Dispatch(ctx, name, args)
}

// Profile returns the current profile.
func (e *Engine) Profile() Profile {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.profile
}

// UseProfile makes name the current profile of this engine and remembers
// it in the vault as the current profile for later runs. The next model
// call uses it.
func (e *Engine) UseProfile(name string) (Profile, error) {
	p, err := ResolveProfile(e.store, name, e.getenv)
	if err != nil {
		return Profile{}, err
	}
	if err := SetCurrentProfile(e.store, name); err != nil {
		return Profile{}, err
	}
	e.mu.Lock()
	e.profile, e.client = p, nil
	e.mu.Unlock()
	return p, nil
}

// SwitchProfile makes name the profile of this engine only: unlike
// UseProfile, nothing is remembered in the vault, so later runs keep the
// current profile. The next model call uses it. (The profile_switch tool
// uses it: a switch the model asked for never outlives the session.)
func (e *Engine) SwitchProfile(name string) (Profile, error) {
	p, err := ResolveProfile(e.store, name, e.getenv)
	if err != nil {
		return Profile{}, err
	}
	e.mu.Lock()
	e.profile, e.client = p, nil
	e.mu.Unlock()
	return p, nil
}

// SaveProfile stores p; when it is the current profile, the engine picks
// up the change on the next model call.
func (e *Engine) SaveProfile(p Profile) error {
	if err := SaveProfile(e.store, p); err != nil {
		return err
	}
	e.redactEnv()
	e.mu.Lock()
	if e.profile.Name == p.Name {
		if q, err := LoadProfile(e.store, p.Name); err == nil {
			e.profile, e.client = q, nil
		}
	}
	e.mu.Unlock()
	return nil
}

// DeleteProfile removes the stored profile name. When it was this
// engine's profile, the engine falls back to the default resolution
// (environment, then local Ollama) for the next model call.
func (e *Engine) DeleteProfile(name string) error {
	if err := DeleteProfile(e.store, name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.profile.Name == name {
		p, err := ResolveProfile(e.store, "", e.getenv)
		if err != nil {
			return err
		}
		e.profile, e.client = p, nil
	}
	return nil
}

// Client returns the model client of the current profile, building it on
// first use.
func (e *Engine) Client() (ChatClient, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil {
		c, err := e.newClient(e.profile)
		if err != nil {
			return nil, err
		}
		e.client = c
	}
	return e.client, nil
}

// Model answers with the current profile's client, system prompt and tool
// selection; it is the ModelSource of the engine's agents.
func (e *Engine) Model(context.Context) (Model, error) {
	c, err := e.Client()
	if err != nil {
		return Model{}, err
	}
	p := e.Profile()
	return Model{Client: c, System: p.System, Tools: p.Tools, MaxTokens: p.MaxTokens}, nil
}

// NewAgent returns an agent on the engine's registry that follows the
// current profile.
func (e *Engine) NewAgent(opts *AgentOptions) *Agent {
	var o AgentOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = e.maxSteps
	}
	return NewAgent(e.reg, e.Model, &o)
}

// Complete makes one stateless completion with the current model and no
// tools (the served completions tool, tai.complete). Like a turn, it is
// refused while the vault holds sealed secrets it cannot decrypt.
func (e *Engine) Complete(ctx context.Context, msgs []Message) (Response, error) {
	if err := redactionReady(e.store); err != nil {
		return Response{}, err
	}
	m, err := e.Model(ctx)
	if err != nil {
		return Response{}, err
	}
	return m.Client.Complete(ctx, Request{Messages: msgs, MaxTokens: m.MaxTokens}, nil)
}
