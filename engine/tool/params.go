package tool

// Schema builds a JSON Schema object from property definitions. Native
// tools take no other arguments (additionalProperties: false), and Prepare
// holds them to it.
func Schema(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// Prop is one property definition of a given JSON type.
func Prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}
