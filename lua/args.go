package lua

import glua "github.com/yuin/gopher-lua"

// optString reads t.field, which is absent or a string; anything else
// raises an argument error on argument n.
func optString(L *glua.LState, n int, t *glua.LTable, field string) string {
	switch v := t.RawGetString(field).(type) {
	case glua.LString:
		return string(v)
	case *glua.LNilType:
	default:
		L.ArgError(n, field+" must be a string, not a "+v.Type().String())
	}
	return ""
}

// optFunction reads t.field, which is absent (nil) or a function; anything
// else raises an argument error on argument n.
func optFunction(L *glua.LState, n int, t *glua.LTable, field string) *glua.LFunction {
	switch v := t.RawGetString(field).(type) {
	case *glua.LFunction:
		return v
	case *glua.LNilType:
	default:
		L.ArgError(n, field+" must be a function, not a "+v.Type().String())
	}
	return nil
}
