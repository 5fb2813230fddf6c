package llmtest

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"tai/engine/llm/jsonschema"
)

// The request schemas of the two APIs, trimmed from their published
// references (see each file's $comment).
//
//go:embed testdata/*.schema.json
var schemaFiles embed.FS

// A schema is a request schema of a model API, checked by jsonschema;
// its violations are worded as the APIs word theirs.
type schema struct{ s *jsonschema.Schema }

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
	s, err := jsonschema.Compile(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &schema{s}, nil
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
	v := s.s.Check(doc, jsonschema.Options{})
	if v == nil {
		return nil
	}
	var path []string
	for _, p := range v.Path {
		path = append(path, fmt.Sprint(p))
	}
	msg := violationText(v)
	if len(path) == 0 {
		return errors.New(msg)
	}
	return errors.New(strings.Join(path, ".") + ": " + msg)
}

// violationText words v as the APIs' validation errors do.
func violationText(v *jsonschema.Violation) string {
	sch, x := v.Schema, v.Value
	switch v.Kind {
	case jsonschema.Type:
		return fmt.Sprintf("expected %v, got %s", sch["type"], jsonschema.TypeOf(x))
	case jsonschema.Const:
		return fmt.Sprintf("expected %v, got %s", sch["const"], short(x))
	case jsonschema.Enum:
		return fmt.Sprintf("expected one of %v, got %s", sch["enum"], short(x))
	case jsonschema.MinLength:
		return fmt.Sprintf("string shorter than %v characters", sch["minLength"])
	case jsonschema.MaxLength:
		return fmt.Sprintf("string longer than %v characters", sch["maxLength"])
	case jsonschema.Pattern:
		return fmt.Sprintf("string %s does not match %s", short(x), sch["pattern"])
	case jsonschema.Minimum:
		return fmt.Sprintf("%v is less than the minimum %v", x, sch["minimum"])
	case jsonschema.Maximum:
		return fmt.Sprintf("%v is greater than the maximum %v", x, sch["maximum"])
	case jsonschema.MinItems:
		return fmt.Sprintf("array of %d items, fewer than %v", len(x.([]any)), sch["minItems"])
	case jsonschema.MaxItems:
		return fmt.Sprintf("array of %d items, more than %v", len(x.([]any)), sch["maxItems"])
	case jsonschema.Required:
		return v.Name + ": Field required"
	case jsonschema.Extra:
		return "Extra inputs are not permitted"
	case jsonschema.OneOf:
		return fmt.Sprintf("matches %d of the schemas of a oneOf, not exactly one", v.Matches)
	}
	return fmt.Sprint(v.Err)
}

// short quotes x for an error, cut to 40 bytes.
func short(x any) string {
	b, _ := json.Marshal(x)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
