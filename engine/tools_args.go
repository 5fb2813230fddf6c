package engine

import (
	"fmt"
	"math"
	"path/filepath"
)

// Helpers that read tool arguments decoded from JSON, with errors that name
// the argument and say what it should be.

func argString(args map[string]any, name string, required bool) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("argument %q is missing: give it as a string", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q is a %T: give it as a string", name, v)
	}
	if required && s == "" {
		return "", fmt.Errorf("argument %q is empty", name)
	}
	return s, nil
}

func argInt(args map[string]any, name string, def int) (int, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<52 {
			return 0, fmt.Errorf("argument %q is %v: give a whole number", name, n)
		}
		return int(n), nil
	case int:
		return n, nil
	case int64:
		return int(n), nil
	}
	return 0, fmt.Errorf("argument %q is a %T: give a whole number", name, v)
}

func argBool(args map[string]any, name string) (bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("argument %q is a %T: give true or false", name, v)
	}
	return b, nil
}

func argStrings(args map[string]any, name string) ([]string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("argument %q item %d is a %T: give a list of strings", name, i, e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("argument %q is a %T: give a list of strings", name, v)
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
