package engine

import (
	"context"

	"tai/engine/tool"
)

// LiftShellSandbox turns the shell's sandbox off (lifted true) or back on
// for the model's commands in this process's own sessions, until the
// process ends: the person's /sandbox off and /sandbox on. Served MCP
// sessions are not lifted. Only the person reaches it (tai.sandbox.session
// from their own Lua); no tool the model can call does.
func (e *Engine) LiftShellSandbox(lifted bool) {
	e.shellLifted.Store(lifted)
}

// ShellSandboxLifted reports whether LiftShellSandbox(true) is in force.
func (e *Engine) ShellSandboxLifted() bool {
	return e.shellLifted.Load()
}

// shellLift says why the model's shell command in ctx runs outside the
// sandbox although the profile keeps it on, or "" when it does not: the
// person lifted it for this session (LiftShellSandbox), and the call is
// the model's in one of this process's own sessions, not a served one.
func (e *Engine) shellLift(ctx context.Context, args map[string]any, dir string) string {
	if tool.CallerFrom(ctx).PersonsOwn() || !e.shellLifted.Load() {
		return ""
	}
	if s, ok := SessionFrom(ctx); ok && s.Name() != "" {
		return ""
	}
	return "the person lifted it for this session with /sandbox off"
}
