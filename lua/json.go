package lua

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	glua "github.com/yuin/gopher-lua"
)

// openJSON installs tai.json:
//
//	tai.json.encode(value [, {indent = "  "}]) -> string | nil, err
//	tai.json.decode(text) -> value | nil, err
//	tai.json.object([t]) -> t marked as an object ({} even when empty)
//	tai.json.array([t])  -> t marked as an array ([] even when empty)
//	tai.json.null        -- stands for null inside tables
func (h *Host) openJSON(L *glua.LState, tai *glua.LTable) {
	mod := L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"encode": jsonEncode,
		"decode": jsonDecode,
		"object": func(L *glua.LState) int { return mark(L, stateMarkers(L).objectMT) },
		"array":  func(L *glua.LState) int { return mark(L, stateMarkers(L).arrayMT) },
	})
	mod.RawSetString("null", Null(L))
	tai.RawSetString("json", mod)
}

func mark(L *glua.LState, mt glua.LValue) int {
	t := L.OptTable(1, L.NewTable())
	L.SetMetatable(t, mt)
	L.Push(t)
	return 1
}

func jsonEncode(L *glua.LState) int {
	v := L.CheckAny(1)
	indent := ""
	if opts := L.OptTable(2, nil); opts != nil {
		if s, ok := opts.RawGetString("indent").(glua.LString); ok {
			indent = string(s)
		}
	}
	text, err := encodeLua(L, v)
	if err != nil {
		return fail(L, "json.encode: "+err.Error())
	}
	if indent != "" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, text, "", indent); err != nil {
			return fail(L, "json.encode: "+err.Error())
		}
		text = buf.Bytes()
	}
	L.Push(glua.LString(text))
	return 1
}

func jsonDecode(L *glua.LState) int {
	text := L.CheckString(1)
	lv, err := decodeJSON(L, []byte(text), nil)
	if err != nil {
		return fail(L, "json.decode: "+err.Error())
	}
	L.Push(lv)
	return 1
}

// EncodeJSON encodes v compactly (or indented by indent) without escaping
// <, > and &, and without a trailing newline.
func EncodeJSON(v any, indent string) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// unmarshalJSON decodes one JSON value, keeping integers exact
// (json.Number, converted to int64 when it fits) and reporting syntax errors
// with a line and column.
func unmarshalJSON(data []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return positioned(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		line, col := lineCol(data, off)
		return fmt.Errorf("line %d, column %d: unexpected data after the JSON value", line, col)
	}
	*v = integers(*v)
	return nil
}

// integers replaces json.Number by int64 where the number is an integer
// that fits, by float64 otherwise.
func integers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = integers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = integers(e)
		}
	}
	return v
}

func positioned(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte itself.
		line, col := lineCol(data, max(syn.Offset-1, 0))
		return fmt.Errorf("line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		return fmt.Errorf("line %d, column %d: %s", line, col, typ.Error())
	case errors.Is(err, io.EOF):
		return errors.New("no JSON value (the text is empty)")
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, int64(len(data)))
		return fmt.Errorf("line %d, column %d: the JSON value is cut short (an unclosed brace, bracket or string?)", line, col)
	}
	return err
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// fail pushes the runtime-failure pair nil, message.
func fail(L *glua.LState, msg string) int {
	L.Push(glua.LNil)
	L.Push(glua.LString(msg))
	return 2
}
