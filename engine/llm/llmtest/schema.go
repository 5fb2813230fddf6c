package llmtest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// The request schemas of the two APIs, trimmed from their published
// references (see each file's $comment).
//
//go:embed testdata/*.schema.json
var schemaFiles embed.FS

// A schema is a JSON Schema of the subset the trimmed API schemas use:
// type (a name or a list), enum, const, properties, required,
// additionalProperties (false or a schema), items, minItems, maxItems,
// minLength, maxLength (in characters), pattern (RE2, unanchored),
// minimum, maximum, oneOf, anyOf, and $ref to "#/$defs/NAME". Other
// keywords ($comment, description) are ignored.
type schema struct {
	root     map[string]any
	patterns map[string]*regexp.Regexp
}

// loadSchema reads and checks the schema file name: it must parse, every
// $ref must name a definition, and every pattern must compile.
func loadSchema(name string) (*schema, error) {
	data, err := schemaFiles.ReadFile("testdata/" + name)
	if err != nil {
		return nil, err
	}
	return parseSchema(name, data)
}

// parseSchema reads the schema data (named name in errors).
func parseSchema(name string, data []byte) (*schema, error) {
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	s := &schema{root: root, patterns: map[string]*regexp.Regexp{}}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, err := s.resolve(ref); err != nil {
					return err
				}
			}
			if p, ok := v["pattern"].(string); ok {
				re, err := regexp.Compile(p)
				if err != nil {
					return fmt.Errorf("pattern %q: %v", p, err)
				}
				s.patterns[p] = re
			}
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return s, nil
}

func (s *schema) resolve(ref string) (map[string]any, error) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	defs, _ := s.root["$defs"].(map[string]any)
	def, found := defs[name].(map[string]any)
	if !ok || !found {
		return nil, fmt.Errorf("$ref %q names no definition", ref)
	}
	return def, nil
}

// violation is where a document breaks its schema and how.
type violation struct {
	path  string // JSON path: messages.1.content.0.text
	depth int
	msg   string
}

func (v *violation) Error() string {
	if v.path == "" {
		return v.msg
	}
	return v.path + ": " + v.msg
}

// validate checks the JSON document body against s; the error names the
// first place it breaks.
func (s *schema) validate(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if v := s.check(s.root, doc, "", 0); v != nil {
		return v
	}
	return nil
}

func at(path string, key any) string {
	if path == "" {
		return fmt.Sprint(key)
	}
	return fmt.Sprintf("%s.%v", path, key)
}

func typeOf(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if !strings.ContainsAny(x.String(), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func hasType(x any, want any) bool {
	got := typeOf(x)
	ok := func(t string) bool { return t == got || t == "number" && got == "integer" }
	switch w := want.(type) {
	case string:
		return ok(w)
	case []any:
		for _, t := range w {
			if s, _ := t.(string); ok(s) {
				return true
			}
		}
	}
	return false
}

// number reads a number of the schema (float64) or of a document
// (json.Number).
func number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// check validates x against sch at path; depth is how deep path is, so
// that a failed oneOf reports the branch that got furthest.
func (s *schema) check(sch map[string]any, x any, path string, depth int) *violation {
	fail := func(format string, args ...any) *violation {
		return &violation{path: path, depth: depth, msg: fmt.Sprintf(format, args...)}
	}
	if ref, ok := sch["$ref"].(string); ok {
		def, err := s.resolve(ref)
		if err != nil {
			return fail("%v", err)
		}
		if v := s.check(def, x, path, depth); v != nil {
			return v
		}
	}
	if t, ok := sch["type"]; ok && !hasType(x, t) {
		return fail("expected %v, got %s", t, typeOf(x))
	}
	if c, ok := sch["const"]; ok && !equal(c, x) {
		return fail("expected %v, got %s", c, short(x))
	}
	if e, ok := sch["enum"].([]any); ok {
		found := false
		for _, c := range e {
			found = found || equal(c, x)
		}
		if !found {
			return fail("expected one of %v, got %s", e, short(x))
		}
	}
	switch x := x.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if m, ok := number(sch["minLength"]); ok && float64(n) < m {
			return fail("string shorter than %v characters", m)
		}
		if m, ok := number(sch["maxLength"]); ok && float64(n) > m {
			return fail("string longer than %v characters", m)
		}
		if p, ok := sch["pattern"].(string); ok && !s.patterns[p].MatchString(x) {
			return fail("string %s does not match %s", short(x), p)
		}
	case json.Number:
		f, _ := x.Float64()
		if m, ok := number(sch["minimum"]); ok && f < m {
			return fail("%v is less than the minimum %v", x, m)
		}
		if m, ok := number(sch["maximum"]); ok && f > m {
			return fail("%v is greater than the maximum %v", x, m)
		}
	case []any:
		if m, ok := number(sch["minItems"]); ok && float64(len(x)) < m {
			return fail("array of %d items, fewer than %v", len(x), m)
		}
		if m, ok := number(sch["maxItems"]); ok && float64(len(x)) > m {
			return fail("array of %d items, more than %v", len(x), m)
		}
		if items, ok := sch["items"].(map[string]any); ok {
			for i, y := range x {
				if v := s.check(items, y, at(path, i), depth+1); v != nil {
					return v
				}
			}
		}
	case map[string]any:
		if req, ok := sch["required"].([]any); ok {
			for _, k := range req {
				if _, found := x[k.(string)]; !found {
					return fail("%s: Field required", k)
				}
			}
		}
		props, _ := sch["properties"].(map[string]any)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k].(map[string]any); ok {
				if v := s.check(p, x[k], at(path, k), depth+1); v != nil {
					return v
				}
				continue
			}
			switch extra := sch["additionalProperties"].(type) {
			case bool:
				if !extra {
					return &violation{path: at(path, k), depth: depth + 1, msg: "Extra inputs are not permitted"}
				}
			case map[string]any:
				if v := s.check(extra, x[k], at(path, k), depth+1); v != nil {
					return v
				}
			}
		}
	}
	if alts, ok := sch["anyOf"].([]any); ok {
		if v := s.some(alts, x, path, depth, false); v != nil {
			return v
		}
	}
	if alts, ok := sch["oneOf"].([]any); ok {
		if v := s.some(alts, x, path, depth, true); v != nil {
			return v
		}
	}
	return nil
}

// some checks x against the alternatives of an anyOf (or, when one is
// set, a oneOf: exactly one must match). When none matches, the error is
// that of the alternative x says it is (its const fields match, as a
// role or a type does), else of the one that got furthest.
func (s *schema) some(alts []any, x any, path string, depth int, one bool) *violation {
	var best *violation
	bestMeant := false
	n := 0
	for _, b := range alts {
		alt := b.(map[string]any)
		v := s.check(alt, x, path, depth)
		if v == nil {
			n++
			if !one {
				return nil
			}
			continue
		}
		meant := s.meant(alt, x)
		if best == nil || meant && !bestMeant || meant == bestMeant && v.depth > best.depth {
			best, bestMeant = v, meant
		}
	}
	switch {
	case n == 0:
		return best
	case n > 1:
		return &violation{path: path, depth: depth, msg: fmt.Sprintf("matches %d of the schemas of a oneOf, not exactly one", n)}
	}
	return nil
}

// meant reports whether x is an object whose fields match every const
// field alt declares (the discriminator of a oneOf), and alt declares one.
func (s *schema) meant(alt map[string]any, x any) bool {
	if ref, ok := alt["$ref"].(string); ok {
		if def, err := s.resolve(ref); err == nil {
			alt = def
		}
	}
	obj, ok := x.(map[string]any)
	props, _ := alt["properties"].(map[string]any)
	if !ok || props == nil {
		return false
	}
	found := false
	for k, p := range props {
		c, ok := p.(map[string]any)["const"]
		if !ok {
			continue
		}
		if !equal(c, obj[k]) {
			return false
		}
		found = true
	}
	return found
}

// short quotes x for an error, cut to 40 bytes.
func short(x any) string {
	b, _ := json.Marshal(x)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
