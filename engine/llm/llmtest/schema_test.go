package llmtest

import (
	"strings"
	"testing"
)

func TestSchemaKeywords(t *testing.T) {
	s, err := parseSchema("test", []byte(`{
		"type": "object", "required": ["a"], "additionalProperties": false,
		"properties": {
			"a": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^x"},
			"n": {"type": ["integer", "null"], "minimum": 1, "maximum": 9},
			"e": {"enum": ["p", "q"]},
			"l": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"$ref": "#/$defs/item"}},
			"o": {"oneOf": [{"$ref": "#/$defs/item"}, {"type": "string"}]},
			"y": {"anyOf": [{"type": "boolean"}, {"type": "string"}]}
		},
		"$defs": {"item": {"type": "object", "required": ["k"], "properties": {"k": {"const": "v"}, "m": {"type": "number"}}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ doc, want string }{
		{`{"a":"xy"}`, ""},
		{`{"a":"xyz","n":null,"e":"q","l":[{"k":"v","m":1.5}],"o":"s","y":true}`, ""},
		{`{}`, "a: Field required"},
		{`{"a":"x"}`, "a: string shorter than 2"},
		{`{"a":"xéyz"}`, "a: string longer than 3"},
		{`{"a":"yy"}`, `a: string "yy" does not match ^x`},
		{`{"a":"xy","b":1}`, "b: Extra inputs are not permitted"},
		{`{"a":"xy","n":1.5}`, "n: expected [integer null], got number"},
		{`{"a":"xy","n":0}`, "n: 0 is less than the minimum 1"},
		{`{"a":"xy","n":10}`, "n: 10 is greater than the maximum 9"},
		{`{"a":"xy","e":"r"}`, "e: expected one of [p q]"},
		{`{"a":"xy","l":[]}`, "l: array of 0 items, fewer than 1"},
		{`{"a":"xy","l":[{"k":"v"},{"k":"v"},{"k":"v"}]}`, "l: array of 3 items, more than 2"},
		{`{"a":"xy","l":[{"k":"w"}]}`, `l.0.k: expected v, got "w"`},
		{`{"a":"xy","o":{"k":"v","m":"1"}}`, "o.m: expected number, got string"},
		{`{"a":"xy","y":1}`, "y: expected boolean, got integer"},
		{`{"a":`, "invalid JSON"},
	}
	for _, tc := range cases {
		err := s.validate([]byte(tc.doc))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.doc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
	}
	if _, err := parseSchema("bad", []byte(`{"properties": {"a": {"$ref": "#/$defs/none"}}}`)); err == nil {
		t.Error("a $ref to no definition was accepted")
	}
}

// TestSchemasLoad checks the API schemas in testdata parse, with every
// $ref and pattern sound.
func TestSchemasLoad(t *testing.T) {
	for _, name := range []string{"openai-chat-request.schema.json", "anthropic-messages-request.schema.json"} {
		if _, err := loadSchema(name); err != nil {
			t.Error(err)
		}
	}
}
