package tool

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"tai/engine/llm/jsonschema"
	"tai/mcp"
)

// maxSchemaDepth bounds how deep checkSchema follows nested objects and
// arrays; deeper values are left for the tool to judge.
const maxSchemaDepth = 8

// checkSchema checks args against the common core of a tool's JSON Schema
// (coreKeywords, by jsonschema): required properties present, and each
// value of the type, enum or const its property schema names, within its
// minimum and maximum, and a list holding at least minItems, in nested
// objects and arrays too; a native tool's nested object that closes
// itself (additionalProperties false) takes no other names (the top
// level is unknownArgNames'). It returns the first problem (required
// arguments first, then the others by name), worded as the tools' own
// argument errors are, so a call that cannot succeed goes back to the
// model before anybody is asked to approve it. Keywords outside the core
// are not checked: servers write them loosely.
func checkSchema(t Tool, args map[string]any) error {
	if t.Parameters == nil {
		return nil
	}
	native := t.Origin == ""
	return argError("", jsonschema.CheckValue(t.Parameters, args, jsonschema.Options{
		NullAbsent: true, MaxDepth: maxSchemaDepth, Keywords: coreKeywords,
		Closed: func(path []any) bool { return native && len(path) > 0 },
	}))
}

// coreKeywords are the keywords a tool's arguments are checked for.
var coreKeywords = []string{"type", "enum", "required", "properties", "items", "minimum", "maximum", "minItems", "additionalProperties"}

// argError words v, found in the value named root (empty for a call's
// arguments), as the tools' own argument errors are worded; nil for none.
func argError(root string, v *jsonschema.Violation) error {
	if v == nil {
		return nil
	}
	path := pathText(root, v.Path)
	switch v.Kind {
	case jsonschema.Required:
		return fmt.Errorf("argument %q is missing: %s", join(path, v.Name), wantText(v.Schema))
	case jsonschema.Extra:
		return unknownNested(v.Schema, v.Value.(map[string]any), pathText(root, v.Path[:len(v.Path)-1]))
	case jsonschema.Enum:
		return fmt.Errorf("argument %q is %s: give one of %s", path, describeJSON(v.Value), listJSON(enumList(v.Schema["enum"])))
	case jsonschema.Minimum, jsonschema.Maximum:
		lo, hasLo := jsonschema.Number(v.Schema["minimum"])
		hi, hasHi := jsonschema.Number(v.Schema["maximum"])
		want := fmt.Sprintf("%v to %v", lo, hi)
		if !hasHi {
			want = fmt.Sprintf("at least %v", lo)
		} else if !hasLo {
			want = fmt.Sprintf("at most %v", hi)
		}
		return fmt.Errorf("argument %q is %v, out of range: give %s", path, v.Value, want)
	case jsonschema.MinItems:
		l, _ := v.Value.([]any)
		if len(l) == 0 {
			return fmt.Errorf("argument %q is an empty list: give a non-empty list", path)
		}
		lo, _ := jsonschema.Number(v.Schema["minItems"])
		return fmt.Errorf("argument %q is a list of %d: give at least %v items", path, len(l), lo)
	}
	// the value is not of its type
	if i, isItem := v.Path[len(v.Path)-1].(int); isItem && schemaTypesAre(v.Schema, "string") {
		return fmt.Errorf("argument %q item %d is a %T: give a list of strings", pathText(root, v.Path[:len(v.Path)-1]), i, v.Value)
	}
	if schemaTypesAre(v.Schema, "integer") {
		if _, isNum := jsonschema.Number(v.Value); isNum {
			return fmt.Errorf("argument %q is %v: give a whole number", path, v.Value)
		}
	}
	return fmt.Errorf("argument %q is a %T: %s", path, v.Value, wantText(v.Schema))
}

// pathText writes a path from root as the argument errors name it:
// "opts.depth", "items[2].name".
func pathText(root string, path []any) string {
	out := root
	for _, p := range path {
		switch p := p.(type) {
		case int:
			out += fmt.Sprintf("[%d]", p)
		default:
			out = join(out, fmt.Sprint(p))
		}
	}
	return out
}

// enumList reads an enum ([]any, or []string in a schema built in Go).
func enumList(v any) []any {
	if l, ok := v.([]string); ok {
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	l, _ := v.([]any)
	return l
}

// unlisted returns, quoted and sorted, the names of the object x that its
// schema s, closed by additionalProperties false, does not list in its
// properties (nil when s leaves the object open; see mcp.Clip), and those
// properties.
func unlisted(s, x map[string]any) ([]string, map[string]any) {
	props, _ := s["properties"].(map[string]any)
	if open, ok := s["additionalProperties"].(bool); !ok || open {
		return nil, props
	}
	var names []string
	for k := range x {
		if _, ok := props[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	// A client's names may be megabytes, and many: an error names a few,
	// each clipped.
	unknown := make([]string, 0, min(len(names), maxListed)+1)
	for _, k := range names[:min(len(names), maxListed)] {
		unknown = append(unknown, mcp.Clip(k))
	}
	if len(names) > maxListed {
		unknown = append(unknown, fmt.Sprintf("… (%d more)", len(names)-maxListed))
	}
	return unknown, props
}

// unknownNested refuses the names of the object x at path that its closed
// schema s does not list.
func unknownNested(s, x map[string]any, path string) error {
	unknown, props := unlisted(s, x)
	accepted := make([]string, 0, len(props))
	for k := range props {
		accepted = append(accepted, k)
	}
	sort.Strings(accepted)
	return fmt.Errorf("argument %q has %s, which it does not take: it holds only %s", path, strings.Join(unknown, ", "), strings.Join(accepted, ", "))
}

// wantText says what a value of schema s should be, as the tools' own
// argument errors say it.
func wantText(s map[string]any) string {
	types := schemaTypes(s["type"])
	if len(types) != 1 {
		return "it is required"
	}
	switch types[0] {
	case "string":
		return "give it as a string"
	case "integer":
		return "give a whole number"
	case "number":
		return "give a number"
	case "boolean":
		return "give true or false"
	case "array":
		if items, ok := s["items"].(map[string]any); ok && schemaTypesAre(items, "string") {
			return "give a list of strings"
		}
		return "give a list"
	case "object":
		return "give an object"
	}
	return "it is required"
}

// schemaTypesAre reports whether schema s names exactly the type typ.
func schemaTypesAre(s map[string]any, typ string) bool {
	types := schemaTypes(s["type"])
	return len(types) == 1 && types[0] == typ
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// schemaTypes reads a type keyword: one name or a list of names.
func schemaTypes(v any) []string {
	if t, ok := v.(string); ok {
		return []string{t}
	}
	return nameList(v)
}

// describeJSON names what v is, with a short rendering of it.
func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case float64, int, int64:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// Bounds of listJSON: a schema's enum is a server's, and may be long.
const (
	maxListed     = 20
	maxListedText = 60
)

// listJSON renders the allowed values vs for an error: at most maxListed
// of them, strings cut to maxListedText bytes, saying how many more there
// are.
func listJSON(vs []any) string {
	parts := make([]string, 0, min(len(vs), maxListed)+1)
	for _, v := range vs[:min(len(vs), maxListed)] {
		if s, ok := v.(string); ok {
			if len(s) > maxListedText {
				s = strings.ToValidUTF8(s[:maxListedText], "") + "…"
			}
			parts = append(parts, fmt.Sprintf("%q", s))
		} else {
			parts = append(parts, fmt.Sprint(v))
		}
	}
	if len(vs) > maxListed {
		parts = append(parts, fmt.Sprintf("… (%d more)", len(vs)-maxListed))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// CheckValue checks v, a decoded JSON value, against schema s (the same
// keywords a tool's arguments are checked for) and returns the first
// problem, naming path; nil when v matches.
func CheckValue(s map[string]any, v any, path string) error {
	err := argError(path, jsonschema.CheckValue(s, v, jsonschema.Options{NullAbsent: true, MaxDepth: maxSchemaDepth, Keywords: coreKeywords,
		Closed: func([]any) bool { return false }}))
	if err == nil {
		return nil
	}
	return errors.New(strings.TrimPrefix(err.Error(), "argument "))
}
