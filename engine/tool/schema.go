package tool

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"tai/mcp"
)

// maxSchemaDepth bounds how deep checkSchema follows nested objects and
// arrays; deeper values are left for the tool to judge.
const maxSchemaDepth = 8

// checkSchema checks args against the common core of a tool's JSON Schema:
// required properties present, and each value of the type, enum or const
// its property schema names, within its minimum and maximum, and a list
// holding at least minItems, in nested objects and arrays too; a native
// tool's nested object that closes itself (additionalProperties false)
// takes no other names (the top level is unknownArgNames'). It returns
// the first problem (required arguments first, then the others by name),
// worded as the tools' own argument errors are, so a call that cannot
// succeed goes back to the model before anybody is asked to approve it.
// Keywords it does not know are not checked.
func checkSchema(t Tool, args map[string]any) error {
	if t.Parameters == nil {
		return nil
	}
	return checkObject(t.Parameters, args, "", 0, t.Origin == "")
}

// checkObject checks the object x at path against schema s; closed says
// to hold a nested object to its additionalProperties false.
func checkObject(s map[string]any, x map[string]any, path string, depth int, closed bool) error {
	props, _ := s["properties"].(map[string]any)
	if closed && path != "" {
		if err := unknownNested(s, x, path); err != nil {
			return err
		}
	}
	for _, req := range nameList(s["required"]) {
		if val, ok := x[req]; !ok || val == nil {
			ps, _ := props[req].(map[string]any)
			return fmt.Errorf("argument %q is missing: %s", join(path, req), wantText(ps))
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ps, ok := props[k].(map[string]any); ok && x[k] != nil {
			if err := checkValue(ps, x[k], join(path, k), depth+1, closed); err != nil {
				return err
			}
		}
	}
	return nil
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
	if len(unknown) == 0 {
		return nil
	}
	accepted := make([]string, 0, len(props))
	for k := range props {
		accepted = append(accepted, k)
	}
	sort.Strings(accepted)
	return fmt.Errorf("argument %q has %s, which it does not take: it holds only %s", path, strings.Join(unknown, ", "), strings.Join(accepted, ", "))
}

// checkBounds checks a number against its schema's minimum and maximum,
// and a list against its minItems.
func checkBounds(s map[string]any, v any, path string) error {
	if n, ok := toFloat(v); ok {
		lo, hasLo := toFloat(s["minimum"])
		hi, hasHi := toFloat(s["maximum"])
		if hasLo && n < lo || hasHi && n > hi {
			want := fmt.Sprintf("%v to %v", lo, hi)
			if !hasHi {
				want = fmt.Sprintf("at least %v", lo)
			} else if !hasLo {
				want = fmt.Sprintf("at most %v", hi)
			}
			return fmt.Errorf("argument %q is %v, out of range: give %s", path, v, want)
		}
	}
	if l, ok := v.([]any); ok {
		if lo, ok := toFloat(s["minItems"]); ok && float64(len(l)) < lo {
			if len(l) == 0 {
				return fmt.Errorf("argument %q is an empty list: give a non-empty list", path)
			}
			return fmt.Errorf("argument %q is a list of %d: give at least %v items", path, len(l), lo)
		}
	}
	return nil
}

// checkValue checks v at path (never empty) against schema s.
func checkValue(s map[string]any, v any, path string, depth int, closed bool) error {
	if depth > maxSchemaDepth {
		return nil
	}
	if types := schemaTypes(s["type"]); len(types) > 0 {
		ok := false
		for _, typ := range types {
			ok = ok || isType(v, typ)
		}
		if !ok {
			if len(types) == 1 && types[0] == "integer" {
				if _, isNum := toFloat(v); isNum {
					return fmt.Errorf("argument %q is %v: give a whole number", path, v)
				}
			}
			if len(types) == 1 && types[0] == "array" {
				if items, ok := s["items"].(map[string]any); ok && schemaTypesAre(items, "string") {
					return fmt.Errorf("argument %q is a %T: give a list of strings", path, v)
				}
			}
			return fmt.Errorf("argument %q is a %T: %s", path, v, wantText(s))
		}
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		found := false
		for _, e := range enum {
			found = found || schemaEqual(e, v)
		}
		if !found {
			return fmt.Errorf("argument %q is %s: give one of %s", path, describeJSON(v), listJSON(enum))
		}
	}
	if enum, ok := s["enum"].([]string); ok && len(enum) > 0 {
		str, isStr := v.(string)
		found := false
		for _, e := range enum {
			found = found || isStr && e == str
		}
		if !found {
			listed := make([]any, len(enum))
			for i, e := range enum {
				listed[i] = e
			}
			return fmt.Errorf("argument %q is %s: give one of %s", path, describeJSON(v), listJSON(listed))
		}
	}
	if err := checkBounds(s, v, path); err != nil {
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		return checkObject(s, x, path, depth, closed)
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				if schemaTypesAre(items, "string") {
					if _, isStr := e.(string); !isStr {
						return fmt.Errorf("argument %q item %d is a %T: give a list of strings", path, i, e)
					}
					continue
				}
				if err := checkValue(items, e, fmt.Sprintf("%s[%d]", path, i), depth+1, closed); err != nil {
					return err
				}
			}
		}
	}
	return nil
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

// isType reports whether v, as decoded from JSON, is of JSON Schema type
// typ; an unknown type name accepts anything.
func isType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		switch v.(type) {
		case float64, int, int64:
			return true
		}
		return false
	case "integer":
		switch n := v.(type) {
		case float64:
			return n == math.Trunc(n) && !math.IsInf(n, 0)
		case int, int64:
			return true
		}
		return false
	}
	return true
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

// schemaEqual compares two scalar JSON values, numbers by value.
func schemaEqual(a, b any) bool {
	fa, aNum := toFloat(a)
	fb, bNum := toFloat(b)
	if aNum || bNum {
		return aNum && bNum && fa == fb
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// CheckValue checks v, a decoded JSON value, against schema s (the same
// keywords a tool's arguments are checked for) and returns the first
// problem, naming path; nil when v matches.
func CheckValue(s map[string]any, v any, path string) error {
	if err := checkValue(s, v, path, 0, false); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "argument "))
	}
	return nil
}
