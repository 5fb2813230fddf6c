package elicit

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// everything is the form server-everything's trigger-elicitation-request
// sends, in its shape: every kind, titled and untitled enums, defaults.
const everything = `{"type":"object","properties":{
	"name":{"type":"string","title":"Full name","description":"Your full, legal name"},
	"check":{"type":"boolean","title":"Agree to terms","default":false},
	"firstLine":{"type":"string","title":"Favorite first line","default":"It was a dark and stormy night."},
	"email":{"type":"string","format":"email","title":"Email address"},
	"homepage":{"type":"string","format":"uri","title":"Homepage"},
	"birthdate":{"type":"string","format":"date","title":"Birthdate"},
	"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
	"number":{"type":"number","minimum":0,"maximum":1000,"default":3.14},
	"untitledSingle":{"type":"string","enum":["option1","option2","option3"],"default":"option1"},
	"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}],"default":"value1"},
	"legacy":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]},
	"untitledMulti":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]},"default":["a","b"]},
	"titledMulti":{"type":"array","items":{"anyOf":[{"const":"x","title":"Ex"},{"const":"y","title":"Why"}]},"default":["y"]},
	"api_key":{"type":"string"}},
	"required":["name"]}`

func TestParseForm(t *testing.T) {
	f, err := ParseForm(json.RawMessage(everything))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, fl := range f.Fields {
		order = append(order, fl.Name)
	}
	if got := strings.Join(order, ","); got != "name,check,firstLine,email,homepage,birthdate,integer,number,untitledSingle,titledSingle,legacy,untitledMulti,titledMulti,api_key" {
		t.Fatalf("fields in order %s, want the schema's order", got)
	}
	byName := map[string]*Field{}
	for i := range f.Fields {
		byName[f.Fields[i].Name] = &f.Fields[i]
	}
	if !byName["api_key"].Secret || byName["name"].Secret {
		t.Errorf("secret marks: api_key %v, name %v", byName["api_key"].Secret, byName["name"].Secret)
	}
	if o := byName["legacy"].Options; o[1] != (Option{Value: "opt2", Title: "Option Two"}) {
		t.Errorf("legacy enumNames: %+v", o)
	}
	if o := byName["titledSingle"].Options; o[0] != (Option{Value: "value1", Title: "First Option"}) {
		t.Errorf("titled enum: %+v", o)
	}
	tests := []struct {
		name, field, text string
		want              any
		err               string
	}{
		{name: "string", field: "name", text: "Ada", want: "Ada"},
		{name: "required empty", field: "name", text: "", err: "Full name is required"},
		{name: "default string", field: "firstLine", text: "", want: "It was a dark and stormy night."},
		{name: "email ok", field: "email", text: "ada@example.com", want: "ada@example.com"},
		{name: "email bad", field: "email", text: "Ada <ada@example.com>", err: "email address"},
		{name: "uri bad", field: "homepage", text: "example.com", err: "scheme"},
		{name: "date bad", field: "birthdate", text: "25/11/2025", err: "2025-11-25"},
		{name: "integer default", field: "integer", text: "", want: int64(42)},
		{name: "integer bound", field: "integer", text: "101", err: "from 1 to 100"},
		{name: "integer whole", field: "integer", text: "4.5", err: "whole number"},
		{name: "number", field: "number", text: "2.5", want: 2.5},
		{name: "boolean", field: "check", text: "yes", want: true},
		{name: "boolean default", field: "check", text: "", want: false},
		{name: "enum by number", field: "untitledSingle", text: "2", want: "option2"},
		{name: "enum by title", field: "titledSingle", text: "second option", want: "value2"},
		{name: "enum unknown", field: "titledSingle", text: "third", err: "no choice"},
		{name: "multi", field: "untitledMulti", text: "1, c", want: []string{"a", "c"}},
		{name: "multi too many", field: "untitledMulti", text: "a,b,c", err: "1 to 2 choices"},
		{name: "multi default", field: "titledMulti", text: "", want: []string{"y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := byName[tc.field].Parse(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %v, %v; want error with %q", tc.text, got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %#v, %v; want %#v", tc.text, got, err, tc.want)
			}
		})
	}
}

// TestContentDefaults: a script that accepts with nothing gets every
// default filled in (SEP-1034), with the conformance suite's schema.
func TestContentDefaults(t *testing.T) {
	f, err := ParseForm(json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","default":true},"note":{"type":"string"}},"required":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Content(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if string(b) != `{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}` {
		t.Fatalf("content %s", b)
	}
	if _, err := f.Content(map[string]any{"age": "thirty"}); err == nil || !strings.Contains(err.Error(), "age wants a number") {
		t.Fatalf("a script's wrong type: %v", err)
	}
	if _, err := f.Content(map[string]any{"nope": 1}); err == nil || !strings.Contains(err.Error(), `no field "nope"`) {
		t.Fatalf("a field the form does not ask: %v", err)
	}
}

func TestParseFormRefuses(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"not json", `{`, "not a JSON Schema object"},
		{"not object", `{"type":"array"}`, `type is "array"`},
		{"nested", `{"type":"object","properties":{"a":{"type":"object"}}}`, `"a" is of type "object"`},
		{"array of numbers", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"number"}}}}`, `"a" offers no choices`},
		{"format", `{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`, `format "ipv4"`},
		{"password", `{"type":"object","properties":{"pw":{"type":"string","format":"password"}}}`, `"pw" has the format "password": servers must not ask for secrets in a form (MCP)`},
		{"required unknown", `{"type":"object","properties":{},"required":["x"]}`, `requires "x"`},
		{"bad default", `{"type":"object","properties":{"a":{"type":"integer","maximum":3,"default":9}}}`, "default it refuses"},
		{"impossible bounds", `{"type":"object","properties":{"a":{"type":"number","minimum":5,"maximum":1}}}`, "which none is"},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, "not one name"},
		{"control chars", "{\"type\":\"object\",\"properties\":{\"a\\u001b[2J\":{}}}", `\x1b`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseForm(json.RawMessage(tc.schema))
			var u *Unshowable
			if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "this server asked for a form tai cannot show: ") {
				t.Fatalf("ParseForm = %v, want an Unshowable with %q", err, tc.want)
			}
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Fatalf("the refusal carries a raw escape: %q", err)
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	tests := []struct{ name, params, err string }{
		{"form without mode", `{"message":"m","requestedSchema":{"type":"object"}}`, ""},
		{"form without schema", `{"message":"m"}`, "needs a requestedSchema"},
		{"url", `{"mode":"url","message":"m","url":"https://x.example","elicitationId":"1"}`, ""},
		{"url without id", `{"mode":"url","message":"m","url":"https://x.example"}`, "elicitationId"},
		{"unknown mode", `{"mode":"voice","message":"m"}`, `mode "voice"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest(json.RawMessage(tc.params))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("ParseRequest = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestParseLink(t *testing.T) {
	tests := []struct {
		name, raw, url, host, unicode, warn, err string
	}{
		{name: "https", raw: "https://example.com/connect?id=1", url: "https://example.com/connect?id=1", host: "example.com"},
		{name: "idn", raw: "https://bücher.example/x", url: "https://xn--bcher-kva.example/x", host: "xn--bcher-kva.example", unicode: "bücher.example", warn: "punycode"},
		{name: "homograph already in punycode", raw: "https://xn--pple-43d.com/", url: "https://xn--pple-43d.com/", host: "xn--pple-43d.com", unicode: "аpple.com", warn: "punycode"},
		{name: "userinfo", raw: "https://google.com@evil.example/", url: "https://google.com@evil.example/", host: "evil.example", warn: "the host is evil.example"},
		{name: "http", raw: "http://example.com/", url: "http://example.com/", host: "example.com", warn: "plain http"},
		{name: "loopback http", raw: "http://127.0.0.1:8080/cb", url: "http://127.0.0.1:8080/cb", host: "127.0.0.1"},
		{name: "javascript", raw: "javascript:alert(1)", err: "only http and https"},
		{name: "file", raw: "file:///etc/passwd", err: "only http and https"},
		{name: "escape", raw: "https://example.com/\x1b[2J", err: "control characters"},
		{name: "no host", raw: "https:///path", err: "names no host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLink(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseLink = %+v, %v; want error %q", l, err, tc.err)
				}
				return
			}
			if err != nil || l.URL != tc.url || l.Host != tc.host || l.Unicode != tc.unicode {
				t.Fatalf("ParseLink = %+v, %v; want %s on %s (%q)", l, err, tc.url, tc.host, tc.unicode)
			}
			if w := strings.Join(l.Warnings, "; "); tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
				t.Fatalf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}
