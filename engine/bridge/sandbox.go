package bridge

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
)

// confinement is what the consent screen and the server list say of a
// stdio server's sandbox.
type confinement struct {
	// Line says in one line what the sandbox lets the server do (the
	// policy's Describe, rendered with mcp.VisibleLine), or that there is
	// none.
	Line string
	// Loose says the server runs with all of the person's rights: its
	// entry turns the sandbox off, or no sandbox can run here. It is
	// shown as a warning.
	Loose bool
	// Notes are what the policy left out and why (a grant that reaches a
	// denied folder, a network this kernel cannot close), and the grants
	// that reach far (the home folder, /, tai's configuration).
	Notes []string
	// Dir is the folder the server runs in, absolute and resolved: what
	// "." in its entry means.
	Dir string
}

// confinementOf is what the sandbox of e's stdio server (e expanded as
// it is spawned) lets it do on this system; nothing for an http server.
func (b *Bridge) confinementOf(e mcp.Entry) confinement {
	if e.Transport != mcp.TransportStdio {
		return confinement{}
	}
	p := b.ServerPolicy(e)
	if p.Off {
		return confinement{Line: p.Describe(), Loose: true, Dir: p.Dir}
	}
	abi, why := sandbox.Available()
	if why != nil {
		return confinement{Line: fmt.Sprintf("none on this system (%v): it runs with all of your rights", why), Loose: true, Dir: p.Dir}
	}
	// Describe names folders the entry wrote: shown as VisibleLine shows
	// every word of the command line.
	c := confinement{Line: mcp.VisibleLine(p.Describe()), Notes: p.Notes, Dir: p.Dir}
	if p.NoNetwork && abi < sandbox.NetworkABI {
		c.Notes = append(c.Notes, fmt.Sprintf("this kernel's Landlock (ABI %d) cannot close the network (ABI %d can): it stays open", abi, sandbox.NetworkABI))
	}
	return c
}

// runtimeEnv is the list of variables that change what a runtime runs.
func (b *Bridge) runtimeEnv() []string {
	if b.opts.RuntimeEnv != nil {
		if l := b.opts.RuntimeEnv(); l != nil {
			return l
		}
	}
	return sandbox.RuntimeEnv()
}

// runtimeNames are the variables of e's env that change what its
// runtime runs, sorted.
func (b *Bridge) runtimeNames(e mcp.Entry) []string {
	list := b.runtimeEnv()
	var out []string
	for k := range e.Env {
		if sandbox.ChangesRuntime(k, list) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// runIn is the folder e's stdio server runs in when its entry names a
// path relative to it (a cwd such as ".", an argument such as "./data"),
// else "": what those paths mean, so part of what is consented to.
func (b *Bridge) runIn(e mcp.Entry) string {
	if e.Transport != mcp.TransportStdio || !relativeWords(e) {
		return ""
	}
	home := ""
	for _, kv := range b.baseEnv() {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	return sandbox.RunDir(e.Cwd, b.opts.Dir, home)
}

// relativeWords reports an entry whose cwd or arguments name a path
// relative to the folder the server runs in.
func relativeWords(e mcp.Entry) bool {
	if e.Cwd != "" && !strings.HasPrefix(e.Cwd, "/") && !strings.HasPrefix(e.Cwd, "~") {
		return true
	}
	for _, a := range e.Args {
		if a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
			return true
		}
	}
	return false
}

// unattendedUnsandboxed refuses an entry that turns the sandbox off when
// a model adds it while nobody is asked (--auto, --yolo): the model could
// otherwise run anything with all of the person's rights, past the
// sandbox its own shell commands run in, without a person seeing the
// warning.
func (b *Bridge) unattendedUnsandboxed(ctx context.Context, a *tool.Approver, e mcp.Entry) error {
	if !e.Sandbox.IsOff() || a.Mode() == tool.Interactive || !tool.CallerFrom(ctx).ByModel {
		return nil
	}
	return fmt.Errorf("refused to start MCP server %s: a model asked under --%s, and the entry turns the sandbox off (sandbox = false) with nobody asked; a person must add it (/mcp add, or tai.mcp.add)", e.Name, a.Mode())
}

// requireSandbox refuses to start e's stdio server when its entry
// requires the sandbox and it cannot run here (see RequireSandbox).
func (b *Bridge) requireSandbox(e mcp.Entry) error {
	if e.Transport != mcp.TransportStdio || !e.Sandbox.IsRequired() {
		return nil
	}
	return RequireSandbox(e, b.ServerPolicy(e))
}

// RequireSandbox refuses to start e's stdio server under the policy p
// when its entry requires the sandbox and p cannot be applied here (no
// Landlock, or a closed network this kernel cannot close), saying why and
// what to do; nil otherwise.
func RequireSandbox(e mcp.Entry, p sandbox.Policy) error {
	if e.Transport != mcp.TransportStdio || !e.Sandbox.IsRequired() {
		return nil
	}
	abi, why := sandbox.Available()
	if err := p.Check(abi, why); err != nil {
		return fmt.Errorf("mcp server %q not started: its entry says sandbox = %q and %v; run tai where Landlock works (Linux 5.13 or later, with landlock in the kernel's lsm= list), or take \"required\" out of the entry's sandbox to let it run without one",
			e.Name, mcp.SandboxRequired, strings.TrimPrefix(err.Error(), "the sandbox is required, and "))
	}
	return nil
}

// wrapLine breaks text at spaces into lines of at most width characters
// (a word longer than that keeps a line of its own).
func wrapLine(text string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Split(text, " ") {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			out = append(out, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(out, line)
}
