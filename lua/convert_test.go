package lua

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	glua "github.com/yuin/gopher-lua"
)

func newState(t testing.TB) *glua.LState {
	t.Helper()
	L := glua.NewState()
	installMarkers(L)
	t.Cleanup(L.Close)
	return L
}

func TestGoLuaGoRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any // nil: same as in
	}{
		{name: "string", in: "hello"},
		{name: "unicode", in: "héllo — 世界 🚀"},
		{name: "bool", in: true},
		{name: "int64", in: int64(42)},
		{name: "negative int", in: int64(-7)},
		{name: "large int", in: int64(1 << 53)},
		{name: "large negative int", in: int64(-(1 << 53))},
		{name: "int becomes int64", in: 5, want: int64(5)},
		{name: "float", in: 1.5},
		{name: "whole float becomes int64", in: 3.0, want: int64(3)},
		{name: "empty object", in: map[string]any{}},
		{name: "empty array", in: []any{}},
		{name: "nested", in: map[string]any{
			"a": []any{int64(1), "two", map[string]any{"three": []any{}}},
			"b": map[string]any{"c": map[string]any{}},
		}},
		{name: "null inside array", in: []any{int64(1), nil, int64(3)}},
		{name: "null inside object", in: map[string]any{"x": nil}},
		{name: "string slice", in: []string{"a", "b"}, want: []any{"a", "b"}},
		{name: "string map", in: map[string]string{"k": "v"}, want: map[string]any{"k": "v"}},
		{name: "time", in: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), want: "2026-01-02T03:04:05Z"},
		{name: "raw message", in: json.RawMessage(`{"a":[1,{}]}`), want: map[string]any{"a": []any{int64(1), map[string]any{}}}},
		{name: "struct via json", in: struct {
			Name string `json:"name"`
			N    int    `json:"n"`
		}{"x", 2}, want: map[string]any{"name": "x", "n": int64(2)}},
		{name: "typed slice", in: []int{1, 2}, want: []any{int64(1), int64(2)}},
		{name: "typed map", in: map[string][]string{"k": {"v"}}, want: map[string]any{"k": []any{"v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			L := newState(t)
			lv, err := ToLua(L, tt.in)
			if err != nil {
				t.Fatalf("ToLua: %v", err)
			}
			got, err := FromLua(L, lv)
			if err != nil {
				t.Fatalf("FromLua: %v", err)
			}
			want := tt.want
			if want == nil {
				want = tt.in
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip: got %#v, want %#v", got, want)
			}
		})
	}
}

// TestJSONRoundTrip decodes JSON text in Lua and encodes it again: the text
// must come back identical (keys sorted, as encoding/json writes them).
func TestJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name, in string
	}{
		{"empty object", `{}`},
		{"empty array", `[]`},
		{"nested empties", `{"a":{},"b":[],"c":[{},[]]}`},
		{"unicode", `{"k":"héllo — 世界 🚀","ü":"\u0000x"}`},
		{"html stays literal", `{"s":"<a href=\"x\">&</a>"}`},
		{"ints stay ints", `[0,1,-1,1000000000000000,9007199254740992,-9007199254740992]`},
		{"floats", `[1.5,-0.25,1e-7]`},
		{"nulls", `[null,{"a":null},1]`},
		{"deep", `{"a":{"b":{"c":{"d":[[[{"e":true}]]]}}}}`},
		{"mcp config", `{"mcpServers":{"github":{"args":["-y","@modelcontextprotocol/server-github"],"command":"npx","env":{}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			L := newState(t)
			h := &Host{}
			tai := L.NewTable()
			h.openJSON(L, tai)
			L.SetGlobal("tai", tai)
			L.SetGlobal("input", glua.LString(tt.in))
			if err := L.DoString(`out, err = tai.json.encode(assert(tai.json.decode(input)))`); err != nil {
				t.Fatal(err)
			}
			if e := L.GetGlobal("err"); e != glua.LNil {
				t.Fatalf("encode: %v", e)
			}
			got := L.GetGlobal("out").String()
			var want any
			if err := unmarshalJSON([]byte(tt.in), &want); err != nil {
				t.Fatal(err)
			}
			wantText, _ := EncodeJSON(want, "")
			if got != wantText {
				t.Fatalf("got %s, want %s", got, wantText)
			}
		})
	}
}

func TestLuaTablesToGo(t *testing.T) {
	tests := []struct {
		name, lua string
		want      any
	}{
		{"list", `return {1, 2, 3}`, []any{int64(1), int64(2), int64(3)}},
		{"unmarked empty is an object", `return {}`, map[string]any{}},
		{"marked empty array", `return tai.json.array()`, []any{}},
		{"marked empty object", `return tai.json.object()`, map[string]any{}},
		{"array marker wins over keys", `return tai.json.array({1, 2})`, []any{int64(1), int64(2)}},
		{"sparse list is an object", `return {[1] = "a", [3] = "c"}`, map[string]any{"1": "a", "3": "c"}},
		{"mixed keys", `return {1, x = 2}`, map[string]any{"1": int64(1), "x": int64(2)}},
		{"null", `return {a = tai.json.null}`, map[string]any{"a": nil}},
		{"whole number", `return 2^40`, int64(1 << 40)},
		{"fraction", `return 0.5`, 0.5},
		{"huge stays float", `return 1e300`, 1e300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			L := newState(t)
			h := &Host{}
			tai := L.NewTable()
			h.openJSON(L, tai)
			L.SetGlobal("tai", tai)
			if err := L.DoString(tt.lua); err != nil {
				t.Fatal(err)
			}
			got, err := FromLua(L, L.Get(-1))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestFromLuaErrors(t *testing.T) {
	tests := []struct {
		name, lua, want string
	}{
		{"function", `return {f = print}`, "f: a function has no JSON form"},
		{"nested function", `return {a = {b = {print}}}`, "a.b[1]: a function has no JSON form"},
		{"cycle", `local t = {} t.self = t return t`, "nested deeper than"},
		{"nan", `return {x = 0/0}`, "has no JSON form"},
		{"inf", `return {1/0}`, "has no JSON form"},
		{"table key", `return {[{}] = 1}`, "keys must be strings or numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			L := newState(t)
			if err := L.DoString(tt.lua); err != nil {
				t.Fatal(err)
			}
			_, err := FromLua(L, L.Get(-1))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestJSONDecodeErrorsHavePositions(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bad token", "{\n  \"a\": 1,\n  \"b\": x\n}", "line 3, column 8"},
		{"trailing comma", "{\"a\": 1,}", "line 1, column 9"},
		{"cut short", "{\"a\": [1, 2", "cut short"},
		{"trailing data", "{} {}", "unexpected data after the JSON value"},
		{"empty", "", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			err := unmarshalJSON([]byte(tt.in), &v)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestTOMLDecode(t *testing.T) {
	v, err := DecodeTOML("[mcp_servers.github]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nport = 8080\nwhen = 1979-05-27T07:32:00Z\n")
	if err != nil {
		t.Fatal(err)
	}
	L := newState(t)
	lv, err := ToLua(L, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromLua(L, lv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"mcp_servers": map[string]any{"github": map[string]any{
		"command": "npx", "args": []any{"-y", "x"}, "port": int64(8080), "when": "1979-05-27T07:32:00Z",
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	if _, err := DecodeTOML("a = \n"); err == nil || !strings.Contains(err.Error(), "line 1, column") {
		t.Fatalf("bad TOML: got %v, want a positioned error", err)
	}
}

func TestNumberEdges(t *testing.T) {
	for _, f := range []float64{math.MaxInt64, math.MinInt64, 1 << 62, -1 << 62} {
		got, err := number(f, "")
		if err != nil {
			t.Fatal(err)
		}
		if f == math.MaxInt64 { // 2^63 is out of int64 range
			if _, ok := got.(float64); !ok {
				t.Fatalf("%v: got %T, want float64", f, got)
			}
			continue
		}
		if i, ok := got.(int64); !ok || float64(i) != f {
			t.Fatalf("%v: got %#v, want int64", f, got)
		}
	}
}
