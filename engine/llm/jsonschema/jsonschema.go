// Package jsonschema checks a decoded JSON value against a JSON Schema of
// the subset tai meets: type (a name or a list), enum, const, properties,
// required, additionalProperties (false or a schema), items, minItems,
// maxItems, minLength, maxLength (in characters), pattern (RE2,
// unanchored), minimum, maximum, oneOf, anyOf, and $ref to
// "#/$defs/NAME". Other keywords are not checked. It finds where a value
// breaks its schema, as a Violation; each caller words it (a tool's
// argument errors, a model API's validation errors). It is the one
// validator of the engine: the tool registry and the fake model servers
// of llmtest use it. It imports nothing of tai.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schema is a JSON Schema ready to check values against.
type Schema struct {
	root     map[string]any
	patterns map[string]*regexp.Regexp
}

// Compile checks root: every $ref must name a definition and every
// pattern must compile.
func Compile(root map[string]any) (*Schema, error) {
	s := &Schema{root: root, patterns: map[string]*regexp.Regexp{}}
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
		return nil, err
	}
	return s, nil
}

func (s *Schema) resolve(ref string) (map[string]any, error) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	defs, _ := s.root["$defs"].(map[string]any)
	def, found := defs[name].(map[string]any)
	if !ok || !found {
		return nil, fmt.Errorf("$ref %q names no definition", ref)
	}
	return def, nil
}

// Kind is which rule a value broke.
type Kind int

// The rules a value may break.
const (
	Type      Kind = iota // not of the type named
	Const                 // not the const
	Enum                  // none of the enum
	Required              // a required property is absent (Name)
	Extra                 // a property the closed object does not list (Name)
	MinLength             // a string shorter than minLength
	MaxLength             // a string longer than maxLength
	Pattern               // a string the pattern does not match
	Minimum               // a number below minimum
	Maximum               // a number above maximum
	MinItems              // an array of fewer than minItems
	MaxItems              // an array of more than maxItems
	OneOf                 // matches more than one alternative of a oneOf (Matches)
	BadRef                // the schema's $ref names no definition (Err)
)

// Violation is where a value breaks its schema and how.
type Violation struct {
	Kind Kind
	// Path leads from the root to the value: property names (string) and
	// item indexes (int). For Required it is the object's; for Extra it
	// ends in the extra property's name.
	Path []any
	// Schema is the schema broken there (for Required, the absent
	// property's own schema when it has one; for Extra, the object's).
	Schema map[string]any
	// Value is the value that broke it (for Required and Extra, the
	// object).
	Value any
	// Name is the property, for Required and Extra.
	Name string
	// Matches is how many alternatives of a oneOf matched.
	Matches int
	// Err says what is wrong with a $ref.
	Err error
}

// Options say how Check reads a value.
type Options struct {
	// NullAbsent counts a property whose value is null as absent: not
	// checked, and missing when required (a tool's arguments).
	NullAbsent bool
	// Closed, when set, says whether the object at path is held to its
	// additionalProperties false; nil holds every one.
	Closed func(path []any) bool
	// MaxDepth bounds how deep values are checked: a value more than
	// MaxDepth steps down Path is left unchecked (0: no bound).
	MaxDepth int
	// Keywords, when set, are the only keywords checked (a tool's
	// arguments are held to a common core, since servers write the rest
	// loosely); nil checks every one the package knows.
	Keywords []string
}

// The keywords Check knows, each a bit of a checker's mask.
const (
	kwRef uint32 = 1 << iota
	kwType
	kwConst
	kwEnum
	kwMinimum
	kwMaximum
	kwMinLength
	kwMaxLength
	kwPattern
	kwMinItems
	kwMaxItems
	kwItems
	kwRequired
	kwProperties
	kwAdditionalProperties
	kwAnyOf
	kwOneOf
)

// keywords names the bits.
var keywords = map[string]uint32{
	"$ref":                 kwRef,
	"type":                 kwType,
	"const":                kwConst,
	"enum":                 kwEnum,
	"minimum":              kwMinimum,
	"maximum":              kwMaximum,
	"minLength":            kwMinLength,
	"maxLength":            kwMaxLength,
	"pattern":              kwPattern,
	"minItems":             kwMinItems,
	"maxItems":             kwMaxItems,
	"items":                kwItems,
	"required":             kwRequired,
	"properties":           kwProperties,
	"additionalProperties": kwAdditionalProperties,
	"anyOf":                kwAnyOf,
	"oneOf":                kwOneOf,
}

// lookup reads keyword k of sch as a T, when c checks it (bit).
func lookup[T any](c *checker, sch map[string]any, bit uint32, k string) (T, bool) {
	var zero T
	if !c.has(bit) {
		return zero, false
	}
	raw, present := sch[k]
	if !present {
		return zero, false
	}
	if v, ok := raw.(T); ok {
		return v, true
	}
	_, anyT := any(&zero).(*any)
	return zero, anyT // a null value, for T any
}

// bound reads the number keyword k of sch, when c checks it (bit).
func bound(c *checker, sch map[string]any, bit uint32, k string) (float64, bool) {
	if !c.has(bit) {
		return 0, false
	}
	return Number(sch[k])
}

// checker is one Check: the options, the keywords checked as a mask, and
// the path to the value being checked, as a stack.
type checker struct {
	s    *Schema
	o    Options
	mask uint32
	path []step
	buf  [8]step // path's first steps
}

// step is one step of a path: a property name, or an item index when
// name is empty and item >= 0.
type step struct {
	name string
	item int
}

func (c *checker) has(k uint32) bool { return c.mask&k != 0 }

func (c *checker) push(name string, item int) { c.path = append(c.path, step{name, item}) }
func (c *checker) pop()                       { c.path = c.path[:len(c.path)-1] }

// at returns the path as a Violation holds it.
func (c *checker) at() []any {
	out := make([]any, len(c.path))
	for i, st := range c.path {
		if st.name == "" && st.item >= 0 {
			out[i] = st.item
		} else {
			out[i] = st.name
		}
	}
	return out
}

// Check checks v (decoded JSON: maps, slices, strings, bools, nil, and
// numbers as json.Number, float64 or int) against s and returns the first
// place it breaks, or nil.
func (s *Schema) Check(v any, o Options) *Violation {
	c := &checker{s: s, o: o, mask: ^uint32(0)}
	c.path = c.buf[:0]
	if o.Keywords != nil {
		c.mask = 0
		for _, k := range o.Keywords {
			c.mask |= keywords[k]
		}
	}
	return c.check(s.root, v)
}

// CheckValue is Check against a schema not compiled first: a $ref in it
// must name a definition of its own root.
func CheckValue(root map[string]any, v any, o Options) *Violation {
	s := Schema{root: root}
	return s.Check(v, o)
}

func (s *Schema) pattern(p string) *regexp.Regexp {
	if re, ok := s.patterns[p]; ok {
		return re
	}
	if s.patterns == nil {
		s.patterns = map[string]*regexp.Regexp{}
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil // an invalid pattern is not checked
	}
	s.patterns[p] = re
	return re
}

func (c *checker) check(sch map[string]any, x any) *Violation {
	s, o := c.s, &c.o
	if o.MaxDepth > 0 && len(c.path) > o.MaxDepth {
		return nil
	}
	fail := func(k Kind) *Violation { return &Violation{Kind: k, Path: c.at(), Schema: sch, Value: x} }
	if ref, ok := lookup[string](c, sch, kwRef, "$ref"); ok {
		def, err := s.resolve(ref)
		if err != nil {
			v := fail(BadRef)
			v.Err = err
			return v
		}
		if v := c.check(def, x); v != nil {
			return v
		}
	}
	if t, ok := lookup[any](c, sch, kwType, "type"); ok && !HasType(x, t) {
		return fail(Type)
	}
	if k, ok := lookup[any](c, sch, kwConst, "const"); ok && !Equal(k, x) {
		return fail(Const)
	}
	if e, _ := lookup[any](c, sch, kwEnum, "enum"); e != nil && enumOf(e) != nil {
		e := enumOf(e)
		found := false
		for _, k := range e {
			found = found || Equal(k, x)
		}
		if !found {
			return fail(Enum)
		}
	}
	if n, ok := Number(x); ok {
		if m, ok := bound(c, sch, kwMinimum, "minimum"); ok && n < m {
			return fail(Minimum)
		}
		if m, ok := bound(c, sch, kwMaximum, "maximum"); ok && n > m {
			return fail(Maximum)
		}
	}
	switch x := x.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if m, ok := bound(c, sch, kwMinLength, "minLength"); ok && float64(n) < m {
			return fail(MinLength)
		}
		if m, ok := bound(c, sch, kwMaxLength, "maxLength"); ok && float64(n) > m {
			return fail(MaxLength)
		}
		if p, ok := lookup[string](c, sch, kwPattern, "pattern"); ok {
			if re := s.pattern(p); re != nil && !re.MatchString(x) {
				return fail(Pattern)
			}
		}
	case []any:
		if m, ok := bound(c, sch, kwMinItems, "minItems"); ok && float64(len(x)) < m {
			return fail(MinItems)
		}
		if m, ok := bound(c, sch, kwMaxItems, "maxItems"); ok && float64(len(x)) > m {
			return fail(MaxItems)
		}
		if items, ok := lookup[map[string]any](c, sch, kwItems, "items"); ok {
			for i, y := range x {
				c.push("", i)
				v := c.check(items, y)
				c.pop()
				if v != nil {
					return v
				}
			}
		}
	case map[string]any:
		if v := c.object(sch, x); v != nil {
			return v
		}
	}
	if alts, ok := lookup[[]any](c, sch, kwAnyOf, "anyOf"); ok {
		if v := c.some(alts, x, false); v != nil {
			return v
		}
	}
	if alts, ok := lookup[[]any](c, sch, kwOneOf, "oneOf"); ok {
		if v := c.some(alts, x, true); v != nil {
			return v
		}
	}
	return nil
}

// object checks the object x at path: its required properties first,
// then each property by name, an unlisted one against
// additionalProperties.
func (c *checker) object(sch map[string]any, x map[string]any) *Violation {
	o := &c.o
	props, _ := sch["properties"].(map[string]any)
	for _, k := range names(sch["required"]) {
		if !c.has(kwRequired) {
			break
		}
		if val, found := x[k]; !found || o.NullAbsent && val == nil {
			ps, _ := props[k].(map[string]any)
			return &Violation{Kind: Required, Path: c.at(), Schema: ps, Value: x, Name: k}
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if o.NullAbsent && x[k] == nil {
			continue
		}
		if p, ok := props[k].(map[string]any); ok {
			if !c.has(kwProperties) {
				continue
			}
			c.push(k, -1)
			v := c.check(p, x[k])
			c.pop()
			if v != nil {
				return v
			}
			continue
		}
		if !c.has(kwAdditionalProperties) {
			continue
		}
		switch extra := sch["additionalProperties"].(type) {
		case bool:
			if !extra && (o.Closed == nil || o.Closed(c.at())) {
				c.push(k, -1)
				v := &Violation{Kind: Extra, Path: c.at(), Schema: sch, Value: x, Name: k}
				c.pop()
				return v
			}
		case map[string]any:
			c.push(k, -1)
			v := c.check(extra, x[k])
			c.pop()
			if v != nil {
				return v
			}
		}
	}
	return nil
}

// some checks x against the alternatives of an anyOf (or, when one is
// set, a oneOf: exactly one must match). When none matches, the
// violation is that of the alternative x says it is (its const fields
// match, as a role or a type does), else of the one that got furthest.
func (c *checker) some(alts []any, x any, one bool) *Violation {
	var best *Violation
	bestMeant := false
	n := 0
	for _, b := range alts {
		alt, _ := b.(map[string]any)
		v := c.check(alt, x)
		if v == nil {
			n++
			if !one {
				return nil
			}
			continue
		}
		meant := c.s.meant(alt, x)
		if best == nil || meant && !bestMeant || meant == bestMeant && len(v.Path) > len(best.Path) {
			best, bestMeant = v, meant
		}
	}
	switch {
	case n == 0:
		return best
	case n > 1:
		return &Violation{Kind: OneOf, Path: c.at(), Value: x, Matches: n}
	}
	return nil
}

// meant reports whether x is an object whose fields match every const
// field alt declares (the discriminator of a oneOf), and alt declares one.
func (s *Schema) meant(alt map[string]any, x any) bool {
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
		ps, _ := p.(map[string]any)
		c, ok := ps["const"]
		if !ok {
			continue
		}
		if !Equal(c, obj[k]) {
			return false
		}
		found = true
	}
	return found
}

// Types reads a type keyword: one name or a list of names.
func Types(v any) []string {
	if t, ok := v.(string); ok {
		return []string{t}
	}
	return names(v)
}

// names reads a list of strings ([]any or []string).
func names(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// enumOf reads an enum: []any, or []string in a schema built in Go.
func enumOf(v any) []any {
	switch l := v.(type) {
	case []any:
		if len(l) > 0 {
			return l
		}
	case []string:
		if len(l) > 0 {
			out := make([]any, len(l))
			for i, s := range l {
				out[i] = s
			}
			return out
		}
	}
	return nil
}

// TypeOf names the JSON type of x: "integer" for a whole number.
func TypeOf(x any) string {
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
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case int, int64:
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

// HasType reports whether x is of the type keyword want (a name or a
// list): a whole number is a number too; an unknown name takes anything.
func HasType(x any, want any) bool {
	got := TypeOf(x)
	if t, ok := want.(string); ok {
		return typeIs(got, t)
	}
	for _, t := range names(want) {
		if typeIs(got, t) {
			return true
		}
	}
	return false
}

// typeIs reports whether a value whose TypeOf is got is of type t.
func typeIs(got, t string) bool {
	switch t {
	case got:
		return true
	case "number":
		return got == "integer"
	case "null", "boolean", "string", "integer", "array", "object":
		return false
	}
	return true // a name JSON Schema does not have: not checked
}

// Number reads a number of a schema or a document.
func Number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// Equal compares two JSON values: numbers by value, the rest by their
// JSON encoding.
func Equal(a, b any) bool {
	fa, aNum := Number(a)
	fb, bNum := Number(b)
	if aNum || bNum {
		return aNum && bNum && fa == fb
	}
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case nil:
		return b == nil
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
