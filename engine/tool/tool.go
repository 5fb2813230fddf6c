package tool

import (
	"context"
	"fmt"
	"regexp"

	"tai/engine/llm"
)

// Tool is one tool the model (or a script) can call.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // JSON Schema, root type object
	// Safe marks a read-only tool that runs without approval.
	Safe bool
	// Run does the work. A failure of the work itself is a Result with
	// IsError; a Go error means the call could not be made at all. Run may
	// be called from several goroutines at once (an agent runs the calls
	// of one answer concurrently), so a tool backed by something
	// single-threaded, such as a Lua state, must serialize itself.
	Run func(ctx context.Context, args map[string]any) (Result, error)
	// Origin names where a bridged tool really lives, as "server/tool".
	// Empty for native tools. It is shown at consent and audited as an
	// "mcp-call".
	Origin string
	// Sensitive names arguments whose values are never shown: consent
	// screens and tool events see "[hidden]" instead (secret_set's value).
	Sensitive []string
	// Check, when set, says before approval why a call cannot succeed
	// (edit_file: old_string not in the file): such a call is answered
	// with the error and nobody is asked. Run must still check for itself.
	Check func(args map[string]any) error
	// Unavailable, when set, says before approval why the session calling
	// in ctx cannot use the tool at all (a bridged tool whose server is not
	// enabled for the session's profile), or "": such a call is answered
	// with the reason and nobody is asked.
	Unavailable func(ctx context.Context) string
	// AuditKind is the kind the audit trail files the tool's calls under;
	// empty means "tool", or "mcp-call" for a bridged one (Origin set).
	AuditKind string
	// Decides marks a tool that puts its own question to the person
	// (Approver.Decide) in every mode, --auto and --yolo included, and
	// refuses when nobody can answer; the registry then does not ask for
	// approval first, so the person is asked once.
	Decides bool
	// HostOnly marks a native tool that reaches the MCP servers tai uses
	// (mcp_resources, mcp_read_resource): like a bridged tool it is never
	// served, nor resolved for a NativeOnly caller.
	HostOnly bool
}

// Spec returns the tool as offered to a model.
func (t Tool) Spec() llm.ToolSpec {
	params := t.Parameters
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params}
}

// Fallback resolves a tool the registry does not hold (the MCP bridge
// answers for mcp_* names). It reports false for a name it does not know.
type Fallback func(name string) (Tool, bool)

// SpecSource lists tools the registry does not hold but the model may be
// offered (the MCP bridge's cached schemas) to a session on profile (empty:
// the default profile, for callers with no session). Dispatch reaches them
// through the Fallback. It is called once per selection, so it should
// return a cached slice; the word index over it is rebuilt only when a
// name or description changes.
type SpecSource func(profile string) []llm.ToolSpec

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidToolName reports whether name can be offered to every provider:
// 1–64 of letters, digits, '_' and '-'.
func ValidToolName(name string) error {
	if !toolNameRE.MatchString(name) {
		return fmt.Errorf("tool name %q is not valid: use 1–64 letters, digits, '_' or '-'", name)
	}
	return nil
}
