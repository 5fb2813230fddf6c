package lua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/tool"
	"tai/vault"
)

// luaTools are the tools added with tai.tool.
type luaTools struct {
	pending []tool.Tool     // added before the engine was built
	names   map[string]bool // names of every tool added with tai.tool
}

// openTools installs the tool registry's functions:
//
//	tai.call(tool, args) -> {content={…}, isError=bool} | nil, err
//	tai.tools() -> {{name=, description=, safe=, parameters=}, …}
//	tai.tool{name=, description=, parameters=, safe=, run=}
func (h *Host) openTools(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("call", L.NewFunction(h.luaCallTool))
	tai.RawSetString("tools", L.NewFunction(h.listTools))
	tai.RawSetString("tool", L.NewFunction(h.luaAddTool))
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

// argsJSON is the JSON encoding of what argsTable returns, written
// straight from the table, with argsTable's errors.
func argsJSON(L *glua.LState, n int, what string) json.RawMessage {
	v := L.Get(n)
	if v == glua.LNil {
		return json.RawMessage("{}")
	}
	t, ok := v.(*glua.LTable)
	if !ok {
		L.ArgError(n, what+" must be a table, not a "+v.Type().String())
	}
	b, err := encodeLua(L, t)
	if err != nil {
		L.ArgError(n, what+": "+err.Error())
	}
	if b[0] == '[' {
		if len(b) == 2 {
			return json.RawMessage("{}")
		}
		L.ArgError(n, what+" must be a table with named fields, not a list")
	}
	return b
}

// luaCallTool is tai.call(tool, args [, opts]): the same Dispatch path the
// model uses (audit, redaction, spill), with no approval asked when the
// person's own script calls (see engine.ByPerson; a Lua tool the model
// called is still asked about). opts.on_output(text), when given, is
// called with the tool's output as it comes (the shell's), redacted.
func (h *Host) luaCallTool(L *glua.LState) int {
	name := L.CheckString(1)
	args := argsTable(L, 2, "args")
	var onOutput *glua.LFunction
	if opts := L.OptTable(3, nil); opts != nil {
		switch v := opts.RawGetString("on_output").(type) {
		case *glua.LFunction:
			onOutput = v
		case *glua.LNilType:
		default:
			L.ArgError(3, "on_output must be a function(text)")
		}
	}
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	ctx := tool.ByPerson(luaContext(L))
	if onOutput != nil {
		c := tool.CallerFrom(ctx)
		c.Live = func(text string) {
			h.onLua(ctx, func() { h.callLua(onOutput, 0, glua.LString(text)) })
		}
		ctx = tool.WithCaller(ctx, c)
	}
	var res tool.Result
	var derr error
	h.Await(func() { res, derr = s.Dispatch(ctx, name, args) })
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
func resultTable(L *glua.LState, res tool.Result) (*glua.LTable, error) {
	content := sizedArray(L, len(res.Content))
	for _, c := range res.Content {
		if c.Type == "text" || len(c.Raw) == 0 {
			// A text item is built directly: no JSON round trip.
			item := L.CreateTable(0, 2)
			item.RawSetString("type", glua.LString("text"))
			item.RawSetString("text", glua.LString(c.Text))
			content.Append(item)
			continue
		}
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
	t := L.CreateTable(0, 2)
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
		row.RawSetString("origin", glua.LString(h.toolOrigin(t)))
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
	if err := tool.ValidToolName(string(name)); err != nil {
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
	if h.tools.names == nil {
		h.tools.names = map[string]bool{}
	}
	h.tools.names[string(name)] = true
	t := tool.Tool{
		Name:        string(name),
		Description: string(desc),
		Parameters:  params,
		Safe:        glua.LVAsBool(spec.RawGetString("safe")),
		Run:         h.luaToolRun(string(name), run),
	}
	if h.engine.eng != nil {
		if err := h.engine.eng.Tools().Add(t); err != nil {
			L.ArgError(1, err.Error())
		}
		return 0
	}
	for i, old := range h.tools.pending {
		if old.Name == t.Name {
			h.tools.pending[i] = t
			return 0
		}
	}
	h.tools.pending = append(h.tools.pending, t)
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
func (h *Host) luaToolRun(name string, fn *glua.LFunction) func(context.Context, map[string]any) (tool.Result, error) {
	return func(ctx context.Context, args map[string]any) (tool.Result, error) {
		var res tool.Result
		err := h.onLua(ctx, func() {
			L := h.L
			a, err := ToLua(L, args)
			if err != nil {
				res = tool.ErrorResult("%s: arguments: %v", name, err)
				return
			}
			out, err := h.callLua(fn, 1, a)
			if err != nil {
				msg := err.Error()
				var le *Error
				if errors.As(err, &le) {
					msg = le.Message
				}
				res = tool.ErrorResult("%s failed: %s", name, msg)
				return
			}
			res = toolResult(L, out[0], h.redactValue)
		})
		return res, err
	}
}

// redactValue redacts every string of a value a Lua tool returned, with
// one look at the vault's secrets, before it is encoded.
func (h *Host) redactValue(v any) (any, error) {
	store, err := h.Vault()
	if err != nil {
		return nil, err
	}
	red, err := store.Redactor()
	if err != nil {
		return nil, err
	}
	v, _ = vault.RedactValue(red.Func(), v)
	return v, nil
}

// toolResult turns what a Lua tool returned into a Result. A value that
// is neither a string nor content is redacted as a value (redact) before
// it is encoded as JSON, since the encoding could hide a secret.
func toolResult(L *glua.LState, v glua.LValue, redact func(any) (any, error)) tool.Result {
	switch x := v.(type) {
	case glua.LString:
		return tool.TextResult(string(x))
	case *glua.LNilType:
		return tool.TextResult("")
	case *glua.LTable:
		if c := x.RawGetString("content"); c != glua.LNil {
			res := tool.Result{IsError: glua.LVAsBool(x.RawGetString("isError"))}
			switch cv := c.(type) {
			case glua.LString:
				res.Content = []tool.Content{{Type: "text", Text: string(cv)}}
				return res
			case *glua.LTable:
				g, err := FromLua(L, cv)
				if err != nil {
					return tool.ErrorResult("the tool's content does not convert: %v", err)
				}
				items, ok := g.([]any)
				if !ok {
					items = []any{g}
				}
				for i, it := range items {
					if s, ok := it.(string); ok {
						res.Content = append(res.Content, tool.Content{Type: "text", Text: s})
						continue
					}
					b, err := json.Marshal(it)
					if err != nil {
						return tool.ErrorResult("content item %d: %v", i+1, err)
					}
					var c tool.Content
					if err := json.Unmarshal(b, &c); err != nil {
						return tool.ErrorResult("content item %d is not an MCP content block: %v", i+1, err)
					}
					if c.Type == "" {
						return tool.ErrorResult("content item %d has no type; use {type=\"text\", text=…}", i+1)
					}
					res.Content = append(res.Content, c)
				}
				return res
			default:
				return tool.ErrorResult("the tool returned content of type %s; use a string or a list of {type=, text=} items", c.Type())
			}
		}
	}
	g, err := FromLua(L, v)
	if err != nil {
		return tool.TextResult(L.ToStringMeta(v).String())
	}
	if g, err = redact(g); err != nil {
		return tool.ErrorResult("the tool's result cannot be shown: %v", err)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		return tool.ErrorResult("the tool's result does not encode: %v", err)
	}
	return tool.TextResult(strings.TrimSuffix(b.String(), "\n"))
}

// toolOrigin says where a tool comes from, for tai.tools(): "server/tool"
// for a bridged MCP tool, "lua" for one added with tai.tool, else
// "built-in".
func (h *Host) toolOrigin(t tool.Tool) string {
	switch {
	case t.Origin != "":
		return t.Origin
	case h.tools.names[t.Name]:
		return "lua"
	}
	return "built-in"
}
