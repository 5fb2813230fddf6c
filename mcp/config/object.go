package config

import "slices"

// Object is a parsed JSON or TOML object that keeps its keys in the order
// the text gave them, so entries come out in paste order.
type Object struct {
	// Keys are the member names in source order, each once.
	Keys []string
	// Values maps each key to its value: *Object, []any, string, float64,
	// int64, bool or nil.
	Values map[string]any
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{Values: map[string]any{}} }

// Get returns the value of key and whether the object has it.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.Values[key]
	return v, ok
}

// Set sets key to v, appending key to Keys when it is new.
func (o *Object) Set(key string, v any) {
	if _, ok := o.Values[key]; !ok {
		o.Keys = append(o.Keys, key)
	}
	o.Values[key] = v
}

// fromMap builds an Object tree from a decoded map, keys in sorted order
// unless order (a map from a dotted path to the keys seen there, in source
// order) says otherwise.
func fromMap(m map[string]any, path string, order map[string][]string) *Object {
	o := &Object{Values: make(map[string]any, len(m))}
	seen := map[string]bool{}
	for _, k := range order[path] {
		if _, ok := m[k]; ok && !seen[k] {
			o.Keys = append(o.Keys, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	o.Keys = append(o.Keys, rest...)
	for _, k := range o.Keys {
		o.Values[k] = fromAny(m[k], path+"\x00"+k, order)
	}
	return o
}

func fromAny(v any, path string, order map[string][]string) any {
	switch x := v.(type) {
	case map[string]any:
		return fromMap(x, path, order)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromAny(e, path+"\x00[]", order)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromMap(e, path+"\x00[]", order)
		}
		return out
	case int64, float64, string, bool, nil:
		return x
	case int:
		return int64(x)
	case interface{ String() string }: // TOML dates and times
		return x.String()
	}
	return v
}

// values returns the values of an object, parsed (*Object) or not.
func values(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case *Object:
		return x.Values, true
	case map[string]any:
		return x, true
	}
	return nil, false
}
