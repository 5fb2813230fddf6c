package lua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
)

// Engine returns the host's engine, building it on first use: it opens the
// vault, resolves the profile (Options.Profile, else the current one),
// registers the native tools, the lua tool (backed by RunSandboxed) and the
// tools added so far with tai.tool. Nothing is built before a binding
// needs a model or a tool, so start-up does no engine, vault or network
// work. Call it only from the goroutine that owns the host.
func (h *Host) Engine() (*engine.Engine, error) {
	if h.eng != nil {
		return h.eng, nil
	}
	store, err := h.Vault()
	if err != nil {
		return nil, err
	}
	var o engine.Options
	if h.opts.Engine != nil {
		o = *h.opts.Engine
	}
	o.Mode = h.opts.Mode
	o.Profile = h.profileFlag
	o.Prompter = hostPrompter{h}
	o.Client = h.clientOptions()
	if o.LuaRunner == nil {
		o.LuaRunner = RunSandboxed
	}
	e, err := engine.New(store, &o)
	if err != nil {
		return nil, err
	}
	for _, t := range h.luaTools {
		if err := e.Tools().Add(t); err != nil {
			return nil, fmt.Errorf("tai.tool %s: %w", t.Name, err)
		}
	}
	h.luaTools = nil
	h.eng = e
	return e, nil
}

// luaProfileField answers tai.profile: the engine's profile once it is
// built, else the --profile flag, else the current profile remembered in the
// vault, else "default". It is computed on each read, so a switch made by
// tai.profiles.use or by another process shows at once.
func (h *Host) luaProfileField(L *glua.LState) int {
	if L.CheckString(2) != "profile" {
		L.Push(glua.LNil)
		return 1
	}
	L.Push(glua.LString(h.currentProfileName()))
	return 1
}

func (h *Host) currentProfileName() string {
	if h.eng != nil {
		return h.eng.Profile().Name
	}
	s, err := h.Vault()
	if err == nil {
		var p engine.Profile
		if p, err = engine.ResolveProfile(s, h.profileFlag, h.getenv()); err == nil {
			return p.Name
		}
	}
	if h.profileFlag != "" {
		return h.profileFlag
	}
	return h.opts.Profile
}

// getenv is the engine options' Getenv, else os.Getenv.
func (h *Host) getenv() func(string) string {
	if o := h.opts.Engine; o != nil && o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// openEngine installs the bindings over the engine:
//
//	tai.call(tool, args) -> {content={…}, isError=bool} | nil, err
//	tai.tools() -> {{name=, description=, safe=, parameters=}, …}
//	tai.tool{name=, description=, parameters=, safe=, run=}
//	tai.chat(message [, opts]) -> text, {steps=, exhausted=, truncated=, filtered=,
//	        empty=, finish_reason=, usage=, profile=} | nil, err
//	    opts: profile, max_steps, tools (names or patterns), system, reset,
//	    on_text(delta), on_waiting(waiting, tick), on_tool_start(ev),
//	    on_tool_end(ev), on_retry(notice)
//	    notice: {text=, reason=, status=, wait=(seconds), attempt=, attempts=,
//	        provider=, model=}
//	tai.chat_reset([opts])   forgets the conversation tai.chat keeps
//	tai.complete(messages [, opts]) -> text, {finish_reason=, usage=} | nil, err
//	    opts: on_retry(notice), as for tai.chat
//	tai.prompter{confirm=fn(consent) -> bool, ask=fn(question) -> answer} | tai.prompter(nil)
//	tai.profiles.list() / current() / get(name) / use(name) / save(t) / delete(name)
//	tai.mode   the approval mode: "interactive", "auto" or "yolo"
func (h *Host) openEngine(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("call", L.NewFunction(h.luaCallTool))
	tai.RawSetString("tools", L.NewFunction(h.listTools))
	tai.RawSetString("tool", L.NewFunction(h.luaAddTool))
	tai.RawSetString("chat", L.NewFunction(h.luaChat))
	tai.RawSetString("chat_reset", L.NewFunction(h.luaChatReset))
	tai.RawSetString("complete", L.NewFunction(h.luaComplete))
	tai.RawSetString("prompter", L.NewFunction(h.luaSetPrompter))
	tai.RawSetString("mode", glua.LString(h.opts.Mode.String()))
	tai.RawSetString("profiles", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"list":    h.profilesList,
		"current": h.profilesCurrent,
		"get":     h.profilesGet,
		"use":     h.profilesUse,
		"save":    h.profilesSave,
		"delete":  h.profilesDelete,
	}))
}

// argsTable reads argument n, an optional table, as a JSON object.
func argsTable(L *glua.LState, n int, what string) map[string]any {
	v := L.Get(n)
	if v == glua.LNil {
		return map[string]any{}
	}
	t, ok := v.(*glua.LTable)
	if !ok {
		L.ArgError(n, what+" must be a table, not a "+v.Type().String())
	}
	g, err := FromLua(L, t)
	if err != nil {
		L.ArgError(n, what+": "+err.Error())
	}
	switch x := g.(type) {
	case map[string]any:
		return x
	case []any:
		if len(x) == 0 {
			return map[string]any{}
		}
	}
	L.ArgError(n, what+" must be a table with named fields, not a list")
	return nil
}

// luaCallTool is tai.call(tool, args): the same Dispatch path the model
// uses (approval, audit, redaction, spill).
func (h *Host) luaCallTool(L *glua.LState) int {
	name := L.CheckString(1)
	args := argsTable(L, 2, "args")
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	ctx := luaContext(L)
	var res engine.Result
	var derr error
	h.Await(func() { res, derr = e.Dispatch(ctx, name, args) })
	if derr != nil {
		return fail(L, derr.Error())
	}
	t, err := resultTable(L, res)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(t)
	return 1
}

// resultTable converts a tool result to {content={…}, isError=bool}.
func resultTable(L *glua.LState, res engine.Result) (*glua.LTable, error) {
	content := NewArray(L)
	for _, c := range res.Content {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		v, err := ToLua(L, json.RawMessage(b))
		if err != nil {
			return nil, err
		}
		content.Append(v)
	}
	t := L.NewTable()
	t.RawSetString("content", content)
	t.RawSetString("isError", glua.LBool(res.IsError))
	return t, nil
}

// listTools is tai.tools().
func (h *Host) listTools(L *glua.LState) int {
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	out := L.NewTable()
	for _, t := range e.Tools().Tools() {
		row := L.NewTable()
		row.RawSetString("name", glua.LString(t.Name))
		row.RawSetString("description", glua.LString(t.Description))
		row.RawSetString("safe", glua.LBool(t.Safe))
		params, err := ToLua(L, t.Parameters)
		if err != nil {
			return fail(L, fmt.Sprintf("tool %s: parameters: %v", t.Name, err))
		}
		row.RawSetString("parameters", params)
		out.Append(row)
	}
	L.Push(out)
	return 1
}

// luaAddTool is tai.tool{name=, description=, parameters=, safe=, run=}:
// a tool written in Lua, dispatched like the native ones. run(args)
// returns a string (text content), a {content=…, isError=…} table, or any
// other value (sent as its JSON text); a Lua error becomes an isError
// result. run always runs on the goroutine that owns the state. In
// parameters an empty table under a keyword that takes an array (required,
// enum, anyOf, …) is sent as [].
func (h *Host) luaAddTool(L *glua.LState) int {
	spec := L.CheckTable(1)
	name, _ := spec.RawGetString("name").(glua.LString)
	if err := engine.ValidToolName(string(name)); err != nil {
		L.ArgError(1, "name: "+err.Error())
	}
	desc, ok := spec.RawGetString("description").(glua.LString)
	if !ok || strings.TrimSpace(string(desc)) == "" {
		L.ArgError(1, "description: give a sentence saying what the tool does (the model chooses tools by it)")
	}
	run, ok := spec.RawGetString("run").(*glua.LFunction)
	if !ok {
		L.ArgError(1, "run: a function(args) returning the result is required")
	}
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if pv := spec.RawGetString("parameters"); pv != glua.LNil {
		g, err := FromLua(L, pv)
		m, isMap := g.(map[string]any)
		if err != nil || !isMap {
			msg := "must be a JSON Schema table such as {type=\"object\", properties={…}}"
			if err != nil {
				msg = err.Error()
			}
			L.ArgError(1, "parameters: "+msg)
		}
		if m["type"] == nil {
			m["type"] = "object"
		}
		if m["type"] != "object" {
			L.ArgError(1, "parameters: the root type must be \"object\"")
		}
		params = schemaArrays(m)
	}
	t := engine.Tool{
		Name:        string(name),
		Description: string(desc),
		Parameters:  params,
		Safe:        glua.LVAsBool(spec.RawGetString("safe")),
		Run:         h.luaToolRun(string(name), run),
	}
	if h.eng != nil {
		if err := h.eng.Tools().Add(t); err != nil {
			L.ArgError(1, err.Error())
		}
		return 0
	}
	for i, old := range h.luaTools {
		if old.Name == t.Name {
			h.luaTools[i] = t
			return 0
		}
	}
	h.luaTools = append(h.luaTools, t)
	return 0
}

// JSON Schema keywords by the shape of their value. An empty Lua table has
// no JSON shape of its own and converts to {}; schemaArrays turns it into
// [] where the keyword needs an array.
var (
	schemaArrayKeywords  = []string{"required", "enum", "examples", "type"}
	schemaListKeywords   = []string{"anyOf", "oneOf", "allOf", "prefixItems"}                                                                                                                  // arrays of schemas
	schemaSchemaKeywords = []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"} // one schema
	schemaMapKeywords    = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}                                                                             // name -> schema
)

// schemaArrays returns schema with every empty object standing where a
// keyword needs an array replaced by an empty array, in it and in every
// schema nested in it (so {required = {}} sends "required": [], which JSON
// Schema accepts, not "required": {}, which it does not).
func schemaArrays(schema map[string]any) map[string]any {
	for _, k := range schemaArrayKeywords {
		if m, ok := schema[k].(map[string]any); ok && len(m) == 0 {
			schema[k] = []any{}
		}
	}
	for _, k := range schemaListKeywords {
		switch v := schema[k].(type) {
		case map[string]any:
			if len(v) == 0 {
				schema[k] = []any{}
			}
		case []any:
			for _, e := range v {
				if sub, ok := e.(map[string]any); ok {
					schemaArrays(sub)
				}
			}
		}
	}
	for _, k := range schemaSchemaKeywords {
		switch v := schema[k].(type) {
		case map[string]any:
			schemaArrays(v)
		case []any: // items as a list, before draft 2020-12
			for _, e := range v {
				if sub, ok := e.(map[string]any); ok {
					schemaArrays(sub)
				}
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := schema[k].(map[string]any); ok {
			for _, e := range m {
				if sub, ok := e.(map[string]any); ok {
					schemaArrays(sub)
				}
			}
		}
	}
	return schema
}

// luaToolRun returns the Go run function of a Lua tool: it sends the call
// to the goroutine that owns the state and waits for it.
func (h *Host) luaToolRun(name string, fn *glua.LFunction) func(context.Context, map[string]any) (engine.Result, error) {
	return func(ctx context.Context, args map[string]any) (engine.Result, error) {
		var res engine.Result
		err := h.onLua(ctx, func() {
			L := h.L
			a, err := ToLua(L, args)
			if err != nil {
				res = engine.ErrorResult("%s: arguments: %v", name, err)
				return
			}
			out, err := h.callLua(fn, 1, a)
			if err != nil {
				msg := err.Error()
				var le *Error
				if errors.As(err, &le) {
					msg = le.Message
				}
				res = engine.ErrorResult("%s failed: %s", name, msg)
				return
			}
			res = toolResult(L, out[0])
		})
		return res, err
	}
}

// toolResult turns what a Lua tool returned into a Result.
func toolResult(L *glua.LState, v glua.LValue) engine.Result {
	switch x := v.(type) {
	case glua.LString:
		return engine.TextResult(string(x))
	case *glua.LNilType:
		return engine.TextResult("")
	case *glua.LTable:
		if c := x.RawGetString("content"); c != glua.LNil {
			res := engine.Result{IsError: glua.LVAsBool(x.RawGetString("isError"))}
			switch cv := c.(type) {
			case glua.LString:
				res.Content = []engine.Content{{Type: "text", Text: string(cv)}}
				return res
			case *glua.LTable:
				g, err := FromLua(L, cv)
				if err != nil {
					return engine.ErrorResult("the tool's content does not convert: %v", err)
				}
				items, ok := g.([]any)
				if !ok {
					items = []any{g}
				}
				for i, it := range items {
					if s, ok := it.(string); ok {
						res.Content = append(res.Content, engine.Content{Type: "text", Text: s})
						continue
					}
					b, err := json.Marshal(it)
					if err != nil {
						return engine.ErrorResult("content item %d: %v", i+1, err)
					}
					var c engine.Content
					if err := json.Unmarshal(b, &c); err != nil {
						return engine.ErrorResult("content item %d is not an MCP content block: %v", i+1, err)
					}
					if c.Type == "" {
						return engine.ErrorResult("content item %d has no type; use {type=\"text\", text=…}", i+1)
					}
					res.Content = append(res.Content, c)
				}
				return res
			default:
				return engine.ErrorResult("the tool returned content of type %s; use a string or a list of {type=, text=} items", c.Type())
			}
		}
	}
	g, err := FromLua(L, v)
	if err != nil {
		return engine.TextResult(L.ToStringMeta(v).String())
	}
	b, err := json.Marshal(g)
	if err != nil {
		return engine.ErrorResult("the tool's result does not encode: %v", err)
	}
	return engine.TextResult(string(b))
}

// chatKey names one of the host's agents: tai.chat keeps one conversation
// per profile, tool subset and system prompt.
type chatKey struct{ profile, tools, system string }

// chatAgent returns the agent for key, creating it.
func (h *Host) chatAgent(e *engine.Engine, key chatKey, tools []string) (*engine.Agent, error) {
	if a, ok := h.agents[key]; ok {
		return a, nil
	}
	opts := &engine.AgentOptions{Tools: tools, System: key.system}
	var a *engine.Agent
	if key.profile == "" {
		a = e.NewAgent(opts)
	} else {
		src, err := h.profileModel(e, key.profile)
		if err != nil {
			return nil, err
		}
		a = engine.NewAgent(e.Tools(), src, opts)
	}
	h.agents[key] = a
	return a, nil
}

// clientOptions are the model clients' options: the host's Engine.Client,
// with retries reported on Stderr ("tai: rate limited (429); retrying in
// 30s, attempt 2/4") unless a turn has its own on_retry or the options
// their own OnRetry, so that no wait passes in silence.
func (h *Host) clientOptions() *engine.ClientOptions {
	var c engine.ClientOptions
	if o := h.opts.Engine; o != nil && o.Client != nil {
		c = *o.Client
	}
	if c.OnRetry == nil {
		c.OnRetry = func(n engine.RetryNotice) {
			fmt.Fprintf(h.opts.Stderr, "tai: %s\n", n)
		}
	}
	return &c
}

// profileModel is a ModelSource for a named profile other than the current
// one; its client is built on the first turn.
func (h *Host) profileModel(e *engine.Engine, name string) (engine.ModelSource, error) {
	getenv := h.getenv()
	copts := h.clientOptions()
	var newClient func(engine.Profile) (engine.ChatClient, error)
	if o := h.opts.Engine; o != nil {
		newClient = o.NewClient
	}
	p, err := engine.ResolveProfile(e.Store(), name, getenv)
	if err != nil {
		return nil, err
	}
	if newClient == nil {
		c := *copts
		if c.Getenv == nil {
			c.Getenv = getenv
		}
		newClient = func(p engine.Profile) (engine.ChatClient, error) { return engine.NewChatClient(p, e.Store(), &c) }
	}
	var mu sync.Mutex
	var client engine.ChatClient
	return func(context.Context) (engine.Model, error) {
		mu.Lock()
		defer mu.Unlock()
		if client == nil {
			c, err := newClient(p)
			if err != nil {
				return engine.Model{}, err
			}
			client = c
		}
		return engine.Model{Client: client, System: p.System, Tools: p.Tools, MaxTokens: p.MaxTokens}, nil
	}, nil
}

// chatOpts is tai.chat's option table.
type chatOpts struct {
	key      chatKey
	tools    []string
	maxSteps int
	reset    bool
	onText   *glua.LFunction
	onWait   *glua.LFunction
	onStart  *glua.LFunction
	onEnd    *glua.LFunction
	onRetry  *glua.LFunction
}

func readChatOpts(L *glua.LState, n int) chatOpts {
	var o chatOpts
	t := L.OptTable(n, nil)
	if t == nil {
		return o
	}
	str := func(field string) string {
		switch v := t.RawGetString(field).(type) {
		case glua.LString:
			return string(v)
		case *glua.LNilType:
			return ""
		default:
			L.ArgError(n, field+" must be a string, not a "+v.Type().String())
		}
		return ""
	}
	fn := func(field string) *glua.LFunction {
		switch v := t.RawGetString(field).(type) {
		case *glua.LFunction:
			return v
		case *glua.LNilType:
			return nil
		default:
			L.ArgError(n, field+" must be a function, not a "+v.Type().String())
		}
		return nil
	}
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
	o.onText = fn("on_text")
	o.onWait = fn("on_waiting")
	o.onStart = fn("on_tool_start")
	o.onEnd = fn("on_tool_end")
	o.onRetry = fn("on_retry")
	return o
}

// spinnerTick is how often on_waiting is called again while the model is
// silent, so a front end can animate a spinner.
const spinnerTick = 100 * time.Millisecond

// luaChat is tai.chat(message [, opts]).
func (h *Host) luaChat(L *glua.LState) int {
	message := L.CheckString(1)
	o := readChatOpts(L, 2)
	if strings.TrimSpace(message) == "" {
		L.ArgError(1, "the message is empty")
	}
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	agent, err := h.chatAgent(e, o.key, o.tools)
	if err != nil {
		return fail(L, err.Error())
	}
	if h.busy[agent] {
		// A Lua tool called during a turn asked for a turn on the same
		// conversation: it would wait for itself forever.
		return fail(L, "tai.chat is already running a turn on this conversation (called from a tool of that turn?); "+
			"give a different profile, tools or system option for a separate conversation")
	}
	h.busy[agent] = true
	defer delete(h.busy, agent)
	if o.reset {
		agent.Reset()
	}
	agent.SetMaxSteps(o.maxSteps)
	ctx := luaContext(L)
	agent.SetEvents(h.chatEvents(ctx, o))
	defer agent.SetEvents(engine.Events{})

	var turn engine.Turn
	var terr error
	h.Await(func() { turn, terr = agent.RunTurn(ctx, message) })
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
	d.RawSetString("profile", glua.LString(h.chatProfile(e, o.key)))
	L.Push(d)
	return 2
}

func (h *Host) chatProfile(e *engine.Engine, key chatKey) string {
	if key.profile != "" {
		return key.profile
	}
	return e.Profile().Name
}

func usageTable(L *glua.LState, u engine.Usage) *glua.LTable {
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
			if _, err := h.callLua(fn, 0, args()...); err != nil && ctx.Err() == nil {
				mu.Lock()
				broken[fn] = true
				mu.Unlock()
				fmt.Fprintf(h.opts.Stderr, "tai: chat callback failed (not called again this turn): %v\n", err)
			}
		})
	}
	if o.onText != nil {
		ev.OnText = func(d string) {
			call(o.onText, func() []glua.LValue { return []glua.LValue{glua.LString(d)} })
		}
	}
	if o.onWait != nil {
		var wmu sync.Mutex
		var stop context.CancelFunc
		var stopped chan struct{}
		ev.OnWaiting = func(waiting bool) {
			wmu.Lock()
			defer wmu.Unlock()
			if stop != nil {
				stop()
				<-stopped
				stop, stopped = nil, nil
			}
			if !waiting {
				call(o.onWait, func() []glua.LValue { return []glua.LValue{glua.LFalse} })
				return
			}
			call(o.onWait, func() []glua.LValue { return []glua.LValue{glua.LTrue, glua.LNumber(0)} })
			tctx, cancel := context.WithCancel(ctx)
			stop, stopped = cancel, make(chan struct{})
			go h.spin(tctx, o.onWait, stopped, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return broken[o.onWait]
			})
		}
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
	if o.onRetry != nil {
		ev.OnRetry = func(n engine.RetryNotice) {
			call(o.onRetry, func() []glua.LValue { return []glua.LValue{retryTable(h.L, n)} })
		}
	}
	return ev
}

// retryTable is the table on_retry receives: text is the notice rendered
// for a person ("rate limited (429); retrying in 30s, attempt 2/4").
func retryTable(L *glua.LState, n engine.RetryNotice) *glua.LTable {
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

// spin calls fn(true, n) every spinnerTick until ctx ends, then closes
// stopped.
func (h *Host) spin(ctx context.Context, fn *glua.LFunction, stopped chan struct{}, broken func() bool) {
	defer close(stopped)
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
				_, _ = h.callLua(fn, 0, glua.LTrue, glua.LNumber(n))
			}
		})
	}
}

// toolEventTable converts a tool event: {id=, name=, digest=, args=,
// outcome=, duration_ms=}. args are already redacted by the engine.
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
		t.RawSetString("duration_ms", glua.LNumber(float64(te.Duration.Microseconds())/1000))
	}
	return t
}

// luaChatReset is tai.chat_reset([opts]): forgets the conversation of the
// agent opts names (profile, tools, system), or of every agent.
func (h *Host) luaChatReset(L *glua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == glua.LNil {
		for _, a := range h.agents {
			a.Reset()
		}
		return 0
	}
	o := readChatOpts(L, 1)
	if a, ok := h.agents[o.key]; ok {
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
	msgs := make([]engine.Message, 0, n)
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
		msgs = append(msgs, engine.Message{Role: string(role), Content: string(content)})
	}
	var onRetry *glua.LFunction
	if t := L.OptTable(2, nil); t != nil {
		switch v := t.RawGetString("on_retry").(type) {
		case *glua.LFunction:
			onRetry = v
		case *glua.LNilType:
		default:
			L.ArgError(2, "on_retry must be a function, not a "+v.Type().String())
		}
	}
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	ctx := luaContext(L)
	if onRetry != nil {
		ctx = engine.WithRetryNotice(ctx, h.chatEvents(ctx, chatOpts{onRetry: onRetry}).OnRetry)
	}
	var resp engine.Response
	var cerr error
	h.Await(func() { resp, cerr = e.Complete(ctx, msgs) })
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

// Prompting ------------------------------------------------------------------

// hostPrompter is the engine's Prompter: it asks through the Lua functions
// installed with tai.prompter (the REPL's consent screen), run on the
// goroutine that owns the state. With none installed nobody can answer.
type hostPrompter struct{ h *Host }

func (h *Host) prompterFns() (confirm, ask *glua.LFunction) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.confirmFn, h.askFn
}

// Confirm implements engine.Prompter.
func (p hostPrompter) Confirm(ctx context.Context, c engine.Consent) (bool, error) {
	fn, _ := p.h.prompterFns()
	if fn == nil {
		return false, engine.ErrNoPrompter
	}
	var ok bool
	var cerr error
	err := p.h.onLua(ctx, func() {
		L := p.h.L
		t := L.NewTable()
		t.RawSetString("tool", glua.LString(c.Tool))
		t.RawSetString("origin", glua.LString(c.Origin))
		t.RawSetString("digest", glua.LString(c.Digest))
		if args, err := ToLua(L, c.Args); err == nil {
			t.RawSetString("args", args)
		}
		out, err := p.h.callLua(fn, 1, t)
		if err != nil {
			cerr = err
			return
		}
		ok = glua.LVAsBool(out[0])
	})
	if err != nil {
		return false, err
	}
	return ok, cerr
}

// Ask implements engine.Prompter.
func (p hostPrompter) Ask(ctx context.Context, question string) (string, error) {
	_, fn := p.h.prompterFns()
	if fn == nil {
		return "", engine.ErrNoPrompter
	}
	var answer string
	var aerr error
	err := p.h.onLua(ctx, func() {
		out, err := p.h.callLua(fn, 2, glua.LString(question))
		if err != nil {
			aerr = err
			return
		}
		s, ok := out[0].(glua.LString)
		if !ok {
			msg := "no answer"
			if e, isStr := out[1].(glua.LString); isStr {
				msg = string(e)
			}
			aerr = errors.New("the person gave no answer: " + msg)
			return
		}
		answer = string(s)
	})
	if err != nil {
		return "", err
	}
	return answer, aerr
}

// luaSetPrompter is tai.prompter{confirm=fn, ask=fn} (nil removes them).
func (h *Host) luaSetPrompter(L *glua.LState) int {
	var confirm, ask *glua.LFunction
	if v := L.Get(1); v != glua.LNil {
		t := L.CheckTable(1)
		var ok bool
		if confirm, ok = t.RawGetString("confirm").(*glua.LFunction); !ok {
			L.ArgError(1, "confirm must be a function(consent) returning true to allow the call")
		}
		if ask, ok = t.RawGetString("ask").(*glua.LFunction); !ok {
			L.ArgError(1, "ask must be a function(question) returning the answer")
		}
	}
	h.mu.Lock()
	h.confirmFn, h.askFn = confirm, ask
	h.mu.Unlock()
	return 0
}

// Profiles -------------------------------------------------------------------

// profileTable converts a profile; keys are named by where they live,
// never shown.
func profileTable(L *glua.LState, p engine.Profile) *glua.LTable {
	b, _ := json.Marshal(p)
	v, err := ToLua(L, json.RawMessage(b))
	if t, ok := v.(*glua.LTable); ok && err == nil {
		return t
	}
	t := L.NewTable()
	t.RawSetString("name", glua.LString(p.Name))
	return t
}

func (h *Host) profilesList(L *glua.LState) int {
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	list, err := engine.ListProfiles(e.Store())
	if err != nil {
		return fail(L, err.Error())
	}
	cur := e.Profile()
	found := false
	for _, p := range list {
		found = found || p.Name == cur.Name
	}
	if !found {
		list = append(list, cur)
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	out := L.NewTable()
	for _, p := range list {
		t := profileTable(L, p)
		t.RawSetString("current", glua.LBool(p.Name == cur.Name))
		out.Append(t)
	}
	L.Push(out)
	return 1
}

func (h *Host) profilesCurrent(L *glua.LState) int {
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, e.Profile()))
	return 1
}

func (h *Host) profilesGet(L *glua.LState) int {
	name := L.CheckString(1)
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	if name == e.Profile().Name {
		L.Push(profileTable(L, e.Profile()))
		return 1
	}
	getenv := os.Getenv
	if h.opts.Engine != nil && h.opts.Engine.Getenv != nil {
		getenv = h.opts.Engine.Getenv
	}
	p, err := engine.ResolveProfile(e.Store(), name, getenv)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, p))
	return 1
}

func (h *Host) profilesUse(L *glua.LState) int {
	name := L.CheckString(1)
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	p, err := e.UseProfile(name)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, p))
	return 1
}

func (h *Host) profilesSave(L *glua.LState) int {
	fields := argsTable(L, 1, "profile")
	b, err := json.Marshal(fields)
	if err != nil {
		L.ArgError(1, err.Error())
	}
	var p engine.Profile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		L.ArgError(1, "profile fields are name, provider, base_url, model, key_secret, key_env, system, tools, max_tokens: "+err.Error())
	}
	if err := p.Validate(); err != nil {
		return fail(L, err.Error())
	}
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	if err := e.SaveProfile(p); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func (h *Host) profilesDelete(L *glua.LState) int {
	name := L.CheckString(1)
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	if err := e.DeleteProfile(name); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}
