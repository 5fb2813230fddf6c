package mcp

import (
	"path/filepath"
	"strings"
)

// Launch describes a stdio server started by a launcher: a program that
// fetches the server's package (or image) on its first start, then runs
// it: npx, uvx, pipx run, docker run and their kin. Such a start may take
// far longer than MCP_CONNECT_TIMEOUT while the launcher downloads; see
// ClientOptions.InstallTimeout.
type Launch struct {
	// Launcher is the launcher as the command line names it: "npx",
	// "uvx", "docker run", "npm exec".
	Launcher string
	// Package is what it fetches: the package, or the image; empty when
	// the command line names none tai can tell.
	Package string
}

// Verb says what the launcher does on a first start, for a person:
// "pulling" for a container image, else "installing".
func (l Launch) Verb() string {
	if strings.HasPrefix(l.Launcher, "docker") || strings.HasPrefix(l.Launcher, "podman") {
		return "pulling"
	}
	return "installing"
}

// What names what is being fetched: the package, or "the server's
// package" when it is not known.
func (l Launch) What() string {
	if l.Package != "" {
		return l.Package
	}
	if l.Verb() == "pulling" {
		return "the server's image"
	}
	return "the server's package"
}

// launcherForm is one launcher tai knows: the program's base name, the
// subcommand that fetches and runs (empty for none), and the options of
// that form that take a value (so the value is not read as the package).
// pkgFlags name the options whose value is the package itself.
type launcherForm struct {
	prog, sub string
	valued    []string
	pkgFlags  []string
}

// launcherForms lists the launchers tai knows.
func launcherForms() []launcherForm {
	dockerValued := dockerValued()
	return []launcherForm{
		{prog: "npx", valued: []string{"-c", "--call", "--cache", "--registry", "--userconfig", "-w", "--workspace", "--node-options"}, pkgFlags: []string{"-p", "--package"}},
		{prog: "pnpx", valued: []string{"-c", "--call", "--cache", "--registry"}, pkgFlags: []string{"-p", "--package"}},
		{prog: "npm", sub: "exec", valued: []string{"-c", "--call", "--cache", "--registry", "--userconfig", "-w", "--workspace"}, pkgFlags: []string{"-p", "--package"}},
		{prog: "pnpm", sub: "dlx", valued: []string{"-c", "--registry"}, pkgFlags: []string{"--package"}},
		{prog: "yarn", sub: "dlx", valued: []string{"--registry"}, pkgFlags: []string{"-p", "--package"}},
		{prog: "bunx", valued: []string{"--registry", "--cwd"}, pkgFlags: []string{"-p", "--package"}},
		{prog: "bun", sub: "x", valued: []string{"--registry", "--cwd"}, pkgFlags: []string{"-p", "--package"}},
		{prog: "uvx", valued: []string{"--with", "--with-requirements", "--python", "-p", "--index", "--index-url", "--extra-index-url", "--default-index", "--cache-dir", "--directory", "--env-file"}, pkgFlags: []string{"--from"}},
		{prog: "uv", sub: "tool run", valued: []string{"--with", "--with-requirements", "--python", "-p", "--index", "--index-url", "--extra-index-url", "--default-index", "--cache-dir", "--directory", "--env-file"}, pkgFlags: []string{"--from"}},
		{prog: "pipx", sub: "run", valued: []string{"--python", "--index-url", "-i", "--pip-args"}, pkgFlags: []string{"--spec"}},
		{prog: "docker", sub: "run", valued: dockerValued},
		{prog: "podman", sub: "run", valued: dockerValued},
	}
}

// dockerValued returns docker run's (and podman run's) options that take a
// value as the next word.
func dockerValued() []string {
	return []string{"-e", "--env", "--env-file", "-v", "--volume", "--mount", "-p", "--publish", "--name",
		"--network", "--net", "-w", "--workdir", "-u", "--user", "--entrypoint", "-l", "--label", "--platform", "--pull",
		"-m", "--memory", "--cpus", "-h", "--hostname", "--add-host", "--device", "--cap-add", "--cap-drop",
		"--security-opt", "--tmpfs", "--ulimit", "--log-driver", "--log-opt", "--restart", "--runtime", "--shm-size",
		"--dns", "--label-file", "--cidfile", "--gpus", "--ipc", "--pid", "--userns", "--group-add"}
}

// LaunchOf says whether command, run with args, is a launcher that fetches
// the server on its first start, and what it fetches.
func LaunchOf(command string, args []string) (Launch, bool) {
	prog := filepath.Base(command)
	for _, f := range launcherForms() {
		if prog != f.prog {
			continue
		}
		rest := args
		for _, w := range strings.Fields(f.sub) {
			if len(rest) == 0 || rest[0] != w {
				rest = nil
				break
			}
			rest = rest[1:]
		}
		if f.sub != "" && rest == nil {
			continue
		}
		name := f.prog
		if f.sub != "" {
			name += " " + f.sub
		}
		return Launch{Launcher: name, Package: packageArg(rest, f.valued, f.pkgFlags)}, true
	}
	return Launch{}, false
}

// packageArg finds the package in a launcher's arguments: the value of a
// package option, else the first word that is not an option or an
// option's value (the words after it are the server's own).
func packageArg(args, valued, pkgFlags []string) string {
	has := func(list []string, s string) bool {
		for _, v := range list {
			if v == s {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if name, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			if has(pkgFlags, name) {
				return val
			}
			continue
		}
		switch {
		case has(pkgFlags, a) && i+1 < len(args):
			return args[i+1]
		case has(valued, a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			// What follows is the server's own command line.
			return a
		}
	}
	return ""
}
