package bridge

import (
	"os"

	"tai/engine/sandbox"
	"tai/mcp"
)

// ServerPolicy returns the sandbox policy e's stdio server runs under
// (sandbox.ForServer): e is the entry as it is spawned, its variables
// expanded. Its Describe line is what the consent screen and the server
// list show.
func (b *Bridge) ServerPolicy(e mcp.Entry) sandbox.Policy {
	var deny []string
	if b.opts.Deny != nil {
		deny = b.opts.Deny()
	}
	return ServerPolicy(e, b.baseEnv(), b.opts.Dir, b.store.Path(), deny)
}

// baseEnv is the environment stdio servers start from, before their
// entry's variables: the options' (mcp.StdioOptions.BaseEnv), else
// mcp.SafeEnv().
func (b *Bridge) baseEnv() []string {
	if b.opts.Client != nil && b.opts.Client.Stdio != nil && b.opts.Client.Stdio.BaseEnv != nil {
		return b.opts.Client.Stdio.BaseEnv
	}
	return mcp.SafeEnv()
}

// ServerPolicy returns the sandbox policy of e's stdio server started
// with the base environment base (nil: mcp.SafeEnv()) from tai's working
// folder dir (empty: the process's), for the vault file vault, with deny
// never granted (nil: sandbox.DefaultDeny()).
func ServerPolicy(e mcp.Entry, base []string, dir, vault string, deny []string) sandbox.Policy {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if base == nil {
		base = mcp.SafeEnv()
	}
	env := append([]string(nil), base...)
	for k, v := range e.Env {
		env = append(env, k+"="+v)
	}
	spec := sandbox.ServerSpec{Name: e.Name, Command: e.Command, Args: e.Args, Cwd: e.Cwd, Dir: dir, Env: env, Base: base, Deny: deny, Vault: vault}
	if sb := e.Sandbox; sb != nil {
		spec.Off, spec.Required, spec.NoNetwork = sb.Off, sb.Required, sb.NoNetwork
		spec.Read, spec.Write = sb.Read, sb.Write
	}
	return sandbox.ForServer(spec)
}

// Sandboxed makes o start e's server, when it is a stdio server, through
// the keeper under p.
func Sandboxed(o *mcp.ClientOptions, e mcp.Entry, p sandbox.Policy) *mcp.ClientOptions {
	if e.Transport != mcp.TransportStdio {
		return o
	}
	var so mcp.StdioOptions
	if o.Stdio != nil {
		so = *o.Stdio
	}
	so.Start = sandbox.StartServer(p)
	if !p.Off {
		// Its own package caches: the command a slow first start says to
		// run by hand fills them, not the person's.
		so.StartEnv = p.Env
	}
	o.Stdio = &so
	return o
}

// sandboxed makes o start e's server through the keeper under its policy.
func (b *Bridge) sandboxed(o *mcp.ClientOptions, e mcp.Entry) *mcp.ClientOptions {
	return Sandboxed(o, e, b.ServerPolicy(e))
}
