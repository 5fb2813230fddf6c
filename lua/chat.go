package lua

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
)

// openChat installs the agent turns and plain completions:
//
//	tai.chat(message [, opts]) -> text, {steps=, exhausted=, truncated=, filtered=,
//	        empty=, finish_reason=, usage=, profile=, tools=} | nil, err
//	    tools: {offered={names}, available=, tokens=, selected=} of the last model call
//	    opts: profile, max_steps, tools (names or patterns), system, reset,
//	    tool_budget (tokens the tool schemas may take before selection starts),
//	    messages (a list of {role=, content=, parts=} opening the turn before
//	    message, which may then be "": tai.mcp.prompt's),
//	    on_text(delta), on_waiting(waiting, tick), on_tool_start(ev),
//	    on_tool_end(ev), on_tool_progress(ev) (ev.progress, ev.total (0: unknown),
//	    ev.message: the latest a running tool reported, at most every 50 ms),
//	    on_retry(notice), on_running(running, tick, elapsed_ms, status)
//	    (every tick while the approved calls of an answer run; false after),
//	    on_notice({text=, model=, family=}) (the model picked for a
//	    profile that names none, once)
//	    notice: {text=, reason=, status=, wait=(seconds), attempt=, attempts=,
//	        provider=, model=}
//	tai.chat_reset([opts])   forgets the conversation tai.chat keeps
//	tai.complete(messages [, opts]) -> text, {finish_reason=, usage=} | nil, err
//	    opts: on_retry(notice), as for tai.chat
func (h *Host) openChat(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("chat", L.NewFunction(h.luaChat))
	tai.RawSetString("chat_reset", L.NewFunction(h.luaChatReset))
	tai.RawSetString("complete", L.NewFunction(h.luaComplete))
}

// chatState is what tai.chat keeps between calls.
type chatState struct {
	sessions map[string]*engine.Session // by profile option
	agents   map[chatKey]*engine.Agent
	busy     map[*engine.Agent]bool // agents running a tai.chat turn
}

// chatKey names one of the host's agents: tai.chat keeps one conversation
// per profile, tool subset and system prompt.
type chatKey struct{ profile, tools, system string }

// chatAgent returns the agent for key, creating it. Conversations without
// a profile option are agents of the host's own session (the plain one is
// that session's agent); those naming a profile belong to a session of
// their own on that profile, so a profile switch made in one never moves
// another.
func (h *Host) chatAgent(key chatKey, tools []string) (*engine.Agent, error) {
	if a, ok := h.chat.agents[key]; ok {
		return a, nil
	}
	s, err := h.chatSession(key.profile)
	if err != nil {
		return nil, err
	}
	a := s.Agent()
	if key.tools != "" || key.system != "" {
		a = s.NewAgent(&engine.AgentOptions{Tools: tools, System: key.system})
	}
	h.chat.agents[key] = a
	return a, nil
}

// chatSession returns the session tai.chat's profile option names: the
// host's own for none, else one per profile name, made on first use.
func (h *Host) chatSession(profile string) (*engine.Session, error) {
	if profile == "" {
		return h.Session()
	}
	if s, ok := h.chat.sessions[profile]; ok {
		return s, nil
	}
	e, err := h.Engine()
	if err != nil {
		return nil, err
	}
	s, err := e.NewSession(&engine.SessionOptions{Profile: profile})
	if err != nil {
		return nil, err
	}
	h.chat.sessions[profile] = s
	return s, nil
}

// clientOptions are the model clients' options: the host's Engine.Client,
// with retries reported through tai.notify ("tai: rate limited (429); retrying in
// 30s, attempt 2/4") unless a turn has its own on_retry or the options
// their own OnRetry, so that no wait passes in silence.
func (h *Host) clientOptions() *llm.ClientOptions {
	var c llm.ClientOptions
	if o := h.opts.Engine; o != nil && o.Client != nil {
		c = *o.Client
	}
	if c.OnRetry == nil {
		c.OnRetry = func(n llm.RetryNotice) {
			h.tellSoon("warn", "tai: "+n.String())
		}
	}
	if c.ModelFamilies == nil {
		c.ModelFamilies = h.families.get
	}
	if c.OnModelChosen == nil {
		c.OnModelChosen = func(m llm.ModelChoice) {
			h.tellSoon("warn", "tai: "+m.String())
		}
	}
	return &c
}

// chatOpts is tai.chat's option table.
type chatOpts struct {
	key      chatKey
	tools    []string
	maxSteps int
	budget   int
	reset    bool
	// messages open the turn before the message (a server's prompt).
	messages []llm.Message
	onText   *glua.LFunction
	onWait   *glua.LFunction
	onStart  *glua.LFunction
	onEnd    *glua.LFunction
	onProg   *glua.LFunction
	onRetry  *glua.LFunction
	onRun    *glua.LFunction
	onNotice *glua.LFunction
	// status is what a launcher's slow start says, for onRun.
	status *startupStatus
}

func readChatOpts(L *glua.LState, n int) chatOpts {
	var o chatOpts
	t := L.OptTable(n, nil)
	if t == nil {
		return o
	}
	str := func(field string) string { return optString(L, n, t, field) }
	fn := func(field string) *glua.LFunction { return optFunction(L, n, t, field) }
	o.key.profile = str("profile")
	o.key.system = str("system")
	switch v := t.RawGetString("max_steps").(type) {
	case glua.LNumber:
		if v < 1 || v > 1000 || float64(v) != float64(int(v)) {
			L.ArgError(n, "max_steps must be a whole number from 1 to 1000")
		}
		o.maxSteps = int(v)
	case *glua.LNilType:
	default:
		L.ArgError(n, "max_steps must be a number")
	}
	o.budget = optToolBudget(L, n, t)
	switch v := t.RawGetString("tools").(type) {
	case *glua.LTable:
		for i := 1; i <= v.Len(); i++ {
			s, ok := v.RawGetInt(i).(glua.LString)
			if !ok {
				L.ArgError(n, "tools must be a list of tool names or patterns (strings)")
			}
			o.tools = append(o.tools, string(s))
		}
		if len(o.tools) == 0 {
			L.ArgError(n, "tools is an empty list; leave it out to offer every tool")
		}
		o.key.tools = strings.Join(o.tools, "\x00")
	case *glua.LNilType:
	default:
		L.ArgError(n, "tools must be a list of tool names or patterns")
	}
	o.reset = glua.LVAsBool(t.RawGetString("reset"))
	if mv := t.RawGetString("messages"); mv != glua.LNil {
		msgs, err := tableMessages(L, mv)
		if err != nil {
			L.ArgError(n, err.Error())
		}
		o.messages = msgs
	}
	o.onText = fn("on_text")
	o.onWait = fn("on_waiting")
	o.onStart = fn("on_tool_start")
	o.onNotice = fn("on_notice")
	o.onEnd = fn("on_tool_end")
	o.onProg = fn("on_tool_progress")
	o.onRetry = fn("on_retry")
	o.onRun = fn("on_running")
	return o
}

// spinnerTick is how often on_waiting is called again while the model is
// silent, so a front end can animate a spinner.
const spinnerTick = 100 * time.Millisecond

// luaChat is tai.chat(message [, opts]).
func (h *Host) luaChat(L *glua.LState) int {
	message := L.CheckString(1)
	o := readChatOpts(L, 2)
	if strings.TrimSpace(message) == "" && len(o.messages) == 0 {
		L.ArgError(1, "the message is empty")
	}
	agent, err := h.chatAgent(o.key, o.tools)
	if err != nil {
		return fail(L, err.Error())
	}
	if h.chat.busy[agent] {
		// A Lua tool called during a turn asked for a turn on the same
		// conversation: it would wait for itself forever.
		return fail(L, "tai.chat is already running a turn on this conversation (called from a tool of that turn?); "+
			"give a different profile, tools or system option for a separate conversation")
	}
	h.chat.busy[agent] = true
	defer delete(h.chat.busy, agent)
	if o.reset {
		agent.Reset()
	}
	ctx := luaContext(L)
	if o.onRun != nil {
		// A server's slow first start shows in the running spinner.
		o.status = &startupStatus{}
		ctx = mcp.WithStartupNotice(ctx, o.status.set)
	}
	if o.onNotice != nil {
		ctx = llm.WithModelNotice(ctx, h.modelNotice(ctx, o.onNotice))
	}
	topts := &engine.TurnOptions{Events: h.chatEvents(ctx, o), MaxSteps: o.maxSteps, ToolBudget: o.budget, Messages: o.messages}

	var turn engine.Turn
	var terr error
	h.Await(func() { turn, terr = agent.RunTurn(ctx, message, topts) })
	if terr != nil {
		if ctx.Err() != nil {
			return fail(L, "interrupted")
		}
		return fail(L, terr.Error())
	}
	L.Push(glua.LString(turn.Text))
	d := L.NewTable()
	d.RawSetString("steps", glua.LNumber(turn.Steps))
	d.RawSetString("exhausted", glua.LBool(turn.Exhausted))
	d.RawSetString("truncated", glua.LBool(turn.Truncated))
	d.RawSetString("filtered", glua.LBool(turn.Filtered))
	d.RawSetString("empty", glua.LBool(turn.Empty))
	d.RawSetString("finish_reason", glua.LString(turn.FinishReason))
	d.RawSetString("usage", usageTable(L, turn.Usage))
	d.RawSetString("profile", glua.LString(agent.Session().Profile().Name))
	d.RawSetString("tools", selectionTable(L, turn.Tools))
	L.Push(d)
	return 2
}

// selectionTable is the tools field of tai.chat's second result: the
// names offered on the turn's last model call, how many tools were
// available, what their schemas take in tokens, and whether selection
// chose among them (past the budget).
func selectionTable(L *glua.LState, s tool.Selection) *glua.LTable {
	t := L.NewTable()
	offered := L.NewTable()
	for _, spec := range s.Offered {
		offered.Append(glua.LString(spec.Name))
	}
	t.RawSetString("offered", offered)
	t.RawSetString("available", glua.LNumber(s.Available))
	t.RawSetString("tokens", glua.LNumber(s.Tokens))
	t.RawSetString("selected", glua.LBool(s.Selected))
	return t
}

func usageTable(L *glua.LState, u llm.Usage) *glua.LTable {
	t := L.NewTable()
	t.RawSetString("input_tokens", glua.LNumber(u.InputTokens))
	t.RawSetString("output_tokens", glua.LNumber(u.OutputTokens))
	return t
}

// chatEvents forwards the agent's events to the Lua callbacks of o, on the
// goroutine that owns the state. A callback that fails is reported once on
// stderr and not called again in this turn.
func (h *Host) chatEvents(ctx context.Context, o chatOpts) engine.Events {
	var ev engine.Events
	var mu sync.Mutex
	broken := map[*glua.LFunction]bool{}
	call := func(fn *glua.LFunction, args func() []glua.LValue) {
		_ = h.onLua(ctx, func() {
			mu.Lock()
			skip := broken[fn]
			mu.Unlock()
			if skip {
				return
			}
			if _, err := h.callWhole(ctx, fn, args()...); err != nil {
				mu.Lock()
				broken[fn] = true
				mu.Unlock()
				h.tell(h.L, "error", fmt.Sprintf("tai: chat callback failed (not called again this turn): %v", err))
			}
		})
	}
	if o.onText != nil {
		ev.OnText = func(d string) {
			call(o.onText, func() []glua.LValue { return []glua.LValue{glua.LString(d)} })
		}
	}
	// ticking returns the on/off event of a callback fn that is called
	// again every spinnerTick while on, with args(tick, elapsed).
	ticking := func(fn *glua.LFunction, args func(n int, elapsed time.Duration) []glua.LValue) func(bool) {
		var tmu sync.Mutex
		var stop context.CancelFunc
		var stopped chan struct{}
		return func(on bool) {
			tmu.Lock()
			defer tmu.Unlock()
			if stop != nil {
				stop()
				<-stopped
				stop, stopped = nil, nil
			}
			if !on {
				call(fn, func() []glua.LValue { return []glua.LValue{glua.LFalse} })
				return
			}
			call(fn, func() []glua.LValue { return args(0, 0) })
			tctx, cancel := context.WithCancel(ctx)
			stop, stopped = cancel, make(chan struct{})
			go h.spin(tctx, fn, stopped, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return broken[fn]
			}, args)
		}
	}
	if o.onWait != nil {
		ev.OnWaiting = ticking(o.onWait, func(n int, _ time.Duration) []glua.LValue {
			return []glua.LValue{glua.LTrue, glua.LNumber(n)}
		})
	}
	if o.onRun != nil {
		ev.OnRunning = ticking(o.onRun, func(n int, elapsed time.Duration) []glua.LValue {
			status := ""
			if o.status != nil {
				status = o.status.get()
			}
			return []glua.LValue{glua.LTrue, glua.LNumber(n), glua.LNumber(elapsed.Milliseconds()), glua.LString(status)}
		})
	}
	if o.onStart != nil {
		ev.OnToolStart = func(te engine.ToolEvent) {
			call(o.onStart, func() []glua.LValue { return []glua.LValue{h.toolEventTable(te)} })
		}
	}
	if o.onEnd != nil {
		ev.OnToolEnd = func(te engine.ToolEvent) {
			call(o.onEnd, func() []glua.LValue { return []glua.LValue{h.toolEventTable(te)} })
		}
	}
	if o.onProg != nil {
		ev.OnToolProgress = func(te engine.ToolEvent) {
			call(o.onProg, func() []glua.LValue { return []glua.LValue{h.toolEventTable(te)} })
		}
	}
	if o.onRetry != nil {
		ev.OnRetry = func(n llm.RetryNotice) {
			call(o.onRetry, func() []glua.LValue { return []glua.LValue{retryTable(h.L, n)} })
		}
	}
	return ev
}

// modelNotice returns the callback that hands tai.chat's on_notice the
// model picked for a profile that names none: {text = the line for a
// person, model, family}.
func (h *Host) modelNotice(ctx context.Context, fn *glua.LFunction) func(llm.ModelChoice) {
	return func(m llm.ModelChoice) {
		_ = h.onLua(ctx, func() {
			t := h.L.NewTable()
			t.RawSetString("text", glua.LString(m.String()))
			t.RawSetString("model", glua.LString(m.Model))
			t.RawSetString("family", glua.LString(m.Family))
			if _, err := h.callWhole(ctx, fn, t); err != nil {
				h.tell(h.L, "error", fmt.Sprintf("tai: chat callback failed: %v", err))
			}
		})
	}
}

// retryTable is the table on_retry receives: text is the notice rendered
// for a person ("rate limited (429); retrying in 30s, attempt 2/4").
func retryTable(L *glua.LState, n llm.RetryNotice) *glua.LTable {
	t := L.NewTable()
	t.RawSetString("text", glua.LString(n.String()))
	t.RawSetString("reason", glua.LString(n.Reason))
	t.RawSetString("status", glua.LNumber(n.Status))
	t.RawSetString("wait", glua.LNumber(n.Wait.Seconds()))
	t.RawSetString("attempt", glua.LNumber(n.Attempt))
	t.RawSetString("attempts", glua.LNumber(n.Attempts))
	t.RawSetString("provider", glua.LString(n.Provider))
	t.RawSetString("model", glua.LString(n.Model))
	return t
}

// spin calls fn with args(n, elapsed) every spinnerTick until ctx ends,
// then closes stopped.
func (h *Host) spin(ctx context.Context, fn *glua.LFunction, stopped chan struct{}, broken func() bool, args func(n int, elapsed time.Duration) []glua.LValue) {
	defer close(stopped)
	start := time.Now()
	tick := time.NewTicker(spinnerTick)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_ = h.onLua(ctx, func() {
			if !broken() {
				_, _ = h.callWhole(ctx, fn, args(n, time.Since(start))...)
			}
		})
	}
}

// callWhole calls a chat callback on the owning goroutine (inside a job
// of ctx) and lets it run to its end even when Ctrl-C ends ctx meanwhile:
// Ctrl-C stops the turn, not a callback halfway through, so a front end's
// state stays true to what it wrote (a spinner drawn is a spinner it
// knows to clear) and it can tidy the screen once tai.chat returns.
// Callbacks not begun yet are not called (onLua). One that never returns
// is left to the second Ctrl-C, which exits while the first has not
// stopped the run (see watchInterrupts).
func (h *Host) callWhole(ctx context.Context, fn *glua.LFunction, args ...glua.LValue) ([]glua.LValue, error) {
	h.L.SetContext(context.WithoutCancel(ctx)) // job.run puts ctx back
	return h.callLua(fn, 0, args...)
}

// toolEventTable converts a tool event: {id=, name=, digest=, args=,
// outcome=, reason=, duration_ms=, media=, notes=}, and progress=, total=,
// message= for on_tool_progress. args are already redacted by the engine,
// a progress message by the bridge; media are the labels of the result's
// binaries, numbered for tai.media.open.
func (h *Host) toolEventTable(te engine.ToolEvent) *glua.LTable {
	L := h.L
	t := L.NewTable()
	t.RawSetString("id", glua.LString(te.ID))
	t.RawSetString("name", glua.LString(te.Name))
	t.RawSetString("digest", glua.LString(te.Digest))
	if args, err := ToLua(L, te.Args); err == nil {
		t.RawSetString("args", args)
	}
	if te.Outcome != "" {
		t.RawSetString("outcome", glua.LString(te.Outcome))
		if te.Reason != "" {
			t.RawSetString("reason", glua.LString(te.Reason))
		}
		t.RawSetString("duration_ms", glua.LNumber(float64(te.Duration.Microseconds())/1000))
	}
	if p := te.Progress; p != nil {
		t.RawSetString("progress", glua.LNumber(p.Progress))
		t.RawSetString("total", glua.LNumber(p.Total))
		t.RawSetString("message", glua.LString(p.Message))
	}
	if len(te.Media) > 0 {
		// Numbered as they are shown, for tai.media.open.
		media := L.NewTable()
		for _, m := range h.showMedia(te.Media) {
			media.Append(glua.LString(m))
		}
		t.RawSetString("media", media)
	}
	if len(te.Notes) > 0 {
		notes := L.NewTable()
		for _, n := range te.Notes {
			notes.Append(glua.LString(n))
		}
		t.RawSetString("notes", notes)
	}
	return t
}

// luaChatReset is tai.chat_reset([opts]): forgets the conversation of the
// agent opts names (profile, tools, system), or of every agent.
func (h *Host) luaChatReset(L *glua.LState) int {
	// A new conversation numbers its binaries from 1 again.
	h.media.items = nil
	if L.GetTop() == 0 || L.Get(1) == glua.LNil {
		for _, a := range h.chat.agents {
			a.Reset()
		}
		return 0
	}
	o := readChatOpts(L, 1)
	if a, ok := h.chat.agents[o.key]; ok {
		a.Reset()
	}
	return 0
}

// luaComplete is tai.complete(messages): one stateless completion with the
// current profile and no tools.
func (h *Host) luaComplete(L *glua.LState) int {
	list := L.CheckTable(1)
	n := list.Len()
	if n == 0 {
		L.ArgError(1, "messages must be a non-empty list of {role=, content=}")
	}
	msgs := make([]llm.Message, 0, n)
	for i := 1; i <= n; i++ {
		m, ok := list.RawGetInt(i).(*glua.LTable)
		if !ok {
			L.ArgError(1, fmt.Sprintf("messages[%d] must be a table {role=, content=}", i))
		}
		role, _ := m.RawGetString("role").(glua.LString)
		switch role {
		case "system", "user", "assistant":
		default:
			L.ArgError(1, fmt.Sprintf("messages[%d].role is %q; use \"system\", \"user\" or \"assistant\"", i, string(role)))
		}
		content, ok := m.RawGetString("content").(glua.LString)
		if !ok {
			L.ArgError(1, fmt.Sprintf("messages[%d].content must be a string", i))
		}
		msgs = append(msgs, llm.Message{Role: string(role), Content: string(content)})
	}
	var onRetry *glua.LFunction
	if t := L.OptTable(2, nil); t != nil {
		onRetry = optFunction(L, 2, t, "on_retry")
	}
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	ctx := luaContext(L)
	if onRetry != nil {
		ctx = llm.WithRetryNotice(ctx, h.chatEvents(ctx, chatOpts{onRetry: onRetry}).OnRetry)
	}
	var resp llm.Response
	var cerr error
	h.Await(func() { resp, cerr = s.Complete(ctx, msgs) })
	if cerr != nil {
		if ctx.Err() != nil {
			return fail(L, "interrupted")
		}
		return fail(L, cerr.Error())
	}
	L.Push(glua.LString(resp.Message.Content))
	d := L.NewTable()
	d.RawSetString("finish_reason", glua.LString(resp.FinishReason))
	d.RawSetString("usage", usageTable(L, resp.Usage))
	L.Push(d)
	return 2
}

// optToolBudget reads an options table's tool_budget at argument n: a
// whole number of tokens, at least 1; 0 when it is not set.
func optToolBudget(L *glua.LState, n int, t *glua.LTable) int {
	switch v := t.RawGetString("tool_budget").(type) {
	case glua.LNumber:
		if v < 1 || float64(v) != float64(int(v)) {
			L.ArgError(n, "tool_budget must be a whole number of tokens, at least 1")
		}
		return int(v)
	case *glua.LNilType:
		return 0
	default:
		L.ArgError(n, "tool_budget must be a number")
		return 0
	}
}
