package lua

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sync/atomic"
	"time"
	"weak"

	glua "github.com/yuin/gopher-lua"
)

// Registry keys of the marker metatables and the null sentinel. A table
// decoded from a JSON object carries the object marker, one decoded from an
// array the array marker, so that an empty one re-encodes as {} or [].
const (
	regObjectMT = "tai.json.object"
	regArrayMT  = "tai.json.array"
	regNull     = "tai.json.null"
)

// maxDepth bounds the nesting of converted values (and so catches cycles).
const maxDepth = 200

// installMarkers creates the marker metatables and the null sentinel in L's
// registry. Every state the package builds calls it once.
func installMarkers(L *glua.LState) {
	reg := L.Get(glua.RegistryIndex).(*glua.LTable)
	obj := L.NewTable()
	obj.RawSetString("__name", glua.LString("json.object"))
	arr := L.NewTable()
	arr.RawSetString("__name", glua.LString("json.array"))
	null := L.NewUserData()
	null.Value = nil
	nullMT := L.NewTable()
	nullMT.RawSetString("__tostring", L.NewFunction(func(L *glua.LState) int {
		L.Push(glua.LString("null"))
		return 1
	}))
	nullMT.RawSetString("__name", glua.LString("json.null"))
	L.SetMetatable(null, nullMT)
	reg.RawSetString(regObjectMT, obj)
	reg.RawSetString(regArrayMT, arr)
	reg.RawSetString(regNull, null)
}

// markers are the marker metatables and the null sentinel of one state.
type markers struct {
	registry                weak.Pointer[glua.LTable] // weak: a closed state is not kept alive
	objectMT, arrayMT, null glua.LValue
}

// lastMarkers holds the markers last looked up. A process usually runs
// one state, so each conversion finds its markers with one comparison
// instead of three lookups in the registry.
var lastMarkers atomic.Pointer[markers]

// stateMarkers returns L's markers (see installMarkers).
func stateMarkers(L *glua.LState) *markers {
	reg := L.Get(glua.RegistryIndex).(*glua.LTable)
	if m := lastMarkers.Load(); m != nil && m.registry.Value() == reg {
		return m
	}
	m := &markers{registry: weak.Make(reg), objectMT: reg.RawGetString(regObjectMT), arrayMT: reg.RawGetString(regArrayMT), null: reg.RawGetString(regNull)}
	lastMarkers.Store(m)
	return m
}

// Null returns the Lua value that stands for JSON null inside tables
// (tai.json.null). A nil Go value nested in a map or slice converts to it,
// and it converts back to nil.
func Null(L *glua.LState) glua.LValue { return stateMarkers(L).null }

// NewObject returns an empty table marked as a JSON object: it encodes as {}
// even while empty.
func NewObject(L *glua.LState) *glua.LTable {
	t := L.NewTable()
	L.SetMetatable(t, stateMarkers(L).objectMT)
	return t
}

// NewArray returns an empty table marked as a JSON array: it encodes as []
// even while empty.
func NewArray(L *glua.LState) *glua.LTable {
	t := L.NewTable()
	L.SetMetatable(t, stateMarkers(L).arrayMT)
	return t
}

// sizedObject and sizedArray are NewObject and NewArray with room for n
// entries, no more: L.NewTable reserves 32 of each, which for the many
// small tables of a converted result is mostly garbage.
func sizedObject(L *glua.LState, n int) *glua.LTable {
	t := L.CreateTable(0, n)
	L.SetMetatable(t, stateMarkers(L).objectMT)
	return t
}

func sizedArray(L *glua.LState, n int) *glua.LTable {
	t := L.CreateTable(n, 0)
	L.SetMetatable(t, stateMarkers(L).arrayMT)
	return t
}

// ToLua converts a Go value to Lua, JSON-compatibly: maps become tables
// marked as objects, slices tables marked as arrays, numbers numbers, nil
// nil at the top level and tai.json.null inside tables. time.Time becomes an
// RFC 3339 string, json.RawMessage is decoded, and any other type goes
// through its JSON encoding.
func ToLua(L *glua.LState, v any) (glua.LValue, error) {
	if v == nil {
		return glua.LNil, nil
	}
	return toLua(L, v, 0)
}

func toLua(L *glua.LState, v any, depth int) (glua.LValue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return Null(L), nil
	case glua.LValue:
		return x, nil
	case bool:
		return glua.LBool(x), nil
	case string:
		return glua.LString(x), nil
	case []byte:
		return glua.LString(x), nil
	case int:
		return glua.LNumber(x), nil
	case int8:
		return glua.LNumber(x), nil
	case int16:
		return glua.LNumber(x), nil
	case int32:
		return glua.LNumber(x), nil
	case int64:
		return glua.LNumber(x), nil
	case uint:
		return glua.LNumber(x), nil
	case uint8:
		return glua.LNumber(x), nil
	case uint16:
		return glua.LNumber(x), nil
	case uint32:
		return glua.LNumber(x), nil
	case uint64:
		return glua.LNumber(x), nil
	case float32:
		return glua.LNumber(x), nil
	case float64:
		return glua.LNumber(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", string(x), err)
		}
		return glua.LNumber(f), nil
	case json.RawMessage:
		lv, err := decodeJSON(L, x, nil)
		if err == nil && lv == glua.LNil {
			return Null(L), nil
		}
		return lv, err
	case time.Time:
		return glua.LString(x.UTC().Format(time.RFC3339Nano)), nil
	case time.Duration:
		return glua.LNumber(x.Seconds()), nil
	case map[string]any:
		t := sizedObject(L, len(x))
		for k, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []any:
		t := sizedArray(L, len(x))
		for i, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i+1, err)
			}
			t.RawSetInt(i+1, lv)
		}
		return t, nil
	case []string:
		t := NewArray(L)
		for i, e := range x {
			t.RawSetInt(i+1, glua.LString(e))
		}
		return t, nil
	case map[string]string:
		t := NewObject(L)
		for k, e := range x {
			t.RawSetString(k, glua.LString(e))
		}
		return t, nil
	case encoding.TextMarshaler:
		text, err := x.MarshalText()
		if err != nil {
			return nil, err
		}
		return glua.LString(text), nil
	}
	return reflectToLua(L, v, depth)
}

// reflectToLua handles the remaining kinds: typed maps and slices are walked
// directly, structs and everything else go through their JSON encoding.
func reflectToLua(L *glua.LState, v any, depth int) (glua.LValue, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return Null(L), nil
		}
	case reflect.Slice:
		if rv.IsNil() {
			return Null(L), nil
		}
		fallthrough
	case reflect.Array:
		t := NewArray(L)
		for i := 0; i < rv.Len(); i++ {
			lv, err := toLua(L, rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i+1, err)
			}
			t.RawSetInt(i+1, lv)
		}
		return t, nil
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			t := NewObject(L)
			iter := rv.MapRange()
			for iter.Next() {
				k := iter.Key().String()
				lv, err := toLua(L, iter.Value().Interface(), depth+1)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				t.RawSetString(k, lv)
			}
			return t, nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot convert %T to Lua: %w", v, err)
	}
	var decoded any
	if err := unmarshalJSON(data, &decoded); err != nil {
		return nil, err
	}
	return toLua(L, decoded, depth)
}

// FromLua converts a Lua value to Go, JSON-compatibly: nil and
// tai.json.null become nil, whole numbers within the int64 range int64,
// other numbers float64, tables marked as objects (or with any non-integer
// key) map[string]any, tables marked as arrays (or with keys exactly 1..n)
// []any, and an unmarked empty table an empty object. Functions, userdata,
// threads, cycles, NaN and infinities are errors naming where they sit.
func FromLua(L *glua.LState, v glua.LValue) (any, error) {
	c := converter{L: L, markers: stateMarkers(L)}
	return c.from(v, 0, "")
}

type converter struct {
	L *glua.LState
	*markers
}

func (c *converter) from(v glua.LValue, depth int, path string) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%snested deeper than %d levels (a table that contains itself?)", at(path), maxDepth)
	}
	switch x := v.(type) {
	case *glua.LNilType:
		return nil, nil
	case glua.LBool:
		return bool(x), nil
	case glua.LString:
		return string(x), nil
	case glua.LNumber:
		return number(float64(x), path)
	case *glua.LTable:
		return c.table(x, depth, path)
	case *glua.LUserData:
		if v == c.null {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%sa %s has no JSON form", at(path), v.Type())
}

func at(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func number(f float64, path string) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%s%v has no JSON form", at(path), f)
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < (1<<63) {
		return int64(f), nil
	}
	return f, nil
}

// isArray decides whether t encodes as a JSON array: it is marked as one,
// or it is unmarked and its keys are exactly 1..n with n > 0.
func (c *converter) isArray(t *glua.LTable) bool {
	mt := c.L.GetMetatable(t)
	if mt == c.objectMT {
		return false
	}
	if mt == c.arrayMT {
		return true
	}
	n := t.Len()
	if n == 0 {
		// Empty, or only keys that are not 1..n: an object either way.
		return false
	}
	count := 0
	allInts := true
	t.ForEach(func(k, _ glua.LValue) {
		count++
		if num, ok := k.(glua.LNumber); !ok || float64(num) != math.Trunc(float64(num)) || num < 1 || int(num) > n {
			allInts = false
		}
	})
	return count > 0 && allInts && count == n
}

// numberKey is the object key a number key stands for: "1", "1.5".
func numberKey(f float64) (string, error) {
	n, err := number(f, "")
	if err != nil {
		return "", err
	}
	return fmt.Sprint(n), nil
}

func (c *converter) table(t *glua.LTable, depth int, path string) (any, error) {
	if c.isArray(t) {
		n := t.Len()
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			e, err := c.from(t.RawGetInt(i), depth+1, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	out := make(map[string]any)
	var firstErr error
	t.ForEach(func(k, e glua.LValue) {
		if firstErr != nil {
			return
		}
		var key string
		switch kk := k.(type) {
		case glua.LString:
			key = string(kk)
		case glua.LNumber:
			k, err := numberKey(float64(kk))
			if err != nil {
				firstErr = fmt.Errorf("%s%w", at(path), err)
				return
			}
			key = k
		default:
			firstErr = fmt.Errorf("%sa %s key has no JSON form (keys must be strings or numbers)", at(path), k.Type())
			return
		}
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		val, err := c.from(e, depth+1, sub)
		if err != nil {
			firstErr = err
			return
		}
		out[key] = val
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}
