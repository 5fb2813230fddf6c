package bridge

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// confinement is what the consent screen and the server list say of a
// stdio server's sandbox.
type confinement struct {
	// Line says in one line what the sandbox lets the server do (the
	// policy's Describe, rendered with screen.VisibleLine), or that there is
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
	c := confinement{Line: screen.VisibleLine(p.Describe()), Notes: p.Notes, Dir: p.Dir}
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
	return sandbox.RunDir(e.Cwd, b.opts.Dir, sandbox.HomeOf(b.baseEnv()))
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

// beyondDefault lists what e's stdio server asks for beyond the default
// policy (its runtime, its own state, caches and temp, tai's folder to
// read): the sandbox turned off, folders and files its entry grants,
// variables that change what its runtime runs, inline code. A model may
// propose such an entry; only a person can grant it.
func (b *Bridge) beyondDefault(e mcp.Entry) []string {
	if e.Transport != mcp.TransportStdio {
		return nil
	}
	var out []string
	if e.Sandbox.IsOff() {
		out = append(out, "the sandbox off (sandbox = false)")
	}
	if code := inlineCode(append([]string{e.Command}, e.Args...)); code != "" {
		out = append(out, "inline code ("+screen.VisibleLine(code)+")")
	}
	if p := b.ServerPolicy(e); len(p.Granted) > 0 && !p.Off {
		shown := make([]string, len(p.Granted))
		for i, g := range p.Granted {
			shown[i] = screen.VisibleLine(g)
		}
		out = append(out, "access to "+strings.Join(shown, ", "))
	}
	if names := b.runtimeNames(e); len(names) > 0 {
		for i, n := range names {
			names[i] = screen.VisibleLine(n)
		}
		out = append(out, "env "+strings.Join(names, ", "))
	}
	return out
}

// unattendedBeyondDefault refuses an entry a model adds while nobody is
// asked (--auto, --yolo) when it asks for more than the default policy
// (beyondDefault): its verification start would run what the model chose
// with rights no person granted.
func (b *Bridge) unattendedBeyondDefault(ctx context.Context, a *tool.Approver, e mcp.Entry) error {
	if a.Mode() == tool.Interactive || !tool.CallerFrom(ctx).ByModel {
		return nil
	}
	extra := b.beyondDefault(e)
	if len(extra) == 0 {
		return nil
	}
	return fmt.Errorf("mcp server %s not started: a person must add it at tai's prompt without --%s (/mcp add with the same config, or tai.mcp.add); a model proposed it, and it asks for %s, which only a person can grant", e.Name, a.Mode(), strings.Join(extra, "; "))
}

// inlineCode returns the words of argv that run code written on the
// command line itself ("sh -c", "python3 -c", "node -e", "deno eval"),
// through any wrapper before them (env, npx, uv run), or "".
func inlineCode(argv []string) string {
	for i, w := range argv {
		base := filepath.Base(w)
		flags := inlineFlags(base)
		if flags == nil {
			continue
		}
		for _, f := range argv[i+1:] {
			flag, _, _ := strings.Cut(f, "=")
			if slices.Contains(flags, flag) || shellLike(base) && len(f) > 1 && f[0] == '-' && f[1] != '-' && strings.Contains(f, "c") {
				return base + " " + flag
			}
			if !strings.HasPrefix(f, "-") && !slices.Contains(flags, f) {
				break
			}
		}
	}
	return ""
}

// inlineFlags are the arguments with which the program named base runs
// code given on its command line; nil for a program with none known.
func inlineFlags(base string) []string {
	switch {
	case shellLike(base):
		return []string{"-c"}
	case strings.HasPrefix(base, "python") || base == "pypy" || base == "pypy3":
		return []string{"-c"}
	case base == "node" || base == "nodejs" || base == "bun":
		return []string{"-e", "--eval", "-p", "--print"}
	case base == "deno":
		return []string{"eval"}
	case base == "perl" || base == "ruby" || base == "lua" || base == "luajit":
		return []string{"-e", "-E"}
	case base == "php":
		return []string{"-r"}
	case base == "pwsh" || base == "powershell":
		return []string{"-c", "-Command", "-EncodedCommand", "-e", "-ec"}
	case base == "osascript" || base == "Rscript":
		return []string{"-e"}
	case base == "npx" || base == "npm":
		return []string{"-c", "--call"}
	}
	return nil
}

// shellLike reports a shell, whose -c may come among other short flags
// (-ec, -lc).
func shellLike(base string) bool {
	switch base {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash":
		return true
	}
	return false
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
