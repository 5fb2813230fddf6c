package tool

import (
	"fmt"
	"strings"
	"testing"
)

func TestCheckSchema(t *testing.T) {
	params := map[string]any{
		"type":     "object",
		"required": []any{"mode"},
		"properties": map[string]any{
			"mode":  map[string]any{"type": "string", "enum": []any{"fast", "slow"}},
			"count": map[string]any{"type": "integer"},
			"ratio": map[string]any{"type": []any{"number", "null"}},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"opts": map[string]any{"type": "object", "required": []any{"depth"}, "properties": map[string]any{
				"depth": map[string]any{"type": "integer"},
			}},
			"free": map[string]any{"description": "no type: anything goes"},
		},
	}
	tests := []struct {
		name string
		args map[string]any
		want string // "" means valid
	}{
		{"valid", map[string]any{"mode": "fast", "count": 3.0, "tags": []any{"a"}, "opts": map[string]any{"depth": 1.0}, "free": []any{1.0}}, ""},
		{"null for an optional value", map[string]any{"mode": "fast", "ratio": nil}, ""},
		{"a type list", map[string]any{"mode": "slow", "ratio": 0.5}, ""},
		{"missing required", map[string]any{}, `argument "mode" is missing: give it as a string`},
		{"outside the enum", map[string]any{"mode": "medium"}, `argument "mode" is the string "medium": give one of ["fast", "slow"]`},
		{"fraction for an integer", map[string]any{"mode": "fast", "count": 1.5}, `argument "count" is 1.5: give a whole number`},
		{"string for an integer", map[string]any{"mode": "fast", "count": "2"}, `argument "count" is a string: give a whole number`},
		{"not in a type list", map[string]any{"mode": "fast", "ratio": "half"}, `argument "ratio" is a string: it is required`},
		{"list item", map[string]any{"mode": "fast", "tags": []any{"a", 2.0}}, `argument "tags" item 1 is a float64: give a list of strings`},
		{"string for a list", map[string]any{"mode": "fast", "tags": "a"}, `argument "tags" is a string: give a list of strings`},
		{"nested required", map[string]any{"mode": "fast", "opts": map[string]any{}}, `argument "opts.depth" is missing: give a whole number`},
		{"nested type", map[string]any{"mode": "fast", "opts": map[string]any{"depth": "deep"}}, `argument "opts.depth" is a string: give a whole number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSchema(Tool{Name: "t", Parameters: params}, tt.args)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("valid arguments refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// A server's enum of thousands of values, or of long ones, makes an
// argument error that names a few of them, not a copy of the schema.
func TestCheckSchemaErrorOfAHugeEnumIsShort(t *testing.T) {
	many := make([]any, 5000)
	for i := range many {
		many[i] = strings.Repeat("v", 1000) + fmt.Sprint(i)
	}
	long := make([]string, 5000)
	for i := range long {
		long[i] = fmt.Sprint("choice-", i)
	}
	for _, p := range []map[string]any{
		{"type": "object", "properties": map[string]any{"e": map[string]any{"enum": many}}},
		{"type": "object", "properties": map[string]any{"e": map[string]any{"enum": long}}},
	} {
		err := checkSchema(Tool{Name: "t", Parameters: p}, map[string]any{"e": "other"})
		if err == nil || len(err.Error()) > 2048 {
			t.Fatalf("error of %d bytes: %.200v", len(fmt.Sprint(err)), err)
		}
		for _, want := range []string{`argument "e" is the string "other": give one of [`, "… (4980 more)]"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %.300q lacks %q", err, want)
			}
		}
	}
}

// TestCheckSchemaBoundsAndClosedObjects: minimum, maximum and minItems
// are checked for every tool; a nested object closed by
// additionalProperties false is held to it for a native tool only (a
// bridged one's server judges its own schema).
func TestCheckSchemaBoundsAndClosedObjects(t *testing.T) {
	params := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"steps": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
			"temp":  map[string]any{"type": "number", "minimum": 0.5},
			"top":   map[string]any{"type": "number", "maximum": 2.0},
			"list":  map[string]any{"type": "array", "minItems": 2.0, "items": map[string]any{"type": "integer"}},
			"msgs": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{
				"type": "object", "additionalProperties": false,
				"properties": map[string]any{"role": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
			}},
		},
	}
	tests := []struct {
		name    string
		args    map[string]any
		native  string // "" means valid
		bridged string // "" means valid
	}{
		{"within bounds", map[string]any{"steps": 1.0, "temp": 0.5, "top": 2.0, "list": []any{1.0, 2.0}, "msgs": []any{map[string]any{"role": "user"}}}, "", ""},
		{"below both bounds", map[string]any{"steps": 0.0}, `argument "steps" is 0, out of range: give 1 to 100`, `argument "steps" is 0, out of range: give 1 to 100`},
		{"above both bounds", map[string]any{"steps": 101.0}, `argument "steps" is 101, out of range: give 1 to 100`, `argument "steps" is 101, out of range: give 1 to 100`},
		{"below a minimum", map[string]any{"temp": 0.25}, `argument "temp" is 0.25, out of range: give at least 0.5`, `argument "temp" is 0.25, out of range: give at least 0.5`},
		{"above a maximum", map[string]any{"top": 3.0}, `argument "top" is 3, out of range: give at most 2`, `argument "top" is 3, out of range: give at most 2`},
		{"an empty list", map[string]any{"msgs": []any{}}, `argument "msgs" is an empty list: give a non-empty list`, `argument "msgs" is an empty list: give a non-empty list`},
		{"a short list", map[string]any{"list": []any{1.0}}, `argument "list" is a list of 1: give at least 2 items`, `argument "list" is a list of 1: give at least 2 items`},
		{"a name a closed object does not take", map[string]any{"msgs": []any{map[string]any{"role": "user", "name": "x", "age": 1.0}}},
			`argument "msgs[0]" has "age", "name", which it does not take: it holds only content, role`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, origin := range []string{"", "srv/t"} {
				want := tt.native
				if origin != "" {
					want = tt.bridged
				}
				err := checkSchema(Tool{Name: "t", Parameters: params, Origin: origin}, tt.args)
				switch {
				case want == "" && err != nil:
					t.Fatalf("origin %q: valid arguments refused: %v", origin, err)
				case want != "" && (err == nil || err.Error() != want):
					t.Fatalf("origin %q: got %v, want %q", origin, err, want)
				}
			}
		})
	}
}

// TestUnknownArgumentNamesAreNamedBriefly: a call with a megabyte-long
// argument name, or thousands of names, gets an error that names a few,
// clipped, not a copy of the arguments (which a served call would store
// as a record).
func TestUnknownArgumentNamesAreNamedBriefly(t *testing.T) {
	tool := Tool{Name: "t", Parameters: Schema(nil, map[string]any{
		"list": map[string]any{"type": "array", "items": Schema(nil, map[string]any{"a": Prop("string", "")})},
	})}
	many := map[string]any{}
	for i := range 5000 {
		many[fmt.Sprint("name-", i)] = 1.0
	}
	huge := strings.Repeat("N", 1<<20)
	for _, args := range []map[string]any{
		{huge: 1.0},
		many,
		{"list": []any{map[string]any{huge: 1.0}}},
		{"list": []any{many}},
	} {
		err := checkArgNames(tool, args)
		if err == nil || len(err.Error()) > 4096 || !strings.Contains(err.Error(), "does not take") {
			t.Fatalf("error of %d bytes: %.300v", len(fmt.Sprint(err)), err)
		}
	}
}

// BenchmarkCheckSchema checks a typical call's arguments against its
// tool's schema, as every call is before it is approved.
func BenchmarkCheckSchema(b *testing.B) {
	tl := Tool{Name: "t", Parameters: map[string]any{
		"type": "object", "required": []any{"path", "mode"},
		"properties": map[string]any{
			"path":  map[string]any{"type": "string"},
			"mode":  map[string]any{"type": "string", "enum": []any{"read", "write", "append"}},
			"lines": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
			"opts":  map[string]any{"type": "object", "properties": map[string]any{"depth": map[string]any{"type": "integer"}}},
		},
	}}
	args := map[string]any{"path": "a/b.txt", "mode": "write", "lines": []any{"x", "y", "z"}, "limit": 10.0, "opts": map[string]any{"depth": 2.0}}
	b.ReportAllocs()
	for b.Loop() {
		if err := checkSchema(tl, args); err != nil {
			b.Fatal(err)
		}
	}
}
