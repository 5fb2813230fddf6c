package engine

import (
	"context"

	"tai/engine/sandbox"
	"tai/engine/tool"
)

// ShellPolicy returns the sandbox policy the shell tool's commands run
// under for the session in ctx (else the engine's own profile), in dir
// with the environment env: sandbox.ForShell with the folders
// Options.SandboxDeny lists (tai.sandbox.deny) and the vault file never
// readable, off when the session's profile says sandbox = false.
func (e *Engine) ShellPolicy(ctx context.Context, dir string, env []string) sandbox.Policy {
	p := e.Profile()
	if s, ok := SessionFrom(ctx); ok {
		p = s.Profile()
	}
	var deny []string
	if e.sandboxDeny != nil {
		deny = e.sandboxDeny()
	}
	return sandbox.ForShell(sandbox.ShellSpec{Dir: dir, Env: env, Deny: deny, Off: p.ShellUnsandboxed(), Vault: e.store.Path()})
}

// shellPolicy is the sandbox of a command the caller in ctx runs: none
// for the person's own (see tool.Caller.PersonsOwn), ShellPolicy's for
// the model's.
func (e *Engine) shellPolicy(ctx context.Context, dir string, env []string) *sandbox.Policy {
	if tool.CallerFrom(ctx).PersonsOwn() {
		return nil
	}
	p := e.ShellPolicy(ctx, dir, env)
	return &p
}
