package engine

import (
	"fmt"
	"math"
	"path/filepath"
)

// argReader reads the arguments of one tool call, as decoded from JSON. Each
// read returns the argument's value, or its zero value or default when it is
// absent or null; a read that finds the wrong type or a missing required
// argument returns the zero value and records an error that names the
// argument and says what it should be. Only the first error is kept: check
// err once after the reads.
type argReader struct {
	args  map[string]any
	first error
}

func readArgs(args map[string]any) *argReader {
	return &argReader{args: args}
}

// err returns the first error a read recorded, or nil.
func (a *argReader) err() error {
	return a.first
}

func (a *argReader) failf(format string, v ...any) {
	if a.first == nil {
		a.first = fmt.Errorf(format, v...)
	}
}

// str reads a string; a required one must be present and not empty.
func (a *argReader) str(name string, required bool) string {
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

// int reads a whole number, def when it is absent.
func (a *argReader) int(name string, def int) int {
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

// bool reads true or false, false when it is absent.
func (a *argReader) bool(name string) bool {
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

// strings reads a list of strings, nil when it is absent.
func (a *argReader) strings(name string) []string {
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

// resolvePath makes p absolute against dir.
func resolvePath(dir, p string) string {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// schema builds a JSON Schema object from property definitions.
func schema(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}
