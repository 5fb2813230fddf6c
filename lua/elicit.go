package lua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/elicit"
)

// An elicitation reaches Lua as one table, the same for the REPL's
// questions (tai.prompter's elicit), a script's tai.mcp.on_elicit and
// tai.mcp.connect's on_elicit option:
//
//	{server=, message=, mode="form"|"url", id=,
//	 fields={{name=, title=, description=, kind=, format=, pattern=,
//	          options={{value=, title=}, …}, default=, default_text=,
//	          required=, secret=, hint=, check=fn(text) -> value | nil, err}, …},
//	 url=, host=, unicode=, warnings={…}}
//
// and the function returns {action="accept"|"decline"|"cancel",
// content={name=value, …}} (or the action alone). Go checks the content
// against the form again and fills in the defaults of what is missing.

// Elicit implements tool.Elicitor: a script's tai.mcp.on_elicit answers
// when set, whether or not there is a terminal; otherwise the person, at
// a terminal only, through the prompter's elicit function.
func (p hostPrompter) Elicit(ctx context.Context, q elicit.Question) (elicit.Result, error) {
	var res elicit.Result
	var eerr error
	err := p.h.onLua(ctx, func() {
		if fn := p.h.onElicitFn(); fn != nil {
			res, eerr = p.h.callElicit(fn, q)
			return
		}
		fn := p.h.prompterElicit()
		if fn == nil {
			eerr = tool.ErrNoPrompter
			return
		}
		tty, piped := p.h.askingTerminal()
		if tty != nil {
			defer tty.Close()
		}
		p.h.prompter.granting, p.h.prompter.tty, p.h.prompter.untold = piped, tty, false
		defer func() { p.h.prompter.granting, p.h.prompter.tty = false, nil }()
		res, eerr = p.h.callElicit(fn, q)
		if p.h.prompter.untold && (eerr != nil || res.Action != elicit.Accept) {
			res, eerr = elicit.Result{}, errNoTerminal
		}
	})
	if err != nil {
		return elicit.Result{}, err
	}
	return res, eerr
}

// elicitLua asks fn, a script's function, on the owning goroutine.
func (h *Host) elicitLua(ctx context.Context, fn *glua.LFunction, q elicit.Question) (elicit.Result, error) {
	var res elicit.Result
	var eerr error
	if err := h.onLua(ctx, func() { res, eerr = h.callElicit(fn, q) }); err != nil {
		return elicit.Result{}, err
	}
	return res, eerr
}

// callElicit calls fn with q's table and reads its answer; it runs on the
// owning goroutine.
func (h *Host) callElicit(fn *glua.LFunction, q elicit.Question) (elicit.Result, error) {
	L := h.L
	out, err := h.callLua(fn, 2, questionTable(L, q))
	if err != nil {
		return elicit.Result{}, err
	}
	var res elicit.Result
	var action string
	switch v := out[0].(type) {
	case glua.LString:
		action = string(v)
	case *glua.LTable:
		s, ok := v.RawGetString("action").(glua.LString)
		if !ok {
			return res, errors.New("the elicitation's answer has no action: return {action=\"accept\"|\"decline\"|\"cancel\", content={…}}")
		}
		action = string(s)
		if c, ok := v.RawGetString("content").(*glua.LTable); ok {
			m, err := FromLua(L, c)
			if err != nil {
				return res, fmt.Errorf("the elicitation's content: %v", err)
			}
			switch m := m.(type) {
			case map[string]any:
				res.Content = m
			case []any:
				if len(m) > 0 {
					return res, errors.New("the elicitation's content must be a table of field names, not a list")
				}
			}
		}
	default:
		msg := "the elicitation got no answer"
		if e, ok := out[1].(glua.LString); ok {
			msg += ": " + string(e)
		}
		return res, errors.New(msg)
	}
	if res.Action, err = elicit.ParseAction(action); err != nil {
		return res, err
	}
	return res, nil
}

// questionTable is q as Lua sees it (see the comment at the top).
func questionTable(L *glua.LState, q elicit.Question) *glua.LTable {
	t := L.NewTable()
	t.RawSetString("server", glua.LString(q.Server))
	t.RawSetString("message", glua.LString(q.Message))
	t.RawSetString("mode", glua.LString(q.Mode()))
	if q.ID != "" {
		t.RawSetString("id", glua.LString(q.ID))
	}
	if l := q.Link; l != nil {
		t.RawSetString("url", glua.LString(l.URL))
		t.RawSetString("host", glua.LString(l.Host))
		if l.Unicode != "" {
			t.RawSetString("unicode", glua.LString(l.Unicode))
		}
		w := L.NewTable()
		for _, s := range l.Warnings {
			w.Append(glua.LString(s))
		}
		t.RawSetString("warnings", w)
	}
	if q.Form != nil {
		fields := L.NewTable()
		for i := range q.Form.Fields {
			fields.Append(fieldTable(L, &q.Form.Fields[i]))
		}
		t.RawSetString("fields", fields)
	}
	return t
}

// fieldTable is one field of a form, with its check function.
func fieldTable(L *glua.LState, f *elicit.Field) *glua.LTable {
	t := L.NewTable()
	set := func(k, v string) {
		if v != "" {
			t.RawSetString(k, glua.LString(v))
		}
	}
	set("name", f.Name)
	set("title", f.Title)
	set("description", f.Description)
	set("kind", string(f.Kind))
	set("format", f.Format)
	set("pattern", f.Pattern)
	set("hint", f.Hint())
	set("default_text", f.DefaultText())
	t.RawSetString("required", glua.LBool(f.Required))
	t.RawSetString("secret", glua.LBool(f.Secret))
	if !math.IsInf(f.Minimum, 0) {
		t.RawSetString("minimum", glua.LNumber(f.Minimum))
	}
	if !math.IsInf(f.Maximum, 0) {
		t.RawSetString("maximum", glua.LNumber(f.Maximum))
	}
	if len(f.Options) > 0 {
		opts := L.NewTable()
		for _, o := range f.Options {
			ot := L.NewTable()
			ot.RawSetString("value", glua.LString(o.Value))
			ot.RawSetString("title", glua.LString(o.Title))
			opts.Append(ot)
		}
		t.RawSetString("options", opts)
	}
	if f.Default != nil {
		if v, err := ToLua(L, f.Default); err == nil {
			t.RawSetString("default", v)
		}
	}
	t.RawSetString("check", L.NewFunction(func(L *glua.LState) int {
		v, err := f.Parse(L.CheckString(1))
		if err != nil {
			return fail(L, err.Error())
		}
		if v == nil {
			L.Push(glua.LNil)
			return 1
		}
		lv, err := ToLua(L, v)
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(lv)
		return 1
	}))
	return t
}

// onElicitFn returns tai.mcp.on_elicit when a script set it to a
// function; owner goroutine only.
func (h *Host) onElicitFn() *glua.LFunction {
	mod, ok := h.tai.RawGetString("mcp").(*glua.LTable)
	if !ok {
		return nil
	}
	fn, _ := mod.RawGetString("on_elicit").(*glua.LFunction)
	return fn
}

// prompterElicit returns the elicit function tai.prompter installed.
func (h *Host) prompterElicit() *glua.LFunction {
	h.prompter.mu.Lock()
	defer h.prompter.mu.Unlock()
	return h.prompter.elicit
}

// connectElicit returns the elicitation/create handler of a session
// tai.mcp.connect opened with an on_elicit function: the script answers
// every request itself, form or URL (it opens a URL itself if it wants
// it opened); an answer the form refuses, or a script error, declines.
func (h *Host) connectElicit(name string, fn *glua.LFunction) mcp.RequestHandler {
	return func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		req, err := elicit.ParseRequest(params)
		if err != nil {
			return nil, &mcp.WireError{Code: mcp.CodeInvalidParams, Message: err.Error()}
		}
		decline := json.RawMessage(`{"action":"decline"}`)
		q := elicit.Question{Server: name, Message: req.Message, ID: req.ElicitationID}
		if req.Mode == elicit.ModeURL {
			link, err := elicit.ParseLink(req.URL)
			if err != nil {
				return decline, nil
			}
			q.Link = &link
		} else if q.Form, err = elicit.ParseForm(req.RequestedSchema); err != nil {
			return decline, nil
		}
		res, err := h.elicitLua(ctx, fn, q)
		if err != nil {
			h.mcpWarning(fmt.Sprintf("mcp server %q: the on_elicit function failed, so tai declined: %v", name, err))
			return decline, nil
		}
		if res.Action == elicit.Accept && q.Form != nil {
			if res.Content, err = q.Form.Content(res.Content); err != nil {
				h.mcpWarning(fmt.Sprintf("mcp server %q: on_elicit's answer does not fit the form, so tai declined: %v", name, err))
				return decline, nil
			}
		} else {
			res.Content = nil
		}
		return json.Marshal(res)
	}
}
