package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ID
	}{
		{name: "zero is a real id", in: `0`, want: IntID(0)},
		{name: "negative", in: `-7`, want: IntID(-7)},
		{name: "large", in: `9007199254740993`, want: IntID(9007199254740993)},
		{name: "string zero stays a string", in: `"0"`, want: StringID("0")},
		{name: "empty string", in: `""`, want: StringID("")},
		{name: "escaped string", in: `"a\"b\u00e9"`, want: StringID("a\"bé")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var id ID
			if err := json.Unmarshal([]byte(tc.in), &id); err != nil {
				t.Fatal(err)
			}
			if id != tc.want {
				t.Fatalf("decoded %+v, want %+v", id, tc.want)
			}
			if id.IsZero() {
				t.Error("decoded id reports IsZero")
			}
			out, err := json.Marshal(id)
			if err != nil {
				t.Fatal(err)
			}
			var back ID
			if err := json.Unmarshal(out, &back); err != nil || back != id {
				t.Errorf("round trip %s -> %s -> %+v (%v)", tc.in, out, back, err)
			}
		})
	}
}

func TestIDRejectsNonIntegers(t *testing.T) {
	for _, in := range []string{`1.5`, `1e3`, `true`, `{}`, `[1]`, `99999999999999999999`, `"unterminated`} {
		var id ID
		if err := json.Unmarshal([]byte(in), &id); err == nil {
			t.Errorf("id %s accepted as %+v", in, id)
		}
	}
	var id ID
	if err := json.Unmarshal([]byte(`null`), &id); err != nil || !id.IsZero() {
		t.Errorf("null id: %+v %v", id, err)
	}
}

func TestMessageDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Message
		kind string // request, notification or response
	}{
		{name: "request with id 0", in: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"a":1}}`,
			want: Message{ID: IntID(0), Method: "initialize", Params: json.RawMessage(`{"a":1}`)}, kind: "request"},
		{name: "string id request", in: `{"method":"ping","id":"x","jsonrpc":"2.0"}`,
			want: Message{ID: StringID("x"), Method: "ping"}, kind: "request"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			want: Message{Method: "notifications/initialized"}, kind: "notification"},
		{name: "null params dropped", in: `{"jsonrpc":"2.0","method":"n","params":null}`,
			want: Message{Method: "n"}, kind: "notification"},
		{name: "result", in: `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
			want: Message{ID: IntID(3), Result: json.RawMessage(`{"content":[]}`)}, kind: "response"},
		{name: "null result kept", in: `{"jsonrpc":"2.0","id":3,"result":null}`,
			want: Message{ID: IntID(3), Result: json.RawMessage(`null`)}, kind: "response"},
		{name: "error", in: `{"jsonrpc":"2.0","id":"q","error":{"code":-32601,"message":"nope","data":{"m":"x"}}}`,
			want: Message{ID: StringID("q"), Error: &WireError{Code: -32601, Message: "nope", Data: json.RawMessage(`{"m":"x"}`)}}, kind: "response"},
		{name: "error with null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
			want: Message{Error: &WireError{Code: -32700, Message: "parse"}}, kind: "response"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeMessage([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%+v %s %s %+v", m.ID, m.Params, m.Result, m.Error) != fmt.Sprintf("%+v %s %s %+v", tc.want.ID, tc.want.Params, tc.want.Result, tc.want.Error) || m.Method != tc.want.Method {
				t.Fatalf("decoded %+v, want %+v", m, tc.want)
			}
			kind := map[bool]string{true: "request"}[m.IsRequest()] + map[bool]string{true: "notification"}[m.IsNotification()] + map[bool]string{true: "response"}[m.IsResponse()]
			if kind != tc.kind {
				t.Errorf("kind %q, want %q", kind, tc.kind)
			}
		})
	}
}

func TestMessageDecodeRejectsMalformed(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", `hello`, "malformed"},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, `"jsonrpc" must be "2.0"`},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `"jsonrpc" must be "2.0"`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "not a string or an integer"},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "not a string or an integer"},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, "beside a result"},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, "empty method"},
		{"request with null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null id"},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "both result and error"},
		{"neither", `{"jsonrpc":"2.0","id":1}`, "no method, result or error"},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, "result without an id"},
		{"error without code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, "integer code"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "batch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeMessage([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMessageEncode(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{name: "id 0 request", msg: Message{ID: IntID(0), Method: "initialize", Params: json.RawMessage("{\n  \"a\": [1, 2]\n}")},
			want: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"a":[1,2]}}`},
		{name: "string id stays a string", msg: Message{ID: StringID("7"), Method: "ping"},
			want: `{"jsonrpc":"2.0","id":"7","method":"ping"}`},
		{name: "notification", msg: Message{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":0}`)},
			want: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`},
		{name: "result", msg: Message{ID: IntID(5), Result: json.RawMessage(`{}`)},
			want: `{"jsonrpc":"2.0","id":5,"result":{}}`},
		{name: "error", msg: Message{ID: StringID("s"), Error: &WireError{Code: CodeMethodNotFound, Message: "no \"x\"", Data: json.RawMessage(`[1]`)}},
			want: `{"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"no \"x\"","data":[1]}}`},
		{name: "error without id", msg: Message{Error: &WireError{Code: CodeParseError, Message: "bad"}},
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
		{name: "method needing escapes", msg: Message{Method: "a\nb"},
			want: `{"jsonrpc":"2.0","method":"a\nb"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got  %s\nwant %s", b, tc.want)
			}
			back, err := DecodeMessage(b)
			if err != nil {
				t.Fatalf("decoding our own encoding: %v", err)
			}
			again, _ := json.Marshal(back)
			if string(again) != tc.want {
				t.Errorf("re-encoded %s", again)
			}
		})
	}
}

func TestMessageEncodeRefuses(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"empty", Message{}, "no method, result or error"},
		{"result without id", Message{Result: json.RawMessage(`{}`)}, "without an id"},
		{"method and result", Message{ID: IntID(1), Method: "m", Result: json.RawMessage(`{}`)}, "beside its method"},
		{"result and error", Message{ID: IntID(1), Result: json.RawMessage(`{}`), Error: &WireError{}}, "both result and error"},
		{"invalid params", Message{Method: "m", Params: json.RawMessage(`{oops}`)}, "params"},
		{"invalid result", Message{ID: IntID(1), Result: json.RawMessage(`[`)}, "result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EncodeMessage(&tc.msg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	big := Message{Method: "m", Params: json.RawMessage(`"` + strings.Repeat("x", MCP_HTTP_MAX_BODY) + `"`)}
	if _, err := EncodeMessage(&big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized message: err = %v", err)
	}
}

func TestErrorTypes(t *testing.T) {
	var err error = fmt.Errorf("wrapped: %w", &MCPHTTPError{
		WireError: WireError{Code: CodeInvalidRequest, Message: "token expired"},
		Status:    http.StatusUnauthorized, WWWAuthenticate: `Bearer resource_metadata="https://127.0.0.1/prm"`,
	})
	var he *MCPHTTPError
	if !errors.As(err, &he) || !he.Unauthorized() {
		t.Fatalf("errors.As MCPHTTPError: %v", err)
	}
	var me *WireError
	if !errors.As(err, &me) || me.Code != CodeInvalidRequest {
		t.Fatalf("errors.As WireError through MCPHTTPError: %v", err)
	}
	for _, want := range []string{"401", "Unauthorized", "token expired", "resource_metadata"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
	if (&MCPHTTPError{Status: 500}).Unauthorized() {
		t.Error("500 reports Unauthorized")
	}
	we := &WireError{Code: CodeInternalError, Message: "boom", Data: json.RawMessage(`"why"`)}
	if got := we.Error(); got != `mcp error -32603: boom (data: "why")` {
		t.Errorf("Error() = %q", got)
	}
	// The TypeScript SDK puts the code in the message: said once.
	ts := &WireError{Code: CodeInvalidParams, Message: "MCP error -32602: Resource file:///etc/passwd not found"}
	if got := ts.Error(); got != "mcp error -32602: Resource file:///etc/passwd not found" {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(fmt.Errorf("x: %w", we), &WireError{Code: CodeInternalError}) || errors.Is(we, &WireError{Code: CodeParseError}) {
		t.Error("WireError.Is does not compare codes")
	}
}

func TestSupportedProtocolVersion(t *testing.T) {
	for v, want := range map[string]bool{MCP_PROTOCOL_VERSION: true, "2025-06-18": true, "2025-03-26": true,
		"2024-11-05": false, "2026-07-28": false, "": false} {
		if got := SupportedProtocolVersion(v); got != want {
			t.Errorf("SupportedProtocolVersion(%q) = %v", v, got)
		}
	}
}

func FuzzMessageDecode(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":0,"method":"x"}`, `{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","error":{"code":1,"message":""}}`, `[]`, `{"jsonrpc":"2.0","id":1e2,"method":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMessage(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", data, err)
		}
		if strings.ContainsAny(string(b), "\n\r") {
			t.Fatalf("encoding has a raw line break: %q", b)
		}
		back, err := DecodeMessage(b)
		if err != nil {
			t.Fatalf("own encoding %q does not decode: %v", b, err)
		}
		if back.ID != m.ID || back.Method != m.Method || (back.Error == nil) != (m.Error == nil) {
			t.Fatalf("round trip changed %+v into %+v", m, back)
		}
	})
}

// FuzzSkipValue checks the hand-written JSON validator against
// encoding/json.Valid.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,-0,true,false,null,"x\u00e9\n"]}`, ` [ ] `, `{}`, `"\ud800"`,
		`01`, `1.`, `-`, `1e`, `"\x"`, `{"a" 1}`, `[1,]`, `{"a":1,}`, "\"\x01\"", `nul`, `[[[[[]]]]]`, `"é"`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > 10000 {
			return // encoding/json stops at 10,000 levels; skipValue has no such limit
		}
		var saw bool
		end, err := skipValue(data, 0, &saw)
		ours := err == nil && skipWS(data, end, &saw) == len(data)
		if want := json.Valid(data); ours != want {
			t.Fatalf("skipValue says valid=%v for %q, json.Valid says %v (err %v)", ours, data, want, err)
		}
		if ours {
			got, err := appendCompact(nil, data)
			var want bytes.Buffer
			json.Compact(&want, data)
			if err != nil || string(got) != want.String() {
				t.Fatalf("appendCompact(%q) = %q, %v; want %q", data, got, err, want.String())
			}
		}
	})
}

func TestEachMemberAndElement(t *testing.T) {
	for _, mode := range []scanMode{validating, trusted} {
		t.Run(fmt.Sprintf("trusted=%v", mode), func(t *testing.T) {
			var keys []string
			err := eachMember([]byte(` {"a" : 1, "b\u0063":[1, {"x":"]}"}], "d":"s\"}", "e":true} `), mode, func(k, v []byte) {
				keys = append(keys, string(k)+"="+string(v))
			})
			if err != nil || strings.Join(keys, ";") != `a=1;bc=[1, {"x":"]}"}];d="s\"}";e=true` {
				t.Errorf("eachMember: %q %v", keys, err)
			}
			if err := eachMember([]byte(`{"a":1} x`), mode, func(k, v []byte) {}); err == nil {
				t.Error("trailing data accepted")
			}
			var elems []string
			err = eachElement([]byte(`[ {"type":"text"} , 2,"x",[[]],-1.5e3 ]`), mode, func(v []byte) { elems = append(elems, string(v)) })
			if err != nil || strings.Join(elems, ";") != `{"type":"text"};2;"x";[[]];-1.5e3` {
				t.Errorf("eachElement: %q %v", elems, err)
			}
			for _, bad := range []string{`[1 2]`, `[1,`, `["x]`, `[{]`} {
				if err := eachElement([]byte(bad), mode, func([]byte) {}); err == nil {
					t.Errorf("eachElement accepted %s", bad)
				}
			}
		})
	}
}

// FuzzSkipTrusted checks that on valid JSON the trusted scanner finds the
// same extents as the validating one.
func FuzzSkipTrusted(f *testing.F) {
	for _, s := range []string{`[1,"a\"b",{"c":[true,null]},-0.5e1]`, `{"a":{"b":"}"}}`, `[]`, `[[],{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var strict, loose []string
		e1 := eachElement(data, validating, func(v []byte) { strict = append(strict, string(v)) })
		e2 := eachElement(data, trusted, func(v []byte) { loose = append(loose, string(v)) })
		if (e1 == nil) != (e2 == nil) || strings.Join(strict, "\x00") != strings.Join(loose, "\x00") {
			t.Fatalf("%q: validating %q %v, trusted %q %v", data, strict, e1, loose, e2)
		}
	})
}
