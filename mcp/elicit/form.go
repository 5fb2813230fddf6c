package elicit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"tai/mcp/screen"
	"tai/vault/secret"
)

// Limits on what a form may hold; a schema beyond them is Unshowable.
const (
	// MaxFields bounds the fields of one form.
	MaxFields = 64
	// MaxOptions bounds the choices of one enum.
	MaxOptions = 256
	// MaxSchemaBytes bounds the requestedSchema read.
	MaxSchemaBytes = 256 << 10
)

// Kind is what a field holds.
type Kind string

// The kinds of field a form may hold.
const (
	String  Kind = "string"
	Number  Kind = "number"
	Integer Kind = "integer"
	Boolean Kind = "boolean"
	// Enum is one choice among Options.
	Enum Kind = "enum"
	// Multi is any number of choices among Options (MinItems to MaxItems).
	Multi Kind = "multi"
)

// The string formats a form may name, each checked.
const (
	FormatEmail    = "email"
	FormatURI      = "uri"
	FormatDate     = "date"
	FormatDateTime = "date-time"
)

// Option is one choice of an enum: the value sent, and the title shown
// (the value itself when the schema gives none).
type Option struct {
	Value string
	Title string
}

// Field is one question of a form.
type Field struct {
	// Name is the property's name, the key of its value in the content.
	Name string
	// Title and Description are the schema's, as sent (show them with
	// mcp/screen).
	Title       string
	Description string
	Kind        Kind
	// Format is one of the Format… names for a String, else empty.
	Format string
	// Pattern is a String's pattern; Check applies it when Go's regexp
	// reads it.
	Pattern string
	// MinLength and MaxLength bound a String (-1: no bound).
	MinLength, MaxLength int
	// Minimum and Maximum bound a Number or Integer (±Inf: no bound).
	Minimum, Maximum float64
	// MinItems and MaxItems bound a Multi's choices (-1: no bound).
	MinItems, MaxItems int
	// Options are an Enum's or a Multi's choices, in order.
	Options []Option
	// Default is the value the schema gives when nothing is typed
	// (SEP-1034), already checked; nil when there is none.
	Default any
	// Required says the form is not complete without it.
	Required bool
	// Secret says the name reads as a credential's: servers must not ask
	// for secrets in a form.
	Secret bool

	pattern *regexp.Regexp
}

// Form is what a requestedSchema asks: its fields in the schema's order.
type Form struct {
	Fields []Field
}

// Unshowable is the error for a schema tai cannot show as questions.
type Unshowable struct{ Reason string }

func (e *Unshowable) Error() string {
	return "this server asked for a form tai cannot show: " + e.Reason
}

func unshowable(format string, args ...any) error {
	return &Unshowable{Reason: screen.VisibleLine(fmt.Sprintf(format, args...))}
}

// property is one property of a requestedSchema as sent.
type property struct {
	Type        json.RawMessage `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Pattern     string          `json:"pattern"`
	MinLength   *float64        `json:"minLength"`
	MaxLength   *float64        `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *float64        `json:"minItems"`
	MaxItems    *float64        `json:"maxItems"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []choice        `json:"oneOf"`
	AnyOf       []choice        `json:"anyOf"`
	Items       *property       `json:"items"`
	Default     json.RawMessage `json:"default"`
}

// choice is a titled enum member: {"const": …, "title": …}.
type choice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// ParseForm reads a requestedSchema into the form it describes. Anything
// outside the spec's flat subset (a nested object, an array of anything
// but enum choices, an unknown type or format, bounds that cannot be met,
// a default the field refuses, more than MaxFields fields) gives an
// *Unshowable naming it, never a panic.
func ParseForm(schema json.RawMessage) (*Form, error) {
	if len(schema) > MaxSchemaBytes {
		return nil, unshowable("its schema is %d bytes, more than %d", len(schema), MaxSchemaBytes)
	}
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, unshowable("its schema is not a JSON Schema object (%v)", err)
	}
	if top.Type != "object" {
		return nil, unshowable("its schema's type is %q, not \"object\"", top.Type)
	}
	names, props, err := orderedProperties(top.Properties)
	if err != nil {
		return nil, err
	}
	if len(names) > MaxFields {
		return nil, unshowable("it has %d fields, more than %d", len(names), MaxFields)
	}
	for _, r := range top.Required {
		if _, ok := props[r]; !ok {
			return nil, unshowable("it requires %q, a field it does not describe", r)
		}
	}
	f := &Form{Fields: make([]Field, 0, len(names))}
	for _, name := range names {
		field, err := parseField(name, props[name], slices.Contains(top.Required, name))
		if err != nil {
			return nil, err
		}
		f.Fields = append(f.Fields, field)
	}
	return f, nil
}

// orderedProperties decodes the properties object keeping the order the
// server wrote them in, which is the order a person is asked.
func orderedProperties(raw json.RawMessage) ([]string, map[string]property, error) {
	props := map[string]property{}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, props, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, unshowable("its properties are not an object")
	}
	var names []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, unshowable("its properties do not parse (%v)", err)
		}
		name, _ := t.(string)
		var p property
		if err := dec.Decode(&p); err != nil {
			return nil, nil, unshowable("field %q is not a schema tai reads (%v)", name, err)
		}
		if _, dup := props[name]; dup {
			return nil, nil, unshowable("field %q is described twice", name)
		}
		if len(names) >= MaxFields {
			return nil, nil, unshowable("it has more than %d fields", MaxFields)
		}
		props[name] = p
		names = append(names, name)
	}
	return names, props, nil
}

// parseField reads one property.
func parseField(name string, p property, required bool) (Field, error) {
	if name == "" {
		return Field{}, unshowable("a field has no name")
	}
	f := Field{Name: name, Title: p.Title, Description: p.Description, Required: required,
		Secret: secret.CredentialName(name), MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1,
		Minimum: math.Inf(-1), Maximum: math.Inf(1)}
	var typ string
	if len(p.Type) > 0 {
		if err := json.Unmarshal(p.Type, &typ); err != nil {
			return Field{}, unshowable("field %q has a type that is not one name", name)
		}
	}
	var err error
	switch {
	case typ == "string" && (len(p.Enum) > 0 || len(p.OneOf) > 0):
		f.Kind = Enum
		f.Options, err = options(name, p.Enum, p.EnumNames, p.OneOf)
	case typ == "array":
		f.Kind = Multi
		if p.Items == nil {
			return Field{}, unshowable("field %q is a list with no choices", name)
		}
		f.Options, err = options(name, p.Items.Enum, p.Items.EnumNames, append(p.Items.AnyOf, p.Items.OneOf...))
		if err == nil {
			f.MinItems, f.MaxItems, err = bounds(name, "items", p.MinItems, p.MaxItems)
		}
		if err == nil && f.MinItems > len(f.Options) {
			err = unshowable("field %q needs %d choices of %d", name, f.MinItems, len(f.Options))
		}
	case typ == "string":
		f.Kind = String
		switch p.Format {
		case "", FormatEmail, FormatURI, FormatDate, FormatDateTime:
			f.Format = p.Format
		case "password":
			return Field{}, unshowable("field %q has the format \"password\": servers must not ask for secrets in a form (MCP), so tai declines it", name)
		default:
			return Field{}, unshowable("field %q has the format %q, which tai does not know", name, p.Format)
		}
		f.MinLength, f.MaxLength, err = bounds(name, "length", p.MinLength, p.MaxLength)
		f.Pattern = p.Pattern
		if p.Pattern != "" {
			f.pattern, _ = regexp.Compile(p.Pattern) // one Go cannot read is shown, not checked
		}
	case typ == "number", typ == "integer":
		f.Kind = Kind(typ)
		if p.Minimum != nil {
			f.Minimum = *p.Minimum
		}
		if p.Maximum != nil {
			f.Maximum = *p.Maximum
		}
		if f.Minimum > f.Maximum || math.IsNaN(f.Minimum) || math.IsNaN(f.Maximum) {
			err = unshowable("field %q wants a number from %v to %v, which none is", name, f.Minimum, f.Maximum)
		}
		if err == nil && f.Kind == Integer && math.Floor(f.Maximum) < math.Ceil(f.Minimum) {
			err = unshowable("field %q wants a whole number from %v to %v, which none is", name, f.Minimum, f.Maximum)
		}
	case typ == "boolean":
		f.Kind = Boolean
	case typ == "":
		return Field{}, unshowable("field %q has no type", name)
	default:
		return Field{}, unshowable("field %q is of type %q; a form holds only strings, numbers, booleans and choices", name, typ)
	}
	if err != nil {
		return Field{}, err
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		var d any
		if err := json.Unmarshal(p.Default, &d); err != nil {
			return Field{}, unshowable("field %q has a default that does not parse", name)
		}
		v, err := f.Check(d)
		if err != nil {
			return Field{}, unshowable("field %q has a default it refuses itself: %v", name, err)
		}
		f.Default = v
	}
	return f, nil
}

// options reads an enum's choices: plain values (with the legacy
// enumNames as titles) or titled const members.
func options(name string, enum []any, names []string, titled []choice) ([]Option, error) {
	var out []Option
	add := func(v any, title string) error {
		s, ok := v.(string)
		if !ok {
			return unshowable("field %q has a choice that is not a string", name)
		}
		if slices.ContainsFunc(out, func(o Option) bool { return o.Value == s }) {
			return unshowable("field %q offers %q twice", name, s)
		}
		out = append(out, Option{Value: s, Title: cmpOr(title, s)})
		return nil
	}
	if len(enum)+len(titled) > MaxOptions {
		return nil, unshowable("field %q offers %d choices, more than %d", name, len(enum)+len(titled), MaxOptions)
	}
	for i, v := range enum {
		title := ""
		if i < len(names) {
			title = names[i]
		}
		if err := add(v, title); err != nil {
			return nil, err
		}
	}
	for _, c := range titled {
		if err := add(c.Const, c.Title); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, unshowable("field %q offers no choices", name)
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// bounds reads a pair of whole-number bounds (-1: none).
func bounds(name, what string, lo, hi *float64) (int, int, error) {
	get := func(p *float64) (int, error) {
		if p == nil {
			return -1, nil
		}
		if *p < 0 || *p != math.Trunc(*p) || *p > math.MaxInt32 {
			return 0, unshowable("field %q has a %s bound of %v, not a whole number", name, what, *p)
		}
		return int(*p), nil
	}
	min, err := get(lo)
	if err != nil {
		return 0, 0, err
	}
	max, err := get(hi)
	if err != nil {
		return 0, 0, err
	}
	if max >= 0 && min > max {
		return 0, 0, unshowable("field %q wants a %s from %d to %d, which none is", name, what, min, max)
	}
	return min, max, nil
}

// Label is the field's name as a question shows it: its title, else its name.
func (f *Field) Label() string { return cmpOr(f.Title, f.Name) }

// Parse turns what a person typed for f into its value, checked. Empty
// text gives the default (nil when there is none and the field is not
// required; an error when it is). A Boolean reads y, yes, true, n, no,
// false; an Enum its choice's number, value or title; a Multi a list of
// those separated by commas.
func (f *Field) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		if f.Default != nil {
			return f.Default, nil
		}
		if f.Required {
			return nil, fmt.Errorf("%s is required", f.Label())
		}
		return nil, nil
	}
	switch f.Kind {
	case Number, Integer:
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%s wants a number, not %q", f.Label(), text)
		}
		return f.Check(n)
	case Boolean:
		switch strings.ToLower(text) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%s wants yes or no, not %q", f.Label(), text)
	case Enum:
		o, err := f.choose(text)
		if err != nil {
			return nil, err
		}
		return o, nil
	case Multi:
		var picked []any
		for _, part := range strings.Split(text, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			o, err := f.choose(part)
			if err != nil {
				return nil, err
			}
			picked = append(picked, o)
		}
		return f.Check(picked)
	}
	return f.Check(text)
}

// choose finds the option text names: its number (from 1), its value or
// its title.
func (f *Field) choose(text string) (string, error) {
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, nil
	}
	for _, o := range f.Options {
		if o.Value == text || strings.EqualFold(o.Title, text) {
			return o.Value, nil
		}
	}
	return "", fmt.Errorf("%s has no choice %q: answer with its number or its name", f.Label(), screen.VisibleLine(text))
}

// Check checks a value for f as a script or a default gives it (JSON's
// types: string, float64 or another number, bool, a list of strings) and
// returns it as it goes back (an Integer as int64).
func (f *Field) Check(v any) (any, error) {
	switch f.Kind {
	case String:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s wants text, not %s", f.Label(), typeName(v))
		}
		return s, f.checkString(s)
	case Number, Integer:
		n, ok := number(v)
		if !ok {
			return nil, fmt.Errorf("%s wants a number, not %s", f.Label(), typeName(v))
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("%s wants a finite number", f.Label())
		}
		if n < f.Minimum || n > f.Maximum {
			return nil, fmt.Errorf("%s wants a number from %v to %v, not %v", f.Label(), f.Minimum, f.Maximum, n)
		}
		if f.Kind == Integer {
			if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
				return nil, fmt.Errorf("%s wants a whole number, not %v", f.Label(), n)
			}
			return int64(n), nil
		}
		return n, nil
	case Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s wants true or false, not %s", f.Label(), typeName(v))
		}
		return b, nil
	case Enum:
		s, ok := v.(string)
		if !ok || !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
			return nil, fmt.Errorf("%s wants one of its choices, not %s", f.Label(), shown(v))
		}
		return s, nil
	case Multi:
		list, ok := v.([]any)
		if ss, isStrings := v.([]string); isStrings {
			list, ok = make([]any, len(ss)), true
			for i, s := range ss {
				list[i] = s
			}
		}
		if !ok {
			return nil, fmt.Errorf("%s wants a list of its choices, not %s", f.Label(), typeName(v))
		}
		out := make([]string, 0, len(list))
		for _, item := range list {
			s, ok := item.(string)
			if !ok || !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
				return nil, fmt.Errorf("%s wants its choices, not %s", f.Label(), shown(item))
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if f.MinItems >= 0 && len(out) < f.MinItems || f.MaxItems >= 0 && len(out) > f.MaxItems {
			return nil, fmt.Errorf("%s wants %s choices, not %d", f.Label(), rangeText(f.MinItems, f.MaxItems), len(out))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is of no kind tai knows", f.Label())
}

// checkString applies a String's length, pattern and format.
func (f *Field) checkString(s string) error {
	n := len([]rune(s))
	if f.MinLength >= 0 && n < f.MinLength || f.MaxLength >= 0 && n > f.MaxLength {
		return fmt.Errorf("%s wants %s characters, not %d", f.Label(), rangeText(f.MinLength, f.MaxLength), n)
	}
	if f.pattern != nil && !f.pattern.MatchString(s) {
		return fmt.Errorf("%s must match %s", f.Label(), screen.VisibleLine(f.Pattern))
	}
	switch f.Format {
	case FormatEmail:
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("%s wants an email address such as ada@example.com", f.Label())
		}
	case FormatURI:
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Errorf("%s wants a URI with its scheme, such as https://example.com", f.Label())
		}
	case FormatDate:
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("%s wants a date as 2025-11-25", f.Label())
		}
	case FormatDateTime:
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("%s wants a date and time as 2025-11-25T14:30:00Z", f.Label())
		}
	}
	return nil
}

// Hint says what f takes, for the question's prompt: "email", "1-10",
// "y/n", "1-3, comma-separated".
func (f *Field) Hint() string {
	var parts []string
	switch f.Kind {
	case String:
		if f.Format != "" {
			parts = append(parts, f.Format)
		}
		if f.MinLength >= 0 || f.MaxLength >= 0 {
			parts = append(parts, rangeText(f.MinLength, f.MaxLength)+" characters")
		}
	case Number, Integer:
		what := "number"
		if f.Kind == Integer {
			what = "whole number"
		}
		switch {
		case !math.IsInf(f.Minimum, 0) && !math.IsInf(f.Maximum, 0):
			what += fmt.Sprintf(" %v to %v", f.Minimum, f.Maximum)
		case !math.IsInf(f.Minimum, 0):
			what += fmt.Sprintf(" ≥ %v", f.Minimum)
		case !math.IsInf(f.Maximum, 0):
			what += fmt.Sprintf(" ≤ %v", f.Maximum)
		}
		parts = append(parts, what)
	case Boolean:
		parts = append(parts, "y/n")
	case Enum:
		parts = append(parts, fmt.Sprintf("1-%d", len(f.Options)))
	case Multi:
		what := fmt.Sprintf("1-%d, comma-separated", len(f.Options))
		if f.MinItems >= 0 || f.MaxItems >= 0 {
			what += ", " + rangeText(f.MinItems, f.MaxItems) + " of them"
		}
		parts = append(parts, what)
	}
	if f.Required && f.Default == nil {
		parts = append(parts, "required")
	}
	return strings.Join(parts, ", ")
}

// DefaultText is the default as a person would type it, "" when none.
func (f *Field) DefaultText() string {
	switch d := f.Default.(type) {
	case nil:
		return ""
	case bool:
		if d {
			return "yes"
		}
		return "no"
	case []string:
		return strings.Join(d, ", ")
	case string:
		return d
	}
	return fmt.Sprint(f.Default)
}

// Content checks the values a script or a person gave (by field name)
// and returns the content to send: every given value checked, every
// missing one given its default (SEP-1034), a missing required one
// without a default an error, as is a name the form does not ask for.
func (f *Form) Content(values map[string]any) (map[string]any, error) {
	for name := range values {
		if !slices.ContainsFunc(f.Fields, func(fl Field) bool { return fl.Name == name }) {
			return nil, fmt.Errorf("the form asks for no field %q", screen.VisibleLine(name))
		}
	}
	out := make(map[string]any, len(f.Fields))
	for i := range f.Fields {
		fl := &f.Fields[i]
		v, given := values[fl.Name]
		switch {
		case given && v != nil:
			checked, err := fl.Check(v)
			if err != nil {
				return nil, err
			}
			out[fl.Name] = checked
		case fl.Default != nil:
			out[fl.Name] = fl.Default
		case fl.Required:
			return nil, fmt.Errorf("%s is required", fl.Label())
		}
	}
	return out, nil
}

// number reads any of the numeric types a JSON or Lua value may hold.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
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

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "text"
	case bool:
		return "true or false"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if _, ok := number(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func shown(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(screen.VisibleLine(s))
	}
	return typeName(v)
}

// rangeText says a pair of bounds (-1: none) in words: "3 to 50", "at
// least 1", "at most 2".
func rangeText(lo, hi int) string {
	switch {
	case lo >= 0 && hi >= 0 && lo == hi:
		return strconv.Itoa(lo)
	case lo >= 0 && hi >= 0:
		return fmt.Sprintf("%d to %d", lo, hi)
	case lo >= 0:
		return fmt.Sprintf("at least %d", lo)
	}
	return fmt.Sprintf("at most %d", hi)
}
