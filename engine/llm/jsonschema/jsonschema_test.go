package jsonschema

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestCheck(t *testing.T) {
	root := map[string]any{}
	if err := json.Unmarshal([]byte(`{
		"type": "object", "required": ["kind"], "additionalProperties": false,
		"properties": {
			"kind": {"enum": ["a", "b"]},
			"n": {"type": "integer", "minimum": 1, "maximum": 5},
			"name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^x"},
			"list": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"$ref": "#/$defs/item"}},
			"one": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
			"deep": {"type": "object", "properties": {"x": {"type": "object", "properties": {"y": {"type": "string"}}}}}
		},
		"$defs": {"item": {"type": "object", "properties": {"role": {"const": "user"}}}}
	}`), &root); err != nil {
		t.Fatal(err)
	}
	s, err := Compile(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		doc  string
		o    Options
		kind Kind // -1: valid
		path string
	}{
		{"valid", `{"kind": "a", "n": 2, "name": "xy", "list": [{"role": "user"}], "one": 1.5}`, Options{}, -1, ""},
		{"required", `{}`, Options{}, Required, "[]"},
		{"null is absent when asked", `{"kind": null}`, Options{NullAbsent: true}, Required, "[]"},
		{"null is a value otherwise", `{"kind": null}`, Options{}, Enum, "[kind]"},
		{"enum", `{"kind": "c"}`, Options{}, Enum, "[kind]"},
		{"type", `{"kind": "a", "n": 1.5}`, Options{}, Type, "[n]"},
		{"minimum", `{"kind": "a", "n": 0}`, Options{}, Minimum, "[n]"},
		{"maximum", `{"kind": "a", "n": 9}`, Options{}, Maximum, "[n]"},
		{"minLength", `{"kind": "a", "name": "x"}`, Options{}, MinLength, "[name]"},
		{"maxLength", `{"kind": "a", "name": "xxxxx"}`, Options{}, MaxLength, "[name]"},
		{"pattern", `{"kind": "a", "name": "yy"}`, Options{}, Pattern, "[name]"},
		{"minItems", `{"kind": "a", "list": []}`, Options{}, MinItems, "[list]"},
		{"maxItems", `{"kind": "a", "list": [{}, {}, {}]}`, Options{}, MaxItems, "[list]"},
		{"const through $ref", `{"kind": "a", "list": [{"role": "bot"}]}`, Options{}, Const, "[list 0 role]"},
		{"oneOf matching two", `{"kind": "a", "one": 2}`, Options{}, OneOf, "[one]"},
		{"extra", `{"kind": "a", "zzz": 1}`, Options{}, Extra, "[zzz]"},
		{"extra in an open place", `{"kind": "a", "zzz": 1}`, Options{Closed: func(p []any) bool { return len(p) > 0 }}, -1, ""},
		{"deeper than MaxDepth", `{"kind": "a", "deep": {"x": {"y": 1}}}`, Options{MaxDepth: 2}, -1, ""},
		{"within MaxDepth", `{"kind": "a", "deep": {"x": {"y": 1}}}`, Options{MaxDepth: 3}, Type, "[deep x y]"},
		{"a keyword left out", `{"kind": "a", "name": "yy"}`, Options{Keywords: []string{"type", "enum", "required", "properties"}}, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
				t.Fatal(err)
			}
			v := s.Check(doc, tt.o)
			switch {
			case tt.kind < 0 && v != nil:
				t.Fatalf("got %+v, want valid", v)
			case tt.kind < 0:
			case v == nil:
				t.Fatalf("valid, want kind %d", tt.kind)
			case v.Kind != tt.kind || fmtPath(v.Path) != tt.path:
				t.Fatalf("got kind %d at %s, want %d at %s", v.Kind, fmtPath(v.Path), tt.kind, tt.path)
			}
		})
	}
	if _, err := Compile(map[string]any{"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/none"}}}); err == nil {
		t.Error("a $ref to nothing compiled")
	}
}

func fmtPath(p []any) string { return fmt.Sprint(p) }
