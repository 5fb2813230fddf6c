package engine

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
)

// SessionOptions tunes Engine.NewSession. A nil *SessionOptions means
// defaults.
type SessionOptions struct {
	// Name identifies the session in the audit trail of its tool calls
	// (a served session's "mcp:…"); empty for the local one.
	Name string
	// Profile names the profile the session starts on; empty means the
	// engine's (Options.Profile, else the vault's current profile).
	Profile string
	// Approver decides the session's non-safe tool calls and answers its
	// questions; nil means a new approver in the engine's Options.Mode
	// asking through Options.Prompter, which runs the calls the permission
	// rules kept for Options.Dir cover without asking (see KeptRules).
	// Give each session its own: its mode and prompter are the session's.
	Approver *tool.Approver
	// Agent tunes the session's own conversation (Session.Agent).
	Agent *AgentOptions
}

// Session is one conversation context on an Engine: the REPL, a `tai -p`
// turn, tai.chat, and each served MCP session are sessions. A session owns
// its profile, model client, approver (with its mode) and the history of
// its agent; nothing it does reaches another session except what it writes
// to the vault (a saved or deleted profile, secrets, records, the current
// profile remembered by UseProfile). It is safe for concurrent use; its
// agent runs one turn at a time.
type Session struct {
	eng      *Engine
	name     string
	approver *tool.Approver
	created  time.Time
	agent    *Agent
	// profileName is the Caller's Profile of the calls made under the
	// session, made once.
	profileName func() string

	mu      sync.Mutex
	profile llm.Profile
	gen     uint64         // the engine's profile generation profile was resolved at
	client  llm.ChatClient // built lazily for profile
}

// NewSession returns a session on the engine with its own profile,
// approver and agent. It resolves the profile (no network I/O: the model
// client is built on first use) and fails when the profile is unknown.
func (e *Engine) NewSession(opts *SessionOptions) (*Session, error) {
	var o SessionOptions
	if opts != nil {
		o = *opts
	}
	name := o.Profile
	if name == "" {
		name = e.profileFlag
	}
	gen := e.profileGen.Load()
	p, err := llm.ResolveProfile(e.store, name, e.getenv)
	if err != nil {
		return nil, err
	}
	if o.Approver == nil {
		o.Approver = tool.NewApprover(e.mode, e.prompter)
		o.Approver.SetRules(e.rules)
	}
	s := &Session{eng: e, name: o.Name, approver: o.Approver, created: time.Now(), profile: p, gen: gen}
	s.profileName = func() string { return s.Profile().Name }
	s.agent = s.NewAgent(o.Agent)
	return s, nil
}

// Engine returns the engine the session belongs to.
func (s *Session) Engine() *Engine { return s.eng }

// Name returns the session's name (SessionOptions.Name).
func (s *Session) Name() string { return s.name }

// Created returns when the session was made.
func (s *Session) Created() time.Time { return s.created }

// Approver returns the session's approver (to change its mode, prompter or
// notifier).
func (s *Session) Approver() *tool.Approver { return s.approver }

// Agent returns the session's own conversation.
func (s *Session) Agent() *Agent { return s.agent }

// NewAgent returns another conversation on the session: the session's
// profile, approver and tool calls, a history of its own (tai.chat keeps
// one per tool subset and system prompt; fork's subagents are such
// agents).
func (s *Session) NewAgent(opts *AgentOptions) *Agent {
	var o AgentOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = s.eng.maxSteps
	}
	a := NewAgent(s.eng.reg, s.Model, &o)
	a.session = s
	return a
}

// RunTurn runs one turn of the session's own conversation (see
// Agent.RunTurn).
func (s *Session) RunTurn(ctx context.Context, message string, opts *TurnOptions) (Turn, error) {
	return s.agent.RunTurn(ctx, message, opts)
}

type sessionKey struct{}

// WithSession returns ctx carrying s: the calls made under it have s as
// their Caller (its audit name, approver and profile; what else the
// context's caller said, such as ByModel, stands), and tools
// (profile_switch, ask_user, fork) act on s. Agent turns and
// Session.Dispatch put their session there themselves.
func WithSession(ctx context.Context, s *Session) context.Context {
	return tool.WithCaller(context.WithValue(ctx, sessionKey{}, s), s.caller(tool.CallerFrom(ctx)))
}

// caller returns c as the caller of calls made under s: s's audit name,
// approver and profile.
func (s *Session) caller(c tool.Caller) tool.Caller {
	c.Name, c.Approver, c.Profile = s.name, s.approver, s.profileName
	return c
}

// SessionFrom returns the session whose call is running in ctx.
func SessionFrom(ctx context.Context) (*Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(*Session)
	return s, ok && s != nil
}

// Dispatch runs a tool for the session through the registry: the session's
// approval, the run, an audit entry naming the session, redaction, spill.
func (s *Session) Dispatch(ctx context.Context, name string, args map[string]any) (tool.Result, error) {
	return s.eng.reg.Dispatch(WithSession(ctx, s), name, args)
}

// Profile returns the session's profile, as last saved: a change to it
// through Engine.SaveProfile or DeleteProfile shows at the next call.
func (s *Session) Profile() llm.Profile {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	return s.profile
}

// refreshLocked re-reads the session's profile when a profile was saved or
// deleted since it was resolved; a deleted one falls back to the default
// resolution (the vault's current profile, the environment, a local
// Ollama). The model client is rebuilt only when the profile changed.
func (s *Session) refreshLocked() {
	gen := s.eng.profileGen.Load()
	if gen == s.gen {
		return
	}
	p, err := llm.ResolveProfile(s.eng.store, s.profile.Name, s.eng.getenv)
	if errors.Is(err, llm.ErrProfileNotFound) {
		p, err = llm.ResolveProfile(s.eng.store, "", s.eng.getenv)
	}
	if err != nil {
		// Keep what works; the next change tries again.
		return
	}
	s.gen = gen
	if !reflect.DeepEqual(p, s.profile) {
		s.profile, s.client = p, nil
	}
}

// SwitchProfile makes name the profile of this session only: nothing is
// remembered in the vault and no other session changes. The next model
// call uses it. (The profile_switch tool uses it: a switch the model asked
// for never outlives the session.)
func (s *Session) SwitchProfile(name string) (llm.Profile, error) {
	gen := s.eng.profileGen.Load()
	p, err := llm.ResolveProfile(s.eng.store, name, s.eng.getenv)
	if err != nil {
		return llm.Profile{}, err
	}
	s.mu.Lock()
	s.profile, s.client, s.gen = p, nil, gen
	s.mu.Unlock()
	return p, nil
}

// UseProfile makes name the session's profile and remembers it in the
// vault as the current profile, which sessions made later start on. Other
// running sessions keep theirs.
func (s *Session) UseProfile(name string) (llm.Profile, error) {
	p, err := s.SwitchProfile(name)
	if err != nil {
		return llm.Profile{}, err
	}
	if err := llm.SetCurrentProfile(s.eng.store, name); err != nil {
		return llm.Profile{}, err
	}
	return p, nil
}

// UseModel makes the session's profile use model until the session's
// profile changes: nothing is stored, and no other session changes. The
// next model call uses it.
func (s *Session) UseModel(model string) (llm.Profile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	p := s.profile
	p.Model = model
	if err := p.Validate(); err != nil {
		return llm.Profile{}, err
	}
	s.profile, s.client = p, nil
	return p, nil
}

// Client returns the model client of the session's profile, building it on
// first use.
func (s *Session) Client() (llm.ChatClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	if s.client == nil {
		c, err := s.eng.newClient(s.profile)
		if err != nil {
			return nil, err
		}
		s.client = c
	}
	return s.client, nil
}

// Model answers with the session's client, system prompt and tool
// selection; it is the ModelSource of the session's agents.
func (s *Session) Model(context.Context) (Model, error) {
	c, err := s.Client()
	if err != nil {
		return Model{}, err
	}
	p := s.Profile()
	return Model{Client: c, System: p.System, Tools: p.Tools, MaxTokens: p.MaxTokens}, nil
}

// Complete makes one stateless completion with the session's model and no
// tools (the served completions tool, tai.complete). Like a turn, it is
// refused while the vault holds sealed secrets it cannot decrypt.
func (s *Session) Complete(ctx context.Context, msgs []llm.Message) (llm.Response, error) {
	if err := redactionReady(s.eng.store); err != nil {
		return llm.Response{}, err
	}
	m, err := s.Model(ctx)
	if err != nil {
		return llm.Response{}, err
	}
	return m.Client.Complete(ctx, llm.Request{Messages: msgs, MaxTokens: m.MaxTokens}, nil)
}

// approverFor returns the approver of the session calling in ctx, else the
// registry's (which has nobody to ask).
func (e *Engine) approverFor(ctx context.Context) *tool.Approver { return e.reg.ApproverFor(ctx) }

// profileFor returns the profile of the session calling in ctx, else the
// engine's.
func (e *Engine) profileFor(ctx context.Context) llm.Profile {
	if s, ok := SessionFrom(ctx); ok {
		return s.Profile()
	}
	return e.Profile()
}

// errNoSession answers a tool that acts on its caller's session when it is
// called outside of any.
func errNoSession(toolName string) tool.Result {
	return tool.ErrorResult("%s: called outside of a session, so there is no session to act on", toolName)
}

// sessionOf returns the calling session, for the tools that need one.
func sessionOf(ctx context.Context, toolName string) (*Session, *tool.Result) {
	s, ok := SessionFrom(ctx)
	if !ok {
		r := errNoSession(toolName)
		return nil, &r
	}
	return s, nil
}
