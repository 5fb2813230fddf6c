package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"tai/mcp"
	"tai/mcp/server"
	"tai/vault"
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
// ask_user and the profile changes a model asks for are refused.
type Served struct {
	eng         *Engine
	chatTimeout time.Duration
	toolBudget  int
}

// Served returns the engine's MCP catalogue.
func (e *Engine) Served(opts *ServedOptions) *Served {
	c := &Served{eng: e, chatTimeout: mcp.MCP_CHAT_TIMEOUT}
	if opts != nil && opts.ChatTimeout > 0 {
		c.chatTimeout = opts.ChatTimeout
	}
	if opts != nil {
		c.toolBudget = opts.ToolBudget
	}
	return c
}

// servedTools returns the registered native tools (never bridged ones).
func (c *Served) servedTools() []Tool {
	return c.eng.reg.NativeTools()
}

// Tools lists every native tool (name, description, parameters as
// inputSchema) and the two extras, sorted by name with the extras last.
func (c *Served) Tools() []server.Tool {
	native := c.servedTools()
	out := make([]server.Tool, 0, len(native)+2)
	for _, t := range native {
		if t.Name == ServedChat || t.Name == ServedCompletions {
			continue // the extras win over a Lua tool of the same name
		}
		spec := t.Spec()
		schema, err := json.Marshal(spec.Parameters)
		if err != nil {
			continue
		}
		desc := spec.Description
		if strings.TrimSpace(desc) == "" {
			desc = "The " + t.Name + " tool."
		}
		out = append(out, server.Tool{Name: t.Name, Description: desc, InputSchema: schema})
	}
	return append(out, servedExtras...)
}

var servedExtras = []server.Tool{
	{
		Name: ServedChat,
		Description: "Send a message to tai's agent and get its answer: a full agent turn with tai's tools on this " +
			"MCP session's own conversation, whose history is kept between calls. Name a session to keep a separate " +
			"conversation; give a profile to switch that conversation's model profile.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"message":{"type":"string","description":"what to ask or tell the agent"},` +
			`"session":{"type":"string","description":"name of a separate conversation within this MCP session (default: the main one)"},` +
			`"profile":{"type":"string","description":"model profile to use from now on in this conversation"},` +
			`"max_steps":{"type":"integer","minimum":1,"maximum":` + fmt.Sprint(ServedMaxSteps) + `,"description":"model calls allowed in this turn"}` +
			`},"required":["message"],"additionalProperties":false}`),
	},
	{
		Name: ServedCompletions,
		Description: "Make one stateless completion with tai's current model, without tools and without history: " +
			"give the whole conversation as messages with roles system, user or assistant; returns the answer.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"messages":{"type":"array","minItems":1,"items":{"type":"object","properties":{` +
			`"role":{"type":"string","enum":["system","user","assistant"]},"content":{"type":"string"}},` +
			`"required":["role","content"],"additionalProperties":false}}` +
			`},"required":["messages"],"additionalProperties":false}`),
	},
}

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
	return &servedSession{cat: c, name: name, main: s, named: map[string]*Session{}}, nil
}

func (c *Served) newSession(name string) (*Session, error) {
	// Nobody is present: non-safe tools run (the key is the
	// authorization), questions and profile changes are refused.
	return c.eng.NewSession(&SessionOptions{Name: name, Approver: NewApprover(Yolo, nil)})
}

// servedSession is one MCP session: its main engine session and the
// conversations chat's session argument names.
type servedSession struct {
	cat  *Served
	name string
	main *Session

	mu    sync.Mutex
	named map[string]*Session
}

// Close implements server.Session; nothing is held beyond memory.
func (s *servedSession) Close() {}

type nativeOnlyKey struct{}

// lookup is Get for Prepare: a fork's own tools come first; under a
// served tool call only registered native tools resolve, never the
// fallback's bridged ones.
func (r *Registry) lookup(ctx context.Context, name string) (Tool, bool) {
	if t, ok := ownTool(ctx, name); ok {
		return t, true
	}
	if ctx.Value(nativeOnlyKey{}) == nil {
		return r.Get(name)
	}
	r.mu.RLock()
	t, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok || t.Origin != "" {
		return Tool{}, false
	}
	return *t, true
}

// sessionName is the audit name of the session calling in ctx.
func sessionName(ctx context.Context) string {
	if s, ok := SessionFrom(ctx); ok {
		return s.name
	}
	return ""
}

// Call implements server.Session: chat, completions, or a native tool
// through the registry (approval, audit with the session, redaction,
// spill).
func (s *servedSession) Call(ctx context.Context, name string, raw json.RawMessage) (json.RawMessage, error) {
	args := map[string]any{}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&args); err != nil || args == nil {
			return nil, fmt.Errorf("%w: the arguments of %s are not a JSON object", server.ErrInvalidParams, name)
		}
	}
	var res Result
	switch name {
	case ServedChat:
		res = s.chat(ctx, args)
	case ServedCompletions:
		res = s.completions(ctx, args)
	default:
		// The registry resolves only native tools here, and audits an
		// unknown name with the session like any other call.
		var err error
		res, err = s.main.Dispatch(context.WithValue(ctx, nativeOnlyKey{}, true), name, args)
		switch {
		case errors.Is(err, ErrUnknownTool):
			if verr := mcp.CheckToolName(name); verr != nil {
				return nil, fmt.Errorf("%w: %v", server.ErrInvalidParams, verr)
			}
			return nil, fmt.Errorf("%w %q: tools/list names the tools this server serves", server.ErrUnknownTool, name)
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			// Denied, refused or failed to run: the tool did not give a
			// result, which the client sees as a failed call.
			res = ErrorResult("%s", s.cat.eng.store.Redact(err.Error()))
		}
	}
	return json.Marshal(res)
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

// chat runs a full turn on the conversation's own agent.
func (s *servedSession) chat(ctx context.Context, args map[string]any) Result {
	a := readArgs(args)
	message := a.str("message", true)
	conv := a.str("session", false)
	profile := a.str("profile", false)
	steps := a.int("max_steps", 0)
	if err := a.err(); err != nil {
		return ErrorResult("%v", err)
	}
	for k := range args {
		switch k {
		case "message", "session", "profile", "max_steps":
		default:
			return ErrorResult("chat takes message, session, profile and max_steps, not %q", k)
		}
	}
	if strings.TrimSpace(message) == "" {
		return ErrorResult("chat: the message is empty")
	}
	if _, given := args["max_steps"]; given && (steps < 1 || steps > ServedMaxSteps) {
		return ErrorResult("chat: max_steps %d is out of range: give 1 to %d", steps, ServedMaxSteps)
	}
	start := time.Now()
	sess, err := s.conversation(conv)
	if err != nil {
		return s.audited(ServedChat, args, start, ErrorResult("chat: %v", err))
	}
	if profile != "" && profile != sess.Profile().Name {
		// The client holding the key asks, not the model: this moves only
		// this conversation.
		if _, err := sess.SwitchProfile(profile); err != nil {
			return s.audited(ServedChat, args, start, ErrorResult("chat: profile %q: %v", profile, s.cat.eng.store.Redact(err.Error())))
		}
	}
	ctx, cancel := context.WithTimeout(WithSession(ctx, sess), s.cat.chatTimeout)
	defer cancel()
	turn, err := sess.RunTurn(ctx, message, &TurnOptions{MaxSteps: steps, Capture: true, ToolBudget: s.cat.toolBudget})
	if err != nil {
		why := s.cat.eng.store.Redact(err.Error())
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("the turn ran past its deadline of %s (MCP_CHAT_TIMEOUT) after %d steps", s.cat.chatTimeout, turn.Steps)
		}
		return s.audited(ServedChat, args, start, ErrorResult("chat failed: %s", why))
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
	return s.audited(ServedChat, args, start, TextResult(text))
}

// completions makes one stateless completion with the session's model.
func (s *servedSession) completions(ctx context.Context, args map[string]any) Result {
	start := time.Now()
	for k := range args {
		if k != "messages" {
			return ErrorResult("completions takes messages, not %q", k)
		}
	}
	list, ok := args["messages"].([]any)
	if !ok || len(list) == 0 {
		return ErrorResult("completions needs messages: a non-empty list of {role, content}")
	}
	msgs := make([]Message, 0, len(list))
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			return ErrorResult("messages[%d] must be an object {role, content}", i)
		}
		role, _ := m["role"].(string)
		content, isStr := m["content"].(string)
		switch role {
		case "system", "user", "assistant":
		default:
			return ErrorResult("messages[%d].role is %q; use \"system\", \"user\" or \"assistant\"", i, role)
		}
		if !isStr {
			return ErrorResult("messages[%d].content must be a string", i)
		}
		for k := range m {
			if k != "role" && k != "content" {
				return ErrorResult("messages[%d] has %q; a message holds only role and content", i, k)
			}
		}
		msgs = append(msgs, Message{Role: role, Content: content})
	}
	resp, err := s.main.Complete(ctx, msgs)
	if err != nil {
		return s.audited(ServedCompletions, args, start, ErrorResult("completions failed: %s", s.cat.eng.store.Redact(err.Error())))
	}
	return s.audited(ServedCompletions, args, start, TextResult(s.cat.eng.store.Redact(resp.Message.Content)))
}

// audited appends the audit entry of a served extra and returns res, with
// a warning added when the trail could not record the call.
func (s *servedSession) audited(tool string, args map[string]any, start time.Time, res Result) Result {
	outcome := "ok"
	if res.IsError {
		outcome = "error"
	}
	var redact func(string) string
	if red, err := s.cat.eng.store.Redactor(); err == nil {
		redact = red.Redact
	} else {
		redact = withholdAll(err)
	}
	_, aerr := s.cat.eng.store.AuditAppend(vault.AuditEntry{
		Time: time.Now(), Kind: "mcp-serve", Subject: tool, Digest: Digest(shownArgs(redact, Tool{Name: tool}, args)),
		Outcome: outcome, Duration: time.Since(start), Size: res.size(), Session: s.name,
	})
	if aerr != nil {
		res.Content = append(res.Content, Content{Type: "text", Text: "[warning: " + auditNote(aerr) + "]"})
	}
	return res
}
