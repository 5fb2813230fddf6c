package lua

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"tai/vault"
)

// jsonCases are documents the one-pass decoder must read exactly as the
// generic path (unmarshalJSON, then ToLua of the Go value) does, errors
// included.
var jsonCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `"x"`, ` {"a" : [ 1 , 2 ] } `,
	`{"a":{},"b":[],"c":[{},[]],"d":null,"e":[null,{"f":null}]}`,
	`[9007199254740993,9223372036854775807,-9223372036854775808,9223372036854775808,123456789012345678901234567890]`,
	`[1.5,-0.25,1e-7,1E+2,1e400,-1e400,0.1e1,5e-324,2.5e-330]`,
	`{"k":"héllo — 世界 🚀","ü":"\u0000x","esc":"\"\\\/\b\f\n\r\t","u":"\u00e9\u2028\ud83d\ude80"}`,
	`["\ud800","\ud800x","\udc00\ud800","\ud83d\u0041","a\ud83d"]`,
	"[\"bad \xff utf8\",\"\xe2\x82\",\"ok \xe2\x82\xac\"]",
	`{"a":1,"a":2}`,
	`{"<a href=\"x\">&</a>":"<>&"}`,
	`{"mcpServers":{"github":{"args":["-y","@modelcontextprotocol/server-github"],"command":"npx","env":{}}}}`,
	strings.Repeat("[", 200) + strings.Repeat("]", 200),
	strings.Repeat("[", 202) + strings.Repeat("]", 202),
	strings.Repeat("[", 202) + strings.Repeat("]", 201),
	// Errors: the messages must be the generic decoder's.
	``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `tru`, `nul`, `-`, `01`, `1.`, `1e`, `.5`, `+1`,
	`"abc`, "\"a\x01b\"", `"\x"`, `"\u12"`, `"\u12g4"`, `{} {}`, `[] x`, "{\n  \"a\": 1,\n  \"b\": x\n}",
}

// oldDecode is the generic path the decoder replaces.
func oldDecode(L *glua.LState, data []byte, redact func(string) string) (glua.LValue, error) {
	var v any
	if err := unmarshalJSON(data, &v); err != nil {
		return nil, err
	}
	if redact != nil {
		v, _ = vault.RedactValue(redact, v)
	}
	return ToLua(L, v)
}

// sameLua reports where a and b differ: kind, metatable, number bits,
// string bytes, or table contents.
func sameLua(L *glua.LState, a, b glua.LValue, path string) error {
	if a.Type() != b.Type() {
		return fmt.Errorf("%s: %s vs %s", path, a.Type(), b.Type())
	}
	switch x := a.(type) {
	case glua.LNumber:
		if math.Float64bits(float64(x)) != math.Float64bits(float64(b.(glua.LNumber))) {
			return fmt.Errorf("%s: %v vs %v", path, x, b)
		}
	case *glua.LTable:
		y := b.(*glua.LTable)
		if L.GetMetatable(x) != L.GetMetatable(y) {
			return fmt.Errorf("%s: metatables differ", path)
		}
		var err error
		count := 0
		x.ForEach(func(k, v glua.LValue) {
			count++
			if err == nil {
				err = sameLua(L, v, y.RawGet(k), fmt.Sprintf("%s[%v]", path, k))
			}
		})
		y.ForEach(func(glua.LValue, glua.LValue) { count-- })
		if err == nil && count != 0 {
			err = fmt.Errorf("%s: the tables have different keys", path)
		}
		return err
	default:
		if a != b {
			return fmt.Errorf("%s: %v vs %v", path, a, b)
		}
	}
	return nil
}

func checkDecodeSame(t *testing.T, L *glua.LState, data []byte, redact func(string) string) {
	t.Helper()
	want, wantErr := oldDecode(L, data, redact)
	got, err := decodeJSON(L, data, redact)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v, want %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	if err := sameLua(L, got, want, "value"); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
}

func TestDecodeJSONMatchesGenericPath(t *testing.T) {
	L := newState(t)
	for _, c := range jsonCases {
		checkDecodeSame(t, L, []byte(c), nil)
	}
}

// TestDecodeJSONRedactsEveryString checks that every string of a result,
// keys included, passes through redact, however it is escaped.
func TestDecodeJSONRedactsEveryString(t *testing.T) {
	L := newState(t)
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cr&t<", "[REDACTED:k]") }
	doc := `{"s3cr&t<":"a s3cr&t< b","list":["s3cr\u0026t\u003c",{"deep":["x s3cr&t<"]}],"esc\n":"s3\u0063r&t<\n"}`
	checkDecodeSame(t, L, []byte(doc), redact)
	v, err := decodeJSON(L, []byte(doc), redact)
	if err != nil {
		t.Fatal(err)
	}
	text, err := encodeLua(L, v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "s3cr") || strings.Count(string(text), "[REDACTED:k]") != 5 { // a key, 4 strings
		t.Fatalf("not every string was redacted: %s", text)
	}
	seen := 0
	if _, err := decodeJSON(L, []byte(doc), func(s string) string { seen++; return s }); err != nil {
		t.Fatal(err)
	}
	if seen != 8 { // 4 keys, 4 strings
		t.Fatalf("redact saw %d strings, want 8", seen)
	}
}

// TestDecodeJSONRedactsWellKnownStrings checks that the keys and values
// decoded without a copy (content, type, text, ...) are redacted too: a
// secret may be spelled like one of them.
func TestDecodeJSONRedactsWellKnownStrings(t *testing.T) {
	L := newState(t)
	redact := func(s string) string { return strings.ReplaceAll(s, "text", "[REDACTED:t]") }
	doc := `{"content":[{"type":"text","text":"text"}]}`
	checkDecodeSame(t, L, []byte(doc), redact)
	v, err := decodeJSON(L, []byte(doc), redact)
	if err != nil {
		t.Fatal(err)
	}
	out, err := encodeLua(L, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"[REDACTED:t]":"[REDACTED:t]","type":"[REDACTED:t]"}]}`; string(out) != want {
		t.Fatalf("decoded %s, want %s", out, want)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		L := glua.NewState()
		defer L.Close()
		installMarkers(L)
		checkDecodeSame(t, L, data, nil)
		if v, err := decodeJSON(L, data, nil); err == nil {
			checkEncodeSame(t, L, v)
		}
	})
}

// checkEncodeSame compares encodeLua with the generic path it replaces,
// EncodeJSON(FromLua(v)), bytes and errors.
func checkEncodeSame(t *testing.T, L *glua.LState, v glua.LValue) {
	t.Helper()
	var want string
	g, wantErr := FromLua(L, v)
	if wantErr == nil {
		want, wantErr = EncodeJSON(g, "")
	}
	got, err := encodeLua(L, v)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("error %v, want %v", err, wantErr)
	}
	if err == nil && string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestEncodeLuaMatchesGenericPath(t *testing.T) {
	tests := []string{
		`return nil`, `return tai_null`, `return true`, `return "x"`, `return 0`, `return -0.0`, `return 1/3`,
		`return 2^53`, `return 2^63`, `return -2^63`, `return 1e21`, `return 1e-7`, `return 123456.789e10`,
		`return {}`, `return {1, 2, 3}`, `return {1, nil, 3}`, `return {[1] = "a", [3] = "c"}`,
		`return {a = 1, b = {c = {}}, [1] = "one"}`, `return {[1] = "n", ["1"] = "s"}`, `return {[1.5] = true, [-2] = false}`,
		`return {s = "<a href=\"x\">&</a>", c = "\0\1\8\9\10\12\13\31\127", u = "é — \226\128\168 \255"}`,
		`return {z = 1, a = 2, m = {y = tai_null, b = {}}}`, `return {{}, {{}}, {x = {}}}`,
		`return setmetatable({}, tai_object)`, `return setmetatable({}, tai_array)`, `return setmetatable({a = 1}, tai_array)`,
		`return setmetatable({1, 2}, tai_object)`,
		// Errors carry FromLua's message, path included.
		`return {f = print}`, `return {a = {b = {print}}}`, `local t = {} t.self = t return t`,
		`return {x = 0/0}`, `return {1/0}`, `return {[{}] = 1}`, `return coroutine.create(print)`,
	}
	for _, src := range tests {
		t.Run(src, func(t *testing.T) {
			L := newState(t)
			L.SetGlobal("tai_null", Null(L))
			L.SetGlobal("tai_object", stateMarkers(L).objectMT)
			L.SetGlobal("tai_array", stateMarkers(L).arrayMT)
			if err := L.DoString(src); err != nil {
				t.Fatal(err)
			}
			checkEncodeSame(t, L, L.Get(-1))
		})
	}
}

// TestArgsJSONMatchesArgsTable checks that c:call's arguments encode as
// the map tai.call passes on, with the same errors.
func TestArgsJSONMatchesArgsTable(t *testing.T) {
	tests := []string{
		`nil`, `{}`, `{text = "hi", n = 2, list = {1, "two"}, obj = {}}`, `tai_array`, `setmetatable({}, tai_arraymt)`,
		`{1, 2}`, `"text"`, `{f = print}`,
	}
	for _, src := range tests {
		t.Run(src, func(t *testing.T) {
			L := newState(t)
			L.SetGlobal("tai_arraymt", stateMarkers(L).arrayMT)
			L.SetGlobal("tai_array", NewArray(L))
			run := func(fn func(L *glua.LState) string) (string, error) {
				var out string
				err := L.DoString(`return ` + src)
				if err != nil {
					t.Fatal(err)
				}
				v := L.Get(-1)
				L.Pop(1)
				err = L.CallByParam(glua.P{Fn: L.NewFunction(func(L *glua.LState) int {
					out = fn(L)
					return 0
				}), Protect: true}, glua.LString("name"), v)
				return out, err
			}
			want, wantErr := run(func(L *glua.LState) string {
				s, err := EncodeJSON(argsTable(L, 2, "args"), "")
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
			got, err := run(func(L *glua.LState) string { return string(argsJSON(L, 2, "args")) })
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || got != want {
				t.Fatalf("got %s, %v; want %s, %v", got, err, want, wantErr)
			}
		})
	}
}

// BenchmarkResultToLua compares the conversion of one c:call result
// (the echo benchmark's) to Lua tables, redacted: the one-pass decoder
// against the generic path it replaced (encoding/json into Go values,
// vault.RedactValue, ToLua).
func BenchmarkResultToLua(b *testing.B) {
	L := newState(b)
	raw := []byte(`{"content":[{"type":"text","text":"hello, benchmark"}]}`)
	redact := func(s string) string { return strings.ReplaceAll(s, "not-in-the-echo-1234", "[REDACTED:bench-token]") }
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeJSON(L, raw, redact); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := oldDecode(L, raw, redact); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkArgsToJSON compares the encoding of c:call's arguments: straight
// from the table against the generic path (FromLua, then json.Marshal).
func BenchmarkArgsToJSON(b *testing.B) {
	L := newState(b)
	if err := L.DoString(`args = {text = "hello, benchmark"}`); err != nil {
		b.Fatal(err)
	}
	args := L.GetGlobal("args")
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeLua(L, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g, err := FromLua(L, args)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(g); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestJSONMarkersPerState converts in two states in turn: each must mark
// its tables with its own markers, or an empty array or object from one
// state would re-encode as the other kind.
func TestJSONMarkersPerState(t *testing.T) {
	states := []*glua.LState{newState(t), newState(t)}
	for round := range 3 {
		for i, L := range states {
			v, err := decodeJSON(L, []byte(`{"a":[],"o":{}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := encodeLua(L, v)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != `{"a":[],"o":{}}` {
				t.Fatalf("round %d, state %d: re-encoded as %s", round, i, out)
			}
			if mt := L.GetMetatable(v); mt != stateMarkers(L).objectMT || mt != L.Get(glua.RegistryIndex).(*glua.LTable).RawGetString(regObjectMT) {
				t.Fatalf("round %d, state %d: the object carries another state's marker", round, i)
			}
		}
	}
}
