package sandbox

import (
	"path/filepath"
	"strings"
)

// Policy is what a command started through the keeper may reach. The
// keeper applies it to the command alone, right before exec; tai itself
// is never restricted. The zero value restricts the command to nothing
// at all; build one with ForServer or ForShell.
type Policy struct {
	// Off runs the command with all of the person's rights.
	Off bool `json:"off,omitempty"`
	// Required refuses to start the command where Landlock cannot be
	// applied (or, with NoNetwork, cannot close the network).
	Required bool `json:"required,omitempty"`
	// Read are the files and folders it may read and execute.
	Read []Path `json:"read,omitempty"`
	// Write are those it may also write (create, remove, rename into).
	Write []Path `json:"write,omitempty"`
	// Deny are never reachable, even inside a folder Read or Write grants:
	// they are carved out of the grants (see carve).
	Deny []Path `json:"deny,omitempty"`
	// Protect may be read where Read grants it, but never written, even
	// inside a folder Write grants: they are carved out of the folders
	// granted for writing that hold them.
	Protect []Path `json:"protect,omitempty"`
	// Connect are the Unix sockets it may connect to (Docker's), on
	// kernels whose Landlock restricts them (ABI 9 and later).
	Connect []string `json:"connect,omitempty"`
	// NoNetwork closes TCP bind and connect (ABI 4 and later).
	NoNetwork bool `json:"no_network,omitempty"`
	// Env are variables (K=V) the keeper sets in the command's
	// environment: where a server's own package caches are.
	Env []string `json:"env,omitempty"`
	// PrivateTemp gives the command a temporary folder of its own, made
	// when it starts (its TMPDIR) and removed when it ends.
	PrivateTemp bool `json:"private_temp,omitempty"`
	// Dir is the folder a server runs in (RunDir), absolute, where the
	// keeper starts it whatever its command's own folder says; "" for the
	// shell's policies, whose commands name their folder.
	Dir string `json:"-"`
	// Home is the person's home folder, which Describe writes as ~.
	Home string `json:"-"`
	// Notes say what was left out of the policy and why (a grant inside
	// the vault's folder, say), for the person.
	Notes []string `json:"-"`
	// Guard are the files a Guard keeps for the shell's commands (the git
	// repository's config and hooks): what a command run outside the
	// sandbox would run. ForShell sets it.
	Guard []string `json:"-"`
	// Granted are the folders and files granted because the server's
	// entry names them (its arguments, cwd and sandbox field), resolved:
	// what the default policy does not give, which a model cannot grant.
	Granted []string `json:"-"`
	// Scripts are the folders of Granted given, read-only, so that the
	// server can run a script an argument names (the package it lies
	// in): its code, not a folder it works in, so never among its roots.
	Scripts []string `json:"-"`
}

// Path is one file or folder of a Policy.
type Path struct {
	// Path is absolute and clean.
	Path string `json:"path"`
	// Kind groups it for people: one of the Kind constants, or "" for a
	// path shown as itself.
	Kind string `json:"kind,omitempty"`
	// Make creates the folder (0700, with its parents) when it is missing.
	Make bool `json:"make,omitempty"`
}

// Kinds of Path, as Describe names them.
const (
	KindSystem   = "system"                // system folders, the runtime, devices
	KindCache    = "caches"                // the person's package caches
	KindOwnCache = "its own package cache" // a server's private package caches
	KindState    = "its own state"         // a server's private state folder
	KindTemp     = "temp folders"          // shared temporary folders
	KindVault    = "the vault's folder"
	KindDefault  = "the usual credential folders" // the deny list as shipped
)

// Describe says in one line what p lets a command do, for the consent
// screen and the server list: "reads: system, /srv/data; writes: its own
// package cache, its own state, a private temp folder, /srv/out; network:
// open". A policy that reads everything but some paths says "everything
// but …".
func (p Policy) Describe() string {
	if p.Off {
		return "off: it runs with all of your rights"
	}
	var reads []string
	if everything(p.Read) {
		reads = []string{"everything but " + strings.Join(shown(p.Deny, true, p.Home), ", ")}
	} else {
		reads = shown(p.Read, false, p.Home)
	}
	writes := shown(p.Write, false, p.Home)
	if p.PrivateTemp {
		writes = append(writes, "a private temp folder")
	}
	net := "open"
	if p.NoNetwork {
		net = "closed"
	}
	s := "reads: " + orNothing(reads) + "; writes: " + orNothing(writes) + "; network: " + net
	if p.Required {
		s += " (required)"
	}
	return s
}

// everything reports whether ps grants the whole file system.
func everything(ps []Path) bool {
	for _, p := range ps {
		if p.Path == "/" {
			return true
		}
	}
	return false
}

// shown lists ps for people: each kind once, in order, and the paths
// without a kind as themselves (the home folder as ~). With deny, the
// paths the shipped deny list holds are kept apart from the person's.
func shown(ps []Path, deny bool, home string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ps {
		s := p.Kind
		if s == "" || deny && s == KindDefault {
			s = tilde(p.Path, home)
		}
		if p.Path == "/" && !deny {
			s = "everything"
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func orNothing(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

// tilde writes a path under the home folder from ~.
func tilde(p, home string) string {
	if home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+"/"); ok {
		return "~/" + rest
	}
	return p
}

// expand makes p absolute: ~ and ~/… from home, a relative path from
// dir. It returns "" for an empty path.
func expand(p, home, dir string) string {
	switch {
	case p == "":
		return ""
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}
