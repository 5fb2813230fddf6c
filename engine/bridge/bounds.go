package bridge

import (
	"fmt"

	"tai/mcp"
)

// Bounds of one tool definition a server lists. The model is sent a
// granted tool's input schema whole, with every request that offers it,
// and a person reviews it when it drifts; a definition past any bound is
// refused: its row keeps only the name and the reason, it is never
// pinned, offered or granted, and the server's other tools are unaffected.
const (
	// MaxSchemaBytes bounds an input schema, counted without whitespace.
	MaxSchemaBytes = 64 << 10
	// MaxSchemaDepth bounds the objects and arrays nested in an input
	// schema (a property of a property counts two levels: the properties
	// object and the property's schema).
	MaxSchemaDepth = 64
	// MaxDescriptionBytes bounds a description as listed; the model is
	// sent at most MaxDescription bytes of it.
	MaxDescriptionBytes = 64 << 10
)

// TaskOnly is why a tool that runs only as a task (execution.taskSupport
// "required") is listed and not offered: tai does not run MCP tasks
// (2025-11-25, experimental), and a plain call of such a tool fails.
const TaskOnly = `it runs only as an MCP task (execution.taskSupport "required", experimental), which tai does not run`

// definitionProblem says why t's definition is beyond the bounds, or is
// one tai cannot call (TaskOnly), or "" when neither. It reads the schema
// once, without decoding it.
func definitionProblem(t mcp.Tool) string {
	if t.TaskRequired() {
		return TaskOnly
	}
	if n := len(t.Description); n > MaxDescriptionBytes {
		return fmt.Sprintf("its description is %d bytes, over the %d tai accepts", n, MaxDescriptionBytes)
	}
	depth, size := mcp.JSONShape(t.InputSchema)
	switch {
	case depth > MaxSchemaDepth:
		return fmt.Sprintf("its input schema nests %d levels deep, over the %d tai accepts", depth, MaxSchemaDepth)
	case size > MaxSchemaBytes:
		return fmt.Sprintf("its input schema is %d bytes, over the %d tai accepts", size, MaxSchemaBytes)
	}
	return ""
}
