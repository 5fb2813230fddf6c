package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/server"
)

// The two tools tai serves beside its native ones.
const (
	// ServedChat runs a full agent turn on the MCP session's own agent.
	ServedChat = "chat"
	// ServedCompletions makes one stateless completion without tools.
	ServedCompletions = "completions"
)

// Limits of the served extras.
const (
	// ServedMaxSteps is the largest max_steps a served chat may ask for.
	ServedMaxSteps = 100
	// ServedMaxConversations bounds the named conversations (chat's
	// session argument) of one MCP session.
	ServedMaxConversations = 16
)

// ServedOptions tunes Engine.Served. A nil *ServedOptions means defaults.
type ServedOptions struct {
	// ChatTimeout bounds one served chat turn; zero means
	// mcp.MCP_CHAT_TIMEOUT.
	ChatTimeout time.Duration
	// ToolBudget is how many tokens the schemas of every tool may take
	// before a served chat turn chooses among them (TurnOptions.ToolBudget);
	// zero means DefaultToolBudget.
	ToolBudget int
}

// Served is the catalogue tai serves over MCP (it implements
// server.Catalog): every native tool, verbatim, plus chat and completions.
// Tools bridged from other MCP servers are never served: transitive
// serving would launder untrusted servers through tai's identity. Each MCP
// session is a Session of the engine with its own profile, history and an
// approver that runs non-safe tools without asking (the key is the
// authorization, as with --yolo) and has nobody to answer questions, so
// ask_user and the profile changes a model asks for are refused. The two
// extras are tools of the MCP session's own, which the registry resolves
// only for a served call: they are prepared, checked against their
// schemas, audited (as "mcp-serve"), redacted and spilled like any other,
// and never offered to a model or resolved outside a served call.
type Served struct {
	eng         *Engine
	chatTimeout time.Duration
	toolBudget  int
	// extras are chat and completions without their Run, which each MCP
	// session binds to itself; listed is how tools/list shows them.
	extras []tool.Tool
	listed []server.Tool
}

// Served returns the engine's MCP catalogue.
func (e *Engine) Served(opts *ServedOptions) *Served {
	c := &Served{eng: e, chatTimeout: mcp.MCP_CHAT_TIMEOUT, extras: servedExtras()}
	if opts != nil && opts.ChatTimeout > 0 {
		c.chatTimeout = opts.ChatTimeout
	}
	if opts != nil {
		c.toolBudget = opts.ToolBudget
	}
	for _, t := range c.extras {
		if l, ok := listedTool(t); ok {
			c.listed = append(c.listed, l)
		}
	}
	return c
}

// Tools lists every native tool (name, description, parameters as
// inputSchema) and the two extras, sorted by name with the extras last.
func (c *Served) Tools() []server.Tool {
	native := c.eng.reg.NativeTools()
	out := make([]server.Tool, 0, len(native)+len(c.listed))
	for _, t := range native {
		if t.Name == ServedChat || t.Name == ServedCompletions {
			continue // the extras win over a Lua tool of the same name
		}
		if l, ok := listedTool(t); ok {
			out = append(out, l)
		}
	}
	return append(out, c.listed...)
}

// listedTool is t as tools/list shows it; false when its schema cannot be
// encoded.
func listedTool(t tool.Tool) (server.Tool, bool) {
	spec := t.Spec()
	schema, err := json.Marshal(spec.Parameters)
	if err != nil {
		return server.Tool{}, false
	}
	desc := spec.Description
	if strings.TrimSpace(desc) == "" {
		desc = "The " + t.Name + " tool."
	}
	return server.Tool{Name: t.Name, Description: desc, InputSchema: schema}, true
}

// servedExtras returns chat and completions, in that order, without Run.
func servedExtras() []tool.Tool {
	str := func(desc string) map[string]any { return tool.Prop("string", desc) }
	steps := tool.Prop("integer", "model calls allowed in this turn")
	steps["minimum"], steps["maximum"] = 1, ServedMaxSteps
	message := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"role":    map[string]any{"type": "string", "enum": []any{"system", "user", "assistant"}},
			"content": map[string]any{"type": "string"},
		},
		"required":             []string{"role", "content"},
		"additionalProperties": false,
	}
	return []tool.Tool{
		{
			Name: ServedChat,
			Description: "Send a message to tai's agent and get its answer: a full agent turn with tai's tools on this " +
				"MCP session's own conversation, whose history is kept between calls. Name a session to keep a separate " +
				"conversation; give a profile to switch that conversation's model profile.",
			Parameters: tool.Schema([]string{"message"}, map[string]any{
				"message":   str("what to ask or tell the agent"),
				"session":   str("name of a separate conversation within this MCP session (default: the main one)"),
				"profile":   str("model profile to use from now on in this conversation"),
				"max_steps": steps,
			}),
			AuditKind: servedAuditKind,
		},
		{
			Name: ServedCompletions,
			Description: "Make one stateless completion with tai's current model, without tools and without history: " +
				"give the whole conversation as messages with roles system, user or assistant; returns the answer.",
			Parameters: tool.Schema([]string{"messages"}, map[string]any{
				"messages": map[string]any{"type": "array", "minItems": 1, "items": message},
			}),
			AuditKind: servedAuditKind,
		},
	}
}

// servedAuditKind is the audit kind of the served extras' calls.
const servedAuditKind = "mcp-serve"

// Open makes the engine session of a new MCP session.
func (c *Served) Open(_ context.Context, id string) (server.Session, error) {
	name := "mcp:" + id
	if len(id) > 8 {
		name = "mcp:" + id[:8]
	}
	s, err := c.newSession(name)
	if err != nil {
		return nil, err
	}
	ss := &servedSession{cat: c, name: name, main: s, named: map[string]*Session{}, extras: map[string]tool.Tool{}}
	for _, t := range c.extras {
		switch t.Name {
		case ServedChat:
			t.Run = ss.chat
		case ServedCompletions:
			t.Run = ss.completions
		}
		ss.extras[t.Name] = t
	}
	return ss, nil
}

func (c *Served) newSession(name string) (*Session, error) {
	// Nobody is present: non-safe tools run (the key is the
	// authorization), questions and profile changes are refused.
	return c.eng.NewSession(&SessionOptions{Name: name, Approver: tool.NewApprover(tool.Yolo, nil)})
}

// servedSession is one MCP session: its main engine session and the
// conversations chat's session argument names.
type servedSession struct {
	cat  *Served
	name string
	main *Session

	// extras are chat and completions bound to this session.
	extras map[string]tool.Tool

	mu    sync.Mutex
	named map[string]*Session
}

// Close implements server.Session; nothing is held beyond memory.
func (s *servedSession) Close() {}

// Call implements server.Session: chat, completions, or a native tool
// through the registry (approval, audit with the session, redaction,
// spill).
func (s *servedSession) Call(ctx context.Context, name string, raw json.RawMessage) (json.RawMessage, error) {
	args := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return nil, fmt.Errorf("%w: the arguments of %s are not a JSON object", server.ErrInvalidParams, name)
		}
	}
	// The registry resolves only native tools here and the extras, and
	// audits an unknown name with the session like any other call.
	c := tool.CallerFrom(ctx)
	c.NativeOnly = true
	if t, ok := s.extras[name]; ok {
		c.Own = map[string]tool.Tool{name: t}
	}
	if report := server.ProgressFrom(ctx); report != nil {
		c.Progress = func(p tool.Progress) { report(p.Progress, p.Total, p.Message) }
	}
	res, err := s.main.Dispatch(tool.WithCaller(ctx, c), name, args)
	switch {
	case errors.Is(err, tool.ErrUnknownTool):
		if verr := mcp.CheckToolName(name); verr != nil {
			return nil, fmt.Errorf("%w: %v", server.ErrInvalidParams, verr)
		}
		return nil, fmt.Errorf("%w %q: tools/list names the tools this server serves", server.ErrUnknownTool, name)
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		// Denied, refused or failed to run: the tool did not give a
		// result, which the client sees as a failed call.
		res = tool.ErrorResult("%s", s.cat.eng.store.Redact(err.Error()))
	}
	// The server checks the whole answer as it encodes it.
	return res.AppendJSON(make([]byte, 0, 64+res.Size())), nil
}

// unserved returns ctx without what marks a served call: a chat turn is
// a full agent's, whose calls may reach bridged tools and never the
// extras.
func unserved(ctx context.Context) context.Context {
	c := tool.CallerFrom(ctx)
	c.NativeOnly, c.Own, c.Progress = false, nil, nil
	return tool.WithCaller(ctx, c)
}

// conversation returns the engine session chat's session argument names.
func (s *servedSession) conversation(name string) (*Session, error) {
	if name == "" {
		return s.main, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.named[name]; ok {
		return c, nil
	}
	if len(s.named) >= ServedMaxConversations {
		return nil, fmt.Errorf("this MCP session already has %d named conversations, the most it may: reuse one of their names", ServedMaxConversations)
	}
	c, err := s.cat.newSession(s.name)
	if err != nil {
		return nil, err
	}
	s.named[name] = c
	return c, nil
}

// chat runs a full turn on the conversation's own agent. The registry
// has checked the arguments against chat's schema.
func (s *servedSession) chat(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	message := a.Str("message", true)
	conv := a.Str("session", false)
	profile := a.Str("profile", false)
	steps := a.Int("max_steps", 0)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if strings.TrimSpace(message) == "" {
		return tool.ErrorResult("chat: the message is empty: say what to ask or tell the agent"), nil
	}
	sess, err := s.conversation(conv)
	if err != nil {
		return tool.ErrorResult("chat: %v", err), nil
	}
	if profile != "" && profile != sess.Profile().Name {
		// The client holding the key asks, not the model: this moves only
		// this conversation.
		if _, err := sess.SwitchProfile(profile); err != nil {
			return tool.ErrorResult("chat: profile %q: %v", profile, err), nil
		}
	}
	var events Events
	if report := tool.CallerFrom(ctx).Progress; report != nil {
		events = s.chatProgress(report)
	}
	ctx, cancel := context.WithTimeout(WithSession(unserved(ctx), sess), s.cat.chatTimeout)
	defer cancel()
	turn, err := sess.RunTurn(ctx, message, &TurnOptions{MaxSteps: steps, Capture: true, ToolBudget: s.cat.toolBudget, Events: events})
	if err != nil {
		why := err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("the turn ran past its deadline of %s (MCP_CHAT_TIMEOUT) after %d steps", s.cat.chatTimeout, turn.Steps)
		}
		return tool.ErrorResult("chat failed: %s", why), nil
	}
	text := turn.Text
	switch {
	case turn.Filtered:
		text = strings.TrimSpace(text + "\n[the answer was withheld or cut by the provider's content filter, or refused]")
	case turn.Truncated:
		text += "\n[the answer was cut off at the model's output token limit]"
	case turn.Empty:
		text = strings.TrimSpace(text + "\n[the model returned an empty answer]")
	}
	return tool.TextResult(text), nil
}

// chatProgress returns the events of a served chat turn whose client asked
// for progress: each model call and each tool call the model makes is one
// more step of progress ("step 2: thinking", "step 3: running
// read_file"). Only the tool's name is said, visible and redacted; never
// its arguments, its result or the model's text.
func (s *servedSession) chatProgress(report func(tool.Progress)) Events {
	var mu sync.Mutex
	n, model := 0, 0
	step := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		report(tool.Progress{Progress: float64(n), Message: fmt.Sprintf("step %d: %s", model, what)})
	}
	return Events{
		OnWaiting: func(waiting bool) {
			if waiting {
				mu.Lock()
				model++
				mu.Unlock()
				step("thinking")
			}
		},
		OnToolStart: func(te ToolEvent) {
			name := s.cat.eng.store.Redact(te.Name)
			if mcp.CheckToolName(name) != nil {
				name = mcp.Clip(name) // quoted, visible, cut short
			}
			step("running " + name)
		},
	}
}

// completions makes one stateless completion with the session's model.
// The registry has checked the messages against completions' schema.
func (s *servedSession) completions(ctx context.Context, args map[string]any) (tool.Result, error) {
	list, _ := args["messages"].([]any)
	msgs := make([]llm.Message, 0, len(list))
	for _, v := range list {
		m, _ := v.(map[string]any)
		role, _ := m["role"].(string)
		content, _ := m["content"].(string)
		msgs = append(msgs, llm.Message{Role: role, Content: content})
	}
	resp, err := s.main.Complete(ctx, msgs)
	if err != nil {
		return tool.ErrorResult("completions failed: %v", err), nil
	}
	return tool.TextResult(resp.Message.Content), nil
}
