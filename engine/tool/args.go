package tool

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Args reads the arguments of one tool call, as decoded from JSON. Each
// read returns the argument's value, or its zero value or default when it is
// absent or null; a read that finds the wrong type or a missing required
// argument returns the zero value and records an error that names the
// argument and says what it should be. Only the first error is kept: check
// Err once after the reads.
type Args struct {
	args  map[string]any
	first error
}

// ReadArgs returns a reader of args.
func ReadArgs(args map[string]any) *Args {
	return &Args{args: args}
}

// Err returns the first error a read recorded, or nil.
func (a *Args) Err() error {
	return a.first
}

func (a *Args) failf(format string, v ...any) {
	if a.first == nil {
		a.first = fmt.Errorf(format, v...)
	}
}

// Str reads a string; a required one must be present and not empty.
func (a *Args) Str(name string, required bool) string {
	v := a.args[name]
	if v == nil {
		if required {
			a.failf("argument %q is missing: give it as a string", name)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.failf("argument %q is a %T: give it as a string", name, v)
		return ""
	}
	if required && s == "" {
		a.failf("argument %q is empty", name)
	}
	return s
}

// Int reads a whole number, def when it is absent.
func (a *Args) Int(name string, def int) int {
	v := a.args[name]
	if v == nil {
		return def
	}
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<52 {
			a.failf("argument %q is %v: give a whole number", name, n)
			return 0
		}
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	}
	a.failf("argument %q is a %T: give a whole number", name, v)
	return 0
}

// Bool reads true or false, false when it is absent.
func (a *Args) Bool(name string) bool {
	v := a.args[name]
	if v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		a.failf("argument %q is a %T: give true or false", name, v)
	}
	return b
}

// Strings reads a list of strings, nil when it is absent.
func (a *Args) Strings(name string) []string {
	v := a.args[name]
	if v == nil {
		return nil
	}
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				a.failf("argument %q item %d is a %T: give a list of strings", name, i, e)
				return nil
			}
			out[i] = s
		}
		return out
	}
	a.failf("argument %q is a %T: give a list of strings", name, v)
	return nil
}

// checkArgNames refuses arguments a call cannot succeed with, before
// anybody is asked to approve it: names a native tool's schema does not
// declare, when the schema closes its object (additionalProperties: false),
// with an error naming them and listing the accepted ones (a schema that
// leaves additionalProperties out or true accepts any name, as JSON Schema
// says; bridged tools are left to their server there); then, for every
// tool, missing required arguments and values of the wrong type or
// outside an enum (checkSchema); last, the tool's own Check.
func checkArgNames(t Tool, args map[string]any) error {
	if err := unknownArgNames(t, args); err != nil {
		return err
	}
	if err := checkSchema(t, args); err != nil {
		return err
	}
	if t.Check != nil {
		return t.Check(args)
	}
	return nil
}

// unknownArgNames refuses argument names a native tool's closed schema
// (additionalProperties false) does not list.
func unknownArgNames(t Tool, args map[string]any) error {
	if t.Origin != "" || t.Parameters == nil {
		return nil
	}
	unknown, props := unlisted(t.Parameters, args)
	if len(unknown) == 0 {
		return nil
	}
	if len(props) == 0 {
		return fmt.Errorf("%s takes no arguments, but was given %s: call it with {}", t.Name, strings.Join(unknown, ", "))
	}
	required := nameList(t.Parameters["required"])
	accepted := make([]string, 0, len(props))
	for k := range props {
		if slices.Contains(required, k) {
			k += " (required)"
		}
		accepted = append(accepted, k)
	}
	sort.Strings(accepted)
	return fmt.Errorf("%s does not take %s: its arguments are %s", t.Name, strings.Join(unknown, ", "), strings.Join(accepted, ", "))
}

// nameList reads a list of names (a schema's required list, say), as Go
// or decoded JSON; entries that are not strings are skipped.
func nameList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		var out []string
		for _, e := range l {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
