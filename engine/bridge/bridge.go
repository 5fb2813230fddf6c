package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/github"
	"tai/mcp/oauth"
	"tai/vault"
)

// Normalizer turns pasted text (a JSON or TOML config, a fragment, one
// bare entry) into canonical entries and notes; name, when given, names a
// bare entry. The lua package supplies it from normalize.lua at boot
// (config.Normalize with the Lua repair rules).
type Normalizer func(text, name string) ([]mcp.Entry, []config.Note, error)

// Resolver turns a GitHub repository URL into one entry, its notes and
// where it was found, verifying and storing nothing. The lua package
// supplies it from resolve.lua at boot.
type Resolver func(ctx context.Context, url string) (github.Resolution, error)

// Expander resolves the ${VAR} references of an entry through lookup and
// returns the entry with them expanded and the names it could not resolve.
type Expander func(e mcp.Entry, lookup func(string) (string, bool)) (mcp.Entry, []string)

// Options tunes New. A nil *Options means defaults.
type Options struct {
	// Normalize reads pasted configs for Add and Import; nil means Add
	// takes only stored server names.
	Normalize Normalizer
	// Resolve reads a GitHub repository for Add; nil means Add refuses
	// GitHub URLs.
	Resolve Resolver
	// Expand resolves ${VAR} at spawn time; nil means config.Expand.
	Expand Expander
	// Dir is the folder ${workspaceFolder} and its kind name; empty means
	// the process's working directory.
	Dir string
	// Profile returns the profile whose enablement decides what
	// select_tools offers (the main session's); nil means "default". A
	// call whose tool.Caller names a profile checks that one.
	Profile func() string
	// Getenv reads the environment for ${VAR}; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
	// Clean makes text from a server (its stderr) safe for a terminal; nil
	// means it is shown as it is.
	Clean func(string) string
	// Client is the base of every connection's options (version,
	// timeouts, stdio base environment); Redact and OnToolsChanged are set
	// by the bridge.
	Client *mcp.ClientOptions
	// Deny returns the folders no stdio server is granted, besides the
	// vault's, which never is (tai.sandbox.deny); it is asked at each
	// start, so a change of the list applies to the next one. nil, or a
	// nil answer, means sandbox.DefaultDeny().
	Deny func() []string
	// RuntimeEnv returns the environment variables that change what a
	// runtime runs (tai.sandbox.runtime_env): an entry setting one is
	// warned about at consent, and refused when a model adds it with
	// nobody asked. nil, or a nil answer, means sandbox.RuntimeEnv().
	RuntimeEnv func() []string
	// Person returns who can finish an OAuth login in this process; nil
	// means nobody can (logins fail naming /mcp login).
	Person PersonFunc
	// CredentialWords returns the words that mark a variable's name as a
	// credential's (tai.vault.credential_words); nil, or a nil answer,
	// means secret.CredentialWords.
	CredentialWords func() []string
	// OAuthHints word what a person does next after a login error, in the
	// front end's terms (its REPL's commands); none when empty.
	OAuthHints oauth.Hints
	// Screen lays out the MCP consent screen (stdlib/consent.lua); nil
	// means no server can be consented to but under --yolo.
	Screen ScreenFunc
	// Sample has the person's current model answer a server's sampling
	// request (engine.Engine.Sample); nil declares no sampling, and the
	// server's requests get -32601. SampleModel names that model for the
	// person. SamplingLimit returns how many sampling requests a server
	// may make a minute (nil or 0: DefaultSamplingLimit).
	Sample        SampleFunc
	SampleModel   func(ctx context.Context) string
	SamplingLimit func() int
	// OpenURL opens a URL a server's elicitation points at, once the
	// person agreed; nil means oauth.OpenBrowser, the opener /login uses.
	OpenURL func(url string) error
	// URLWait bounds the wait for a server's
	// notifications/elicitation/complete before a call it refused with
	// -32042 is sent again (zero: DefaultURLWait).
	URLWait time.Duration
	// MaxServers and MaxTools override mcp.MCP_MAX_SERVERS and
	// mcp.MCP_MAX_TOOLS (tests); zero means the caps.
	MaxServers, MaxTools int
}

// Bridge owns the registered servers of one vault for one process: their
// snapshot, the connections opened so far and the mcp_* tools. It is safe
// for concurrent use.
type Bridge struct {
	reg   *tool.Registry
	store *vault.Store
	opts  Options

	snap   atomic.Pointer[snapshot]
	loadMu sync.Mutex // one vault read at a time

	mu     sync.Mutex
	conns  map[string]*conn
	auths  map[string]mcp.Authorizer // per server, for the step-up limit
	closed bool
	// declined holds, per server and tool, the hash of the definition a
	// person declined when asked unprompted, so a server announcing
	// changes before every call does not put it to them again.
	declined map[[2]string]string
	// outputs holds, per server and tool, the outputSchema of the last
	// listing, to check structuredContent against.
	outputs map[[2]string]json.RawMessage
}

// New returns a bridge over store, installs it as reg's Fallback and
// SpecSource, and registers the mcp_* agent tools in reg. It reads
// nothing yet: the vault is read on the first selection or call.
func New(reg *tool.Registry, store *vault.Store, opts *Options) (*Bridge, error) {
	if reg == nil || store == nil {
		return nil, errors.New("bridge: New needs a registry and a vault store")
	}
	b := &Bridge{reg: reg, store: store, conns: map[string]*conn{}, declined: map[[2]string]string{}, auths: map[string]mcp.Authorizer{}}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.Getenv == nil {
		b.opts.Getenv = os.LookupEnv
	}
	if b.opts.Expand == nil {
		b.opts.Expand = config.Expand
	}
	if b.opts.Dir == "" {
		if wd, err := os.Getwd(); err == nil {
			b.opts.Dir = wd
		}
	}
	if b.opts.MaxServers <= 0 {
		b.opts.MaxServers = mcp.MCP_MAX_SERVERS
	}
	if b.opts.MaxTools <= 0 {
		b.opts.MaxTools = mcp.MCP_MAX_TOOLS
	}
	for _, t := range append(b.agentTools(), b.resourceTools()...) {
		if err := reg.Add(t); err != nil {
			return nil, fmt.Errorf("bridge: register %s: %w", t.Name, err)
		}
	}
	reg.SetFallback(b.fallback)
	reg.SetSpecSource(b.specs)
	return b, nil
}

// Close closes every connection the bridge opened (a stdio server: stdin
// closed, a wait, SIGTERM, SIGKILL) and unhooks it from the registry. Later
// calls of bridged tools fail.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	conns := b.conns
	b.conns = map[string]*conn{}
	b.mu.Unlock()
	b.reg.SetFallback(nil)
	b.reg.SetSpecSource(nil)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
	return nil
}

func (b *Bridge) profile() string {
	if b.opts.Profile != nil {
		if p := b.opts.Profile(); p != "" {
			return p
		}
	}
	return "default"
}

// profileFor returns the profile of the caller in ctx, else the bridge's.
func (b *Bridge) profileFor(ctx context.Context) string {
	if p := tool.CallerFrom(ctx).ProfileName(); p != "" {
		return p
	}
	return b.profile()
}

// approver returns the approver of the caller in ctx (spawn consent,
// grants, removal), else the registry's own.
func (b *Bridge) approver(ctx context.Context) *tool.Approver {
	return b.reg.ApproverFor(ctx)
}

// clean makes s safe to show on a terminal (Options.Clean).
func (b *Bridge) clean(s string) string {
	if b.opts.Clean != nil {
		return b.opts.Clean(s)
	}
	return s
}

// shown is s as a person may read it: every secret the vault knows
// redacted, then made safe to show.
func (b *Bridge) shown(s string) string { return b.clean(b.store.Redact(s)) }

// notRegistered is the error for a server name no server is stored under.
func notRegistered(server string) error {
	return fmt.Errorf("mcp server %q is not registered: mcp_list shows the servers", server)
}

// current returns the snapshot, reading the vault when there is none yet
// or the profile changed.
func (b *Bridge) current() (*snapshot, error) {
	if s := b.snap.Load(); s != nil && s.profile == b.profile() {
		return s, nil
	}
	return b.reload()
}

// reload reads every server from the vault and swaps the snapshot.
// The rows are decoded only when the vault's servers generation moved
// (a change by any process); otherwise the snapshot is kept, or rebuilt
// from the rows it holds when the profile changed.
func (b *Bridge) reload() (*snapshot, error) {
	b.loadMu.Lock()
	defer b.loadMu.Unlock()
	old := b.snap.Load()
	var gen uint64
	if old != nil {
		gen = old.gen
	}
	states, cur, changed, err := b.store.ServerStatesSince(gen)
	if err != nil {
		return nil, err
	}
	profile := b.profile()
	if !changed {
		if old.profile == profile && old.maxTools == b.opts.MaxTools {
			return old, nil
		}
		states = old.states
	}
	s := newSnapshot(states, profile, b.opts.MaxTools)
	s.gen = cur
	b.snap.Store(s)
	return s, nil
}

// specs is the registry's SpecSource: the offered tools of the servers
// enabled for profile (empty: the bridge's), from the vault's cache (never
// a spawn). It reads the vault once per selection, so a change made by
// another process shows on the next turn.
func (b *Bridge) specs(profile string) []llm.ToolSpec {
	s, err := b.reload()
	if err != nil {
		if s = b.snap.Load(); s == nil {
			return nil
		}
	}
	if profile == "" || profile == s.profile {
		return s.specs
	}
	return s.specsFor(profile)
}

// fallback is the registry's Fallback: every bridged name of every stored
// server resolves, so a call of a tool that is not offered (disabled,
// withheld, denied) is answered with the reason instead of "unknown tool".
func (b *Bridge) fallback(name string) (tool.Tool, bool) {
	s, err := b.current()
	if err != nil {
		return tool.Tool{}, false
	}
	bt, ok := s.byName[name]
	if !ok {
		// A server added by another process since the snapshot.
		if s, err = b.reload(); err != nil {
			return tool.Tool{}, false
		}
		if bt, ok = s.byName[name]; !ok {
			return tool.Tool{}, false
		}
	}
	return b.tool(bt), true
}

// tool returns the engine tool that runs bt. A tool that cannot be
// called whatever the profile (withheld, refused by the entry's lists,
// over MCP_MAX_TOOLS) answers why without asking for approval: it never
// reaches the server.
func (b *Bridge) tool(bt *bridged) tool.Tool {
	server, toolName := bt.server, bt.tool
	if why := bt.reason; why != "" {
		return tool.Tool{
			Name: bt.name, Description: bt.description, Parameters: bt.params, Origin: server + "/" + toolName, Safe: true,
			Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
				if s, err := b.current(); err == nil && s.servers[server] != nil {
					return b.refused(ctx, s.servers[server], why), nil
				}
				tool.Note(ctx, why)
				return tool.ErrorResult("%s", why), nil
			},
		}
	}
	return tool.Tool{
		Name:        bt.name,
		Description: bt.description,
		Parameters:  bt.params,
		Origin:      server + "/" + toolName,
		Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
			return b.call(ctx, server, toolName, args)
		},
		Unavailable: func(ctx context.Context) string {
			s, err := b.current()
			if err != nil {
				return "" // the call finds out, and says why
			}
			if st := s.servers[server]; st != nil {
				if profile := b.profileFor(ctx); !st.profiles[profile] {
					return st.disabledFor(profile)
				}
			}
			return ""
		},
	}
}
