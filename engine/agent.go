package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
	"tai/vault"
)

// DefaultMaxSteps bounds the model calls of one turn when
// AgentOptions.MaxSteps is zero.
const DefaultMaxSteps = 20

// ToolEvent describes one tool call of a turn, for the front end: at start
// Outcome and Duration are empty; at end Outcome is vault.OutcomeOK,
// OutcomeError, OutcomeDenied, OutcomeUnknown or OutcomeCancelled.
type ToolEvent struct {
	ID     string
	Name   string
	Digest string
	// Args are the arguments as they may be shown: sensitive ones hidden,
	// known secret values redacted (see Registry.ShownArgs).
	Args    map[string]any
	Outcome string
	// Reason says why a denied call was denied when no person said no
	// (nobody could be asked); empty otherwise.
	Reason   string
	Duration time.Duration
	// Media are the image, audio and blob items of the result, those
	// held as bytes and those stored as vault records.
	Media []Media
	// Notes say what happened while the call ran that the person should
	// know (see tool.Note): a server's question declined under --auto.
	Notes []string
	// Progress is how far the running call has come, in the events of
	// OnToolProgress only.
	Progress *tool.Progress
}

// Events are the callbacks an Agent reports a turn through. Any may be nil.
// They are called from the goroutine running RunTurn, except OnToolEnd,
// which may come from the goroutine running that tool.
type Events struct {
	// OnText receives the answer's text as it streams in.
	OnText func(delta string)
	// OnWaiting(true) says a model request is in flight with nothing
	// streamed yet (time for a spinner); OnWaiting(false) ends that.
	OnWaiting func(waiting bool)
	// OnToolStart and OnToolEnd bracket each tool call.
	OnToolStart func(ToolEvent)
	OnToolEnd   func(ToolEvent)
	// OnToolProgress is told, between a call's OnToolStart and OnToolEnd,
	// of the progress the tool reports (an MCP server's
	// notifications/progress): the latest only, at most every
	// ProgressEvery (the last always, before OnToolEnd), from a goroutine
	// of its own, so a tool reporting faster than the front end draws
	// never waits for it.
	OnToolProgress func(ToolEvent)
	// OnRunning(true) says the approved calls of one answer have started
	// running (time for a spinner naming them); OnRunning(false) comes
	// after the OnToolEnd of every one of them.
	OnRunning func(running bool)
	// OnRetry is told of each retry of a model request (rate limit,
	// server error, refused connection) before the client waits; it wins
	// over ClientOptions.OnRetry for this agent's turns.
	OnRetry func(llm.RetryNotice)
}

// Model is what an agent talks to for one turn: the client, the system
// prompt and the profile's tool selection (empty: every tool).
type Model struct {
	Client    llm.ChatClient
	System    string
	Tools     []string
	MaxTokens int
}

// ModelSource returns the model to use for a turn; an Engine answers with
// its current profile, resolved lazily so nothing is probed before a model
// is needed.
type ModelSource func(ctx context.Context) (Model, error)

// AgentOptions tunes NewAgent. A nil *AgentOptions means defaults.
type AgentOptions struct {
	// MaxSteps bounds the model calls of one turn; zero means
	// DefaultMaxSteps.
	MaxSteps int
	// System replaces the model's system prompt when non-empty.
	System string
	// Tools, when non-empty, restricts the agent to these tool names
	// (path.Match patterns such as "mcp_github_*"), on top of the model's
	// own selection.
	Tools []string
	// Select tunes the per-turn tool selection (Allow is set from Tools).
	Select tool.SelectOptions
	// Own, when set, are the tools offered every step instead of the
	// registry's selection (a fork's own tools; see ForkOptions.Own).
	Own []tool.Tool
}

// TurnOptions are the settings of one turn. A nil *TurnOptions means
// defaults.
type TurnOptions struct {
	// Events receives the turn's progress.
	Events Events
	// MaxSteps bounds the model calls of this turn (the served chat's
	// max_steps); zero means the agent's AgentOptions.MaxSteps.
	MaxSteps int
	// Capture makes Turn.Text hold everything the model said during the
	// turn, joined with blank lines, not only its final answer (the served
	// chat uses it).
	Capture bool
	// ToolBudget overrides the agent's SelectOptions.Budget for this turn
	// (tokens the tool schemas may take before selection starts); zero
	// keeps it.
	ToolBudget int
	// Messages, when set, open the turn before message (a server's
	// prompt: user and assistant messages, images as Parts); message, when
	// not empty, follows as one more user message. The turn's input must
	// end with a user message.
	Messages []llm.Message
}

// Turn is the outcome of RunTurn.
type Turn struct {
	// Text is the final answer (in capture mode, everything the model said
	// during the turn, joined with blank lines).
	Text string
	// Tools is the tool selection of the turn's last model call: what was
	// offered, out of how many.
	Tools tool.Selection
	// Steps counts the model calls made.
	Steps int
	// Usage sums the token counts of the turn.
	Usage llm.Usage
	// Exhausted reports that the step limit ended the turn before the
	// model gave a final answer; Text then says so.
	Exhausted bool
	// Truncated reports that the final answer was cut off (llm.CutOff: the
	// output token limit, the context window, a paused turn): Text is
	// incomplete.
	// Tool calls cut off earlier in the turn were answered with an error
	// and not run; the model saw that and could recover.
	Truncated bool
	// FinishReason is the final answer's finish reason as normalized by
	// the provider (llm.FinishStop, FinishLength, FinishContextWindow,
	// FinishPaused, FinishFiltered, FinishRefusal) or a value neither
	// provider documents;
	// empty when the turn ended without a final answer (Exhausted).
	FinishReason string
	// Filtered reports FinishReason "content_filter" or "refusal"
	// (llm.Withheld): the answer was withheld or cut by the provider's
	// content filter or refused by the model, so Text is not a complete
	// answer.
	Filtered bool
	// Empty reports that the model's final answer had no text (only
	// white space) although it finished normally; Text is then "" (or,
	// in capture mode, only what was said before).
	Empty bool
}

// Agent is one conversation with a model that may call tools. Its history
// persists across turns. Only one turn runs at a time; the methods are safe
// to call from several goroutines. An agent made by Session.NewAgent runs
// its tool calls under its session (see WithSession); one made by NewAgent
// has none, so the registry's own approver decides its calls.
type Agent struct {
	reg     *tool.Registry
	model   ModelSource
	opts    AgentOptions
	session *Session // nil for an agent outside of any session

	turnMu  sync.Mutex // held for the length of a turn
	mu      sync.Mutex // guards the fields below
	history []llm.Message
	enabled []string
	denied  map[string]bool // names never allowed, whatever the patterns say
}

// NewAgent returns an agent that dispatches through reg and asks model for
// the client of each turn.
func NewAgent(reg *tool.Registry, model ModelSource, opts *AgentOptions) *Agent {
	a := &Agent{reg: reg, model: model}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.MaxSteps <= 0 {
		a.opts.MaxSteps = DefaultMaxSteps
	}
	return a
}

// StaticModel returns a ModelSource that always answers with client and
// system.
func StaticModel(client llm.ChatClient, system string) ModelSource {
	return func(context.Context) (Model, error) { return Model{Client: client, System: system}, nil }
}

// Session returns the session the agent belongs to, or nil.
func (a *Agent) Session() *Session { return a.session }

// History returns a copy of the conversation so far (without the system
// prompt).
func (a *Agent) History() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]llm.Message(nil), a.history...)
}

// Reset forgets the conversation and the tools enabled through
// tool_search.
func (a *Agent) Reset() {
	a.mu.Lock()
	a.history = nil
	a.enabled = nil
	a.mu.Unlock()
}

// Enable offers the named tools every turn from now on, beyond the lazy
// selection. It returns the names that exist and are allowed.
func (a *Agent) Enable(names ...string) []string {
	var ok []string
	for _, n := range names {
		if _, exists := a.reg.Get(n); exists && a.allowed(n) {
			ok = append(ok, n)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range ok {
		dup := false
		for _, e := range a.enabled {
			dup = dup || e == n
		}
		if !dup {
			a.enabled = append(a.enabled, n)
		}
	}
	return ok
}

// Enabled returns the tools enabled through Enable.
func (a *Agent) Enabled() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.enabled...)
}

func (a *Agent) allowed(name string) bool {
	a.mu.Lock()
	denied := a.denied[name]
	a.mu.Unlock()
	return !denied && matchAny(a.opts.Tools, name, true)
}

// offered returns the tools offered to the model this step: the agent's
// own tools when it has some, else the registry's selection.
func (a *Agent) offered(hist []llm.Message, sel tool.SelectOptions) tool.Selection {
	if len(a.opts.Own) == 0 {
		return a.reg.Select(hist, sel)
	}
	out := make([]llm.ToolSpec, 0, len(a.opts.Own))
	for _, t := range a.opts.Own {
		if sel.Allow == nil || sel.Allow(t.Name) {
			out = append(out, t.Spec())
		}
	}
	return tool.Selection{Offered: out, Available: len(out)}
}

// forbid keeps the named tools from this agent.
func (a *Agent) forbid(names ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.denied == nil {
		a.denied = map[string]bool{}
	}
	for _, n := range names {
		a.denied[n] = true
	}
}

// matchAny reports whether name matches one of the path.Match patterns;
// an empty list gives empty.
func matchAny(patterns []string, name string, empty bool) bool {
	if len(patterns) == 0 {
		return empty
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

type agentKey struct{}

// turnContext carries the agent whose turn runs, and its session when it has
// one, in one allocation.
type turnContext struct {
	context.Context
	agent *Agent
}

func (x *turnContext) Value(key any) any {
	switch key {
	case agentKey{}:
		return x.agent
	case sessionKey{}:
		if x.agent.session != nil {
			return x.agent.session
		}
	}
	return x.Context.Value(key)
}

// AgentFrom returns the agent whose turn is running in ctx (tool_search uses
// it to enable tools for the calling agent).
func AgentFrom(ctx context.Context) (*Agent, bool) {
	a, ok := ctx.Value(agentKey{}).(*Agent)
	return a, ok
}

// RunTurn adds message to the history and loops model → tools → model until
// the model answers without tool calls or MaxSteps model calls were made.
// Tool results are redacted before the model sees them; several calls in
// one answer are approved one after the other, run concurrently and
// answered in order. When ctx ends, the turn stops and the history is left
// consistent: every tool call has a result and the turn ends with an
// assistant note. A vault holding sealed secrets it cannot decrypt
// refuses the turn before the model is asked (the error wraps
// vault.ErrNoPassphrase or vault.ErrWrongPassphrase). opts holds this
// turn's settings; nil means defaults.
func (a *Agent) RunTurn(ctx context.Context, message string, opts *TurnOptions) (Turn, error) {
	var o TurnOptions
	if opts != nil {
		o = *opts
	}
	ev, capture := o.Events, o.Capture
	maxSteps := o.MaxSteps
	if maxSteps <= 0 {
		maxSteps = a.opts.MaxSteps
	}
	input, err := turnInput(message, o.Messages)
	if err != nil {
		return Turn{}, err
	}
	a.turnMu.Lock()
	defer a.turnMu.Unlock()

	// Redaction must know every secret before anything reaches the model.
	if err := redactionReady(a.reg.Store()); err != nil {
		return Turn{}, err
	}
	model, err := a.model(ctx)
	if err != nil {
		return Turn{}, err
	}
	system := model.System
	if a.opts.System != "" {
		system = a.opts.System
	}
	allow := func(name string) bool {
		return a.allowed(name) && matchAny(model.Tools, name, true)
	}
	sel := a.opts.Select
	sel.Allow = allow
	if o.ToolBudget != 0 {
		sel.Budget = o.ToolBudget
	}
	if a.session != nil && sel.Profile == "" {
		sel.Profile = a.session.Profile().Name
	}
	if a.session != nil {
		// The MCP servers' instructions follow whichever system prompt
		// the turn has, for the servers its profile enables.
		system = a.session.eng.withInstructions(system, a.session.Profile().Name)
	}

	a.appendHistory(input...)
	caller := tool.CallerFrom(ctx)
	caller.ByModel = true
	if a.session != nil {
		caller = a.session.caller(caller)
	}
	// What a model spends for a call (a server's sampling request) counts
	// in the turn's usage, added after each round of calls.
	var spent spentUsage
	caller.Spent = spent.add
	ctx = tool.WithCaller(&turnContext{ctx, a}, caller)
	ctx = llm.WithRetryNotice(ctx, ev.OnRetry)

	var turn Turn
	var said []string
	for turn.Steps < maxSteps {
		hist := a.History()
		sel.Enabled = a.Enabled()
		turn.Tools = a.offered(hist, sel)
		req := llm.Request{Tools: turn.Tools.Offered, MaxTokens: model.MaxTokens}
		if system != "" {
			req.Messages = append(req.Messages, llm.Message{Role: "system", Content: system})
		}
		req.Messages = append(req.Messages, hist...)

		resp, err := a.complete(ctx, model.Client, req, ev)
		turn.Steps++
		if err != nil {
			a.endInterrupted(ctx, err)
			return turn, err
		}
		turn.Usage.InputTokens += resp.Usage.InputTokens
		turn.Usage.OutputTokens += resp.Usage.OutputTokens
		msg := resp.Message
		msg.Role = "assistant"
		// The calls as the model sent them are run; the history keeps them
		// with arguments a provider accepts back.
		called := append([]llm.ToolCall(nil), msg.ToolCalls...)
		msg.ToolCalls = make([]llm.ToolCall, len(called))
		ids := map[string]bool{}
		for i := range called {
			if called[i].ID == "" || ids[called[i].ID] {
				called[i].ID = fmt.Sprintf("call_%d_%d", turn.Steps, i)
			}
			ids[called[i].ID] = true
			msg.ToolCalls[i] = called[i]
			msg.ToolCalls[i].Arguments = historyArgs(called[i].Arguments)
		}
		if len(called) == 0 {
			msg.ToolCalls = nil
		}
		a.appendHistory(msg)
		if msg.Content != "" {
			said = append(said, msg.Content)
		}
		if len(msg.ToolCalls) == 0 {
			turn.FinishReason = resp.FinishReason
			turn.Truncated = llm.CutOff(resp.FinishReason)
			turn.Filtered = llm.Withheld(resp.FinishReason)
			turn.Empty = strings.TrimSpace(msg.Content) == "" && !turn.Truncated && !turn.Filtered
			turn.Text = msg.Content
			if capture {
				turn.Text = strings.Join(said, "\n\n")
			}
			return turn, nil
		}
		results := a.runCalls(ctx, called, allow, ev, llm.CutOff(resp.FinishReason))
		spent.addTo(&turn.Usage)
		a.appendHistory(results...)
		if err := ctx.Err(); err != nil {
			a.endInterrupted(ctx, err)
			return turn, err
		}
	}
	note := fmt.Sprintf("[stopped: the step limit of %d model calls was reached before a final answer; "+
		"send another message to continue, or raise max_steps]", maxSteps)
	a.appendHistory(llm.Message{Role: "assistant", Content: note})
	said = append(said, note)
	turn.Exhausted = true
	turn.Text = note
	if capture {
		turn.Text = strings.Join(said, "\n\n")
	}
	return turn, nil
}

// spentUsage sums what models spent for a turn's calls (tool.Spend),
// from the calls' goroutines.
type spentUsage struct {
	mu sync.Mutex
	u  llm.Usage
}

func (s *spentUsage) add(u llm.Usage) {
	s.mu.Lock()
	s.u.InputTokens += u.InputTokens
	s.u.OutputTokens += u.OutputTokens
	s.mu.Unlock()
}

// addTo moves the sum so far into total.
func (s *spentUsage) addTo(total *llm.Usage) {
	s.mu.Lock()
	total.InputTokens += s.u.InputTokens
	total.OutputTokens += s.u.OutputTokens
	s.u = llm.Usage{}
	s.mu.Unlock()
}

// complete makes one model call, reporting waiting and text deltas.
func (a *Agent) complete(ctx context.Context, c llm.ChatClient, req llm.Request, ev Events) (llm.Response, error) {
	if c == nil {
		return llm.Response{}, errors.New("agent has no model client")
	}
	// A client may stream from another goroutine: the flag is atomic so
	// OnWaiting(false) is reported exactly once.
	var waiting atomic.Bool
	stop := func() {
		if waiting.CompareAndSwap(true, false) && ev.OnWaiting != nil {
			ev.OnWaiting(false)
		}
	}
	waiting.Store(true)
	if ev.OnWaiting != nil {
		ev.OnWaiting(true)
	}
	defer stop()
	var onText func(string)
	if ev.OnText != nil {
		onText = func(d string) {
			stop()
			ev.OnText(d)
		}
	}
	return c.Complete(ctx, req, onText)
}

// endInterrupted closes a turn that ended early: any tool call without a
// result gets one, and an assistant note ends the turn so the next user
// message follows a well-formed history.
func (a *Agent) endInterrupted(ctx context.Context, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	answered := map[string]bool{}
	var pending []llm.ToolCall
	for _, m := range a.history {
		if m.Role == "tool" {
			answered[m.ToolCallID] = true
		}
	}
	if n := len(a.history); n > 0 && a.history[n-1].Role == "assistant" {
		for _, tc := range a.history[n-1].ToolCalls {
			if !answered[tc.ID] {
				pending = append(pending, tc)
			}
		}
	}
	for _, tc := range pending {
		a.history = append(a.history, llm.Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Name, IsError: true,
			Content: "cancelled before it ran"})
	}
	reason := "interrupted"
	if ctx.Err() == nil {
		reason = "failed: " + a.reg.Redact(err.Error())
	}
	if n := len(a.history); n == 0 || a.history[n-1].Role != "assistant" || len(a.history[n-1].ToolCalls) > 0 {
		a.history = append(a.history, llm.Message{Role: "assistant", Content: "[turn " + reason + "]"})
	}
}

// turnInput is what a turn adds to the history before the model is
// asked: msgs (a prompt's), then message as a user message when it is not
// empty. It must end with a user message and hold only user and
// assistant messages.
func turnInput(message string, msgs []llm.Message) ([]llm.Message, error) {
	input := make([]llm.Message, 0, len(msgs)+1)
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("turn message %d has role %q: give user or assistant messages", i+1, m.Role)
		}
		input = append(input, llm.Message{Role: m.Role, Content: m.Content, Parts: m.Parts})
	}
	if message != "" || len(input) == 0 {
		input = append(input, llm.Message{Role: "user", Content: message})
	}
	if input[len(input)-1].Role != "user" {
		return nil, errors.New("the turn's messages end with an assistant message: add what you ask of the model after them")
	}
	return input, nil
}

func (a *Agent) appendHistory(msgs ...llm.Message) {
	a.mu.Lock()
	a.history = append(a.history, msgs...)
	a.mu.Unlock()
}

// runCalls approves the calls one after the other, in order, then runs the
// approved ones concurrently, and returns one tool message per call, in the
// order of calls. cut says the answer was cut off (llm.CutOff): its last
// call, and any whose arguments do not parse, may be incomplete, so they
// are not run and the model is told so.
func (a *Agent) runCalls(ctx context.Context, calls []llm.ToolCall, allow func(string) bool, ev Events, cut bool) []llm.Message {
	out := make([]llm.Message, len(calls))
	prepared := make([]*tool.Call, len(calls))
	events := make([]ToolEvent, len(calls))
	for i, tc := range calls {
		out[i] = llm.Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Name}
		args, perr := parseArgs(tc.Arguments)
		toolName, _ := a.reg.Lookup(ctx, tc.Name)
		events[i] = ToolEvent{ID: tc.ID, Name: tc.Name, Digest: a.reg.CallDigest(toolName, args), Args: a.reg.ShownArgs(toolName, args)}
		if ev.OnToolStart != nil {
			ev.OnToolStart(events[i])
		}
		var err error
		switch {
		case ctx.Err() != nil:
			err = ctx.Err()
			events[i].Outcome = vault.OutcomeCancelled
		case cut && (perr != nil || i == len(calls)-1):
			err = errCutCall
			events[i].Outcome = vault.OutcomeError
		case perr != nil:
			err = perr
			events[i].Outcome = vault.OutcomeError
		case !allow(tc.Name) && mcp.CheckToolName(tc.Name) == nil:
			// A name that is not valid goes on to Prepare, which refuses
			// and audits it without repeating it whole.
			err = fmt.Errorf("%w %q: it is not available to this agent", tool.ErrUnknownTool, tc.Name)
			events[i].Outcome = vault.OutcomeUnknown
		default:
			prepared[i], err = a.reg.Prepare(ctx, tc.Name, args)
			switch {
			case errors.Is(err, tool.ErrUnknownTool):
				events[i].Outcome = vault.OutcomeUnknown
			case errors.Is(err, tool.ErrDenied):
				events[i].Outcome = vault.OutcomeDenied
				if errors.Is(err, tool.ErrNoPrompter) {
					events[i].Reason = tool.ErrNoPrompter.Error()
				}
			case err != nil:
				events[i].Outcome = vault.OutcomeError
			}
		}
		if err != nil {
			out[i].IsError = true
			out[i].Content = a.reg.Redact(err.Error())
			if ev.OnToolEnd != nil {
				ev.OnToolEnd(events[i])
			}
		}
	}
	var wg sync.WaitGroup
	if ev.OnRunning != nil && slices.ContainsFunc(prepared, func(c *tool.Call) bool { return c != nil }) {
		ev.OnRunning(true)
		defer ev.OnRunning(false)
	}
	for i, c := range prepared {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var notes tool.Notes
			cc := tool.CallerFrom(ctx)
			cc.Note = notes.Add
			var relay *progressRelay
			if ev.OnToolProgress != nil {
				relay = newProgressRelay(events[i], ev.OnToolProgress)
				cc.Progress = relay.report
			}
			res, err := c.Run(tool.WithCaller(ctx, cc))
			if relay != nil {
				relay.stop() // no progress after the call's end
			}
			e := events[i]
			e.Notes = notes.Lines()
			e.Duration = time.Since(start)
			switch {
			case err != nil && ctx.Err() != nil:
				e.Outcome = vault.OutcomeCancelled
				out[i].IsError = true
				out[i].Content = "cancelled: " + err.Error()
			case err != nil:
				e.Outcome = vault.OutcomeError
				out[i].IsError = true
				out[i].Content = err.Error()
			default:
				e.Outcome = vault.OutcomeOK
				if res.IsError {
					e.Outcome = vault.OutcomeError
				}
				out[i].IsError = res.IsError
				out[i].Content = res.Text()
				out[i].Parts = modelParts(res)
				e.Media = media(res)
			}
			if ev.OnToolEnd != nil {
				ev.OnToolEnd(e)
			}
		}()
	}
	wg.Wait()
	return out
}

// modelParts returns the images and audio of res, for the providers that
// take them; the result's text holds a label for each.
func modelParts(res tool.Result) []llm.Part {
	var parts []llm.Part
	for _, c := range res.Content {
		if c.ForModel() {
			parts = append(parts, llm.Part{Type: c.Type, MIME: c.MIME, Data: c.Data})
		}
	}
	return parts
}

// Media is a binary item of a tool result: its label, as the terminal
// shows it ("[image png 640×480, 45 KB]"), and its bytes, or the vault
// record (base64) they were stored in when too large to keep.
type Media struct {
	Label string
	// Type is image, audio or resource (an embedded blob); MIME its media
	// type.
	Type, MIME string
	// Data holds the bytes; nil when Record holds them.
	Data []byte
	// Record is the id of the vault record holding the bytes, base64.
	Record string
}

// media returns res's binary items.
func media(res tool.Result) []Media {
	var out []Media
	for _, c := range res.Content {
		if c.Binary() {
			out = append(out, Media{Label: c.Label(), Type: c.Type, MIME: c.MIME, Data: c.Data})
		}
	}
	for _, st := range res.Stored {
		out = append(out, Media{Label: st.Label, Type: st.Type, MIME: st.MIME, Record: st.Record})
	}
	return out
}

// errCutCall answers a tool call whose arguments the token limit cut off.
var errCutCall = errors.New("not run: the answer was cut off (at the output token limit or the end of the context window) " +
	"while this call was being written, so it may be incomplete; send the call again, with shorter arguments if they " +
	"were long (split large content over several calls)")

// historyArgs returns arguments fit to send back to a provider: a JSON
// object. Anything else (a model may emit broken JSON, or nest it deeper
// than MaxArgsDepth) is kept, as the text it sent, under
// invalid_arguments, so the history stays sendable and convertible and the
// model still sees what it sent.
func historyArgs(raw json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if tooDeep(s) == nil && json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		// s, not raw: TrimSpace also drops bytes JSON does not count as
		// space (a form feed), which a provider would refuse.
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(map[string]string{"invalid_arguments": s})
	return b
}

// parseArgs decodes a tool call's arguments; empty means no arguments.
// Arguments that are not valid JSON are reported with the offset where the
// syntax breaks; valid JSON that is not an object, with what it is.
func parseArgs(raw json.RawMessage) (map[string]any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return map[string]any{}, nil
	}
	const fix = "send the arguments as one JSON object matching the tool's parameters"
	if err := tooDeep(s); err != nil {
		return map[string]any{}, fmt.Errorf("%v: %s", err, fix)
	}
	var args map[string]any
	err := json.Unmarshal([]byte(s), &args)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return map[string]any{}, fmt.Errorf("the arguments are not valid JSON: %s at byte %d (near %q): %s", syn.Error(), syn.Offset, around(s, int(syn.Offset)), fix)
	case errors.As(err, &typ) && typ.Field == "":
		return map[string]any{}, fmt.Errorf("the arguments are a JSON %s, not an object: %s", typ.Value, fix)
	case err != nil:
		return map[string]any{}, fmt.Errorf("the arguments are not a JSON object (%v): %s", err, fix)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// MaxArgsDepth bounds the objects and arrays nested in a tool call's
// arguments, as bridge.MaxSchemaDepth bounds a schema's: no tool takes
// deeper ones, and the conversation, which keeps the call, must convert
// to Lua and back whole.
const MaxArgsDepth = 64

// tooDeep says when the JSON text s nests deeper than MaxArgsDepth, before
// anything decodes it.
func tooDeep(s string) error {
	if depth, _ := mcp.JSONShape([]byte(s)); depth > MaxArgsDepth {
		return fmt.Errorf("the arguments nest %d levels deep, more than the %d a tool takes", depth, MaxArgsDepth)
	}
	return nil
}

// around returns up to 20 bytes of s either side of offset, for an error
// that points at a place in it.
func around(s string, offset int) string {
	lo, hi := max(offset-20, 0), min(offset+20, len(s))
	lo = min(lo, hi)
	return strings.ToValidUTF8(s[lo:hi], "")
}
