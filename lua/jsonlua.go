package lua

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	glua "github.com/yuin/gopher-lua"

	"tai/vault"
)

// This file converts between JSON text and Lua values in one pass, with
// no Go value in between: decodeJSON builds the tables straight from the
// bytes (redacting every string as it is made) and appendJSON writes a Lua
// value's JSON encoding straight from its tables. Both follow the rules of
// ToLua and FromLua (convert.go) exactly: objects and arrays keep their
// kind through the marker metatables, integers stay integers, null inside
// a table is tai.json.null, keys come out sorted as encoding/json writes
// them, and <, > and & are not escaped. Errors are rare, so their messages
// come from the generic path (unmarshalJSON, FromLua), which names the
// line and column or the table path.

// decodeJSON decodes one JSON document into Lua values. redact, when not
// nil, is applied to every string, keys included, before it becomes a Lua
// value. A top-level null is nil.
func decodeJSON(L *glua.LState, data []byte, redact func(string) string) (glua.LValue, error) {
	d := jsonDecoder{L: L, data: data, redact: redact, markers: stateMarkers(L),
		stack: make([]glua.LValue, 0, 8), keys: make([]string, 0, 4)}
	v, err := d.value(0)
	if err == nil {
		if d.ws(); d.i < len(d.data) {
			err = errJSONSyntax
		}
	}
	if err != nil {
		// The generic path words the error: the line and column of a
		// syntax error, the path to a value nested too deep.
		var generic any
		if gerr := unmarshalJSON(data, &generic); gerr != nil {
			return nil, gerr
		}
		if redact != nil {
			generic, _ = vault.RedactValue(redact, generic)
		}
		if _, gerr := ToLua(L, generic); gerr != nil {
			return nil, gerr
		}
		return nil, err
	}
	if v == d.null {
		return glua.LNil, nil
	}
	return v, nil
}

// errJSONSyntax and errJSONDepth stand for the errors jsonDecoder finds;
// decodeJSON replaces them by the generic path's messages.
var errJSONSyntax = errors.New("invalid JSON")

var errJSONDepth = errors.New("value nested deeper than 200 levels")

type jsonDecoder struct {
	L      *glua.LState
	data   []byte
	i      int
	redact func(string) string
	*markers
	// stack holds the values of the objects and arrays being decoded,
	// keys the keys of the objects, until each is complete and its table
	// can be made with room for exactly its members.
	stack   []glua.LValue
	keys    []string
	scratch []byte // unescaped string bytes
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (glua.LValue, error) {
	if depth > maxDepth {
		return nil, errJSONDepth
	}
	d.ws()
	if d.i >= len(d.data) {
		return nil, errJSONSyntax
	}
	switch c := d.data[d.i]; c {
	case '{':
		return d.object(depth)
	case '[':
		return d.array(depth)
	case '"':
		s, known, err := d.str()
		if err != nil {
			return nil, err
		}
		if known >= 0 {
			return wellKnownValues[known], nil
		}
		return glua.LString(s), nil
	case 't':
		return glua.LTrue, d.literal("true")
	case 'f':
		return glua.LFalse, d.literal("false")
	case 'n':
		return d.null, d.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return d.number()
		}
		return nil, errJSONSyntax
	}
}

func (d *jsonDecoder) literal(lit string) error {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return errJSONSyntax
	}
	d.i += len(lit)
	return nil
}

func (d *jsonDecoder) object(depth int) (glua.LValue, error) {
	d.i++ // '{'
	base, kbase := len(d.stack), len(d.keys)
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
	} else {
		for {
			d.ws()
			if d.i >= len(d.data) || d.data[d.i] != '"' {
				return nil, errJSONSyntax
			}
			k, _, err := d.str()
			if err != nil {
				return nil, err
			}
			if d.ws(); d.i >= len(d.data) || d.data[d.i] != ':' {
				return nil, errJSONSyntax
			}
			d.i++
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d.keys = append(d.keys, k)
			d.stack = append(d.stack, v)
			if d.ws(); d.i >= len(d.data) {
				return nil, errJSONSyntax
			}
			c := d.data[d.i]
			d.i++
			if c == '}' {
				break
			}
			if c != ',' {
				return nil, errJSONSyntax
			}
		}
	}
	keys, vals := d.keys[kbase:], d.stack[base:]
	t := d.L.CreateTable(0, len(keys))
	t.Metatable = d.objectMT
	for j, k := range keys {
		t.RawSetString(k, vals[j])
	}
	clear(keys)
	clear(vals)
	d.keys, d.stack = d.keys[:kbase], d.stack[:base]
	return t, nil
}

func (d *jsonDecoder) array(depth int) (glua.LValue, error) {
	d.i++ // '['
	base := len(d.stack)
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
	} else {
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d.stack = append(d.stack, v)
			if d.ws(); d.i >= len(d.data) {
				return nil, errJSONSyntax
			}
			c := d.data[d.i]
			d.i++
			if c == ']' {
				break
			}
			if c != ',' {
				return nil, errJSONSyntax
			}
		}
	}
	elems := d.stack[base:]
	t := d.L.CreateTable(len(elems), 0)
	t.Metatable = d.arrayMT
	for j, v := range elems {
		t.RawSetInt(j+1, v)
	}
	clear(elems)
	d.stack = d.stack[:base]
	return t, nil
}

// str decodes the string at d.data[d.i] == '"' as encoding/json does:
// invalid UTF-8 and lone surrogates become U+FFFD. The result is
// redacted. known is its index in wellKnownStrings when it is one of
// them, redaction included, and -1 otherwise.
func (d *jsonDecoder) str() (s string, known int, err error) {
	start := d.i + 1
	i := start
	plain := true // no escapes and nothing beyond ASCII
	for ; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", -1, errJSONSyntax
		}
		if c == '\\' {
			plain = false
			i++
		} else if c >= utf8.RuneSelf {
			plain = false
		}
	}
	if i >= len(d.data) {
		return "", -1, errJSONSyntax
	}
	d.i = i + 1
	raw := d.data[start:i]
	known = -1
	if plain || (!hasByte(raw, '\\') && utf8.Valid(raw)) {
		s, known = wellKnown(raw)
	} else {
		b, ok := unquoteJSON(d.scratch[:0], raw)
		if !ok {
			return "", -1, errJSONSyntax
		}
		d.scratch = b
		s = string(b)
	}
	if d.redact != nil {
		if r := d.redact(s); r != s {
			s, known = r, -1
		}
	}
	return s, known, nil
}

// wellKnownStrings are the keys and values MCP results repeat in every
// call; wellKnownValues holds each as a Lua value, so decoding one
// allocates nothing.
var wellKnownStrings = [...]string{"content", "type", "text", "isError", "structuredContent", "_meta",
	"image", "audio", "resource", "resource_link", "mimeType", "data", "uri", "name", "annotations"}

var wellKnownValues = func() (v [len(wellKnownStrings)]glua.LValue) {
	for i, s := range wellKnownStrings {
		v[i] = glua.LString(s)
	}
	return v
}()

// wellKnown returns raw as a string and its index in wellKnownStrings,
// or a copy of raw and -1.
func wellKnown(raw []byte) (string, int) {
	for i, k := range wellKnownStrings {
		if len(k) == len(raw) && k == string(raw) {
			return k, i
		}
	}
	return string(raw), -1
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// unquoteJSON appends the decoded form of a JSON string's body (without
// its quotes) to b; ok is false on a bad escape.
func unquoteJSON(b, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			if i+1 >= len(raw) {
				return b, false
			}
			e := raw[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(raw[i:])
				if !ok {
					return b, false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if len(raw)-i >= 6 && raw[i] == '\\' && raw[i+1] == 'u' {
						if r2, ok := hex4(raw[i+2:]); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								break
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				return b, false
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, raw[i:i+size]...)
			}
			i += size
		}
	}
	return b, true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number decodes a JSON number: an integer that fits int64 exactly as
// that integer, anything else as the nearest float64.
func (d *jsonDecoder) number() (glua.LValue, error) {
	start := d.i
	i := d.i
	if d.data[i] == '-' {
		i++
	}
	digits := i
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case i < len(d.data) && d.data[i] >= '1' && d.data[i] <= '9':
		for i < len(d.data) && isDigit(d.data[i]) {
			i++
		}
	default:
		return nil, errJSONSyntax
	}
	integer := true
	if i < len(d.data) && d.data[i] == '.' {
		integer = false
		i++
		if i >= len(d.data) || !isDigit(d.data[i]) {
			return nil, errJSONSyntax
		}
		for i < len(d.data) && isDigit(d.data[i]) {
			i++
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		integer = false
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= len(d.data) || !isDigit(d.data[i]) {
			return nil, errJSONSyntax
		}
		for i < len(d.data) && isDigit(d.data[i]) {
			i++
		}
	}
	d.i = i
	text := d.data[start:i]
	if integer && i-digits <= 18 { // fits int64 without overflow
		var n int64
		for _, c := range d.data[digits:i] {
			n = n*10 + int64(c-'0')
		}
		if digits > start {
			n = -n
		}
		return glua.LNumber(n), nil
	}
	if integer {
		if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return glua.LNumber(n), nil
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, errJSONSyntax
	}
	return glua.LNumber(f), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// errNoJSONForm stands for any value appendJSON cannot encode; the caller
// replaces it by FromLua's message, which names where the value sits.
var errNoJSONForm = errors.New("no JSON form")

// encodeLua returns the compact JSON encoding of v, as
// EncodeJSON(FromLua(L, v), "") would, with FromLua's error when v has no
// JSON form.
func encodeLua(L *glua.LState, v glua.LValue) ([]byte, error) {
	e := jsonEncoder{converter: converter{L: L, markers: stateMarkers(L)}}
	b, err := e.append(make([]byte, 0, 128), v, 0)
	if err != nil {
		if _, ferr := FromLua(L, v); ferr != nil {
			return nil, ferr
		}
		return nil, err
	}
	return b, nil
}

type jsonEncoder struct {
	converter
	members []member // the members of the objects being encoded
}

// member is one key and value of a table encoded as an object.
type member struct {
	key string
	val glua.LValue
}

func (e *jsonEncoder) append(b []byte, v glua.LValue, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errNoJSONForm
	}
	switch x := v.(type) {
	case *glua.LNilType:
		return append(b, "null"...), nil
	case glua.LBool:
		return strconv.AppendBool(b, bool(x)), nil
	case glua.LString:
		return appendJSONString(b, string(x)), nil
	case glua.LNumber:
		return appendJSONNumber(b, float64(x))
	case *glua.LTable:
		if e.isArray(x) {
			return e.appendArray(b, x, depth)
		}
		return e.appendObject(b, x, depth)
	case *glua.LUserData:
		if v == e.null {
			return append(b, "null"...), nil
		}
	}
	return nil, errNoJSONForm
}

func (e *jsonEncoder) appendArray(b []byte, t *glua.LTable, depth int) ([]byte, error) {
	b = append(b, '[')
	n := t.Len()
	var err error
	for i := 1; i <= n; i++ {
		if i > 1 {
			b = append(b, ',')
		}
		if b, err = e.append(b, t.RawGetInt(i), depth+1); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func (e *jsonEncoder) appendObject(b []byte, t *glua.LTable, depth int) ([]byte, error) {
	base := len(e.members)
	bad := false
	t.ForEach(func(k, v glua.LValue) {
		switch kk := k.(type) {
		case glua.LString:
			e.members = append(e.members, member{string(kk), v})
		case glua.LNumber:
			key, err := numberKey(float64(kk))
			if err != nil {
				bad = true
				return
			}
			e.members = append(e.members, member{key, v})
		default:
			bad = true
		}
	})
	if bad {
		return nil, errNoJSONForm
	}
	// Sorted as encoding/json sorts map keys; of equal keys (1 and "1")
	// the last one met wins, as when FromLua fills its map.
	ms := e.members[base:]
	slices.SortStableFunc(ms, func(x, y member) int { return cmp.Compare(x.key, y.key) })
	b = append(b, '{')
	first := true
	var err error
	for j, m := range ms {
		if j+1 < len(ms) && ms[j+1].key == m.key {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, m.key)
		b = append(b, ':')
		if b, err = e.append(b, m.val, depth+1); err != nil {
			return nil, err
		}
	}
	clear(e.members[base:])
	e.members = e.members[:base]
	return append(b, '}'), nil
}

// appendJSONNumber writes f as FromLua and encoding/json together would:
// a whole number within the int64 range as an integer, any other finite
// number in encoding/json's float form.
func appendJSONNumber(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errNoJSONForm
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < (1<<63) {
		return strconv.AppendInt(b, int64(f), 10), nil
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendJSONString writes s as encoding/json does with HTML escaping off:
// quotes, backslashes and control characters escaped, invalid UTF-8 as
// U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
