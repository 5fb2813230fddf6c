package mcp

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"tai/mcp/httppolicy"
)

// Transport names of a canonical entry.
const (
	// TransportStdio runs the server as a child process.
	TransportStdio = "stdio"
	// TransportHTTP dials the server over Streamable HTTP.
	TransportHTTP = "http"
)

// Entry is a canonical MCP server entry, as the normalizer produces it, the
// vault stores it and tai.mcp.connect takes it.
type Entry struct {
	// Name identifies the server in errors, the bridge and the vault.
	Name string `json:"name"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	// Command is the program of a stdio server, run without a shell.
	Command string `json:"command,omitempty"`
	// Args are the exact arguments of Command.
	Args []string `json:"args,omitempty"`
	// Env is laid over tai's own environment for a stdio server.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the working directory of a stdio server.
	Cwd string `json:"cwd,omitempty"`
	// URL is the endpoint of an http server.
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to an http server.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth is how tai logs in to an http server (nil: by discovery).
	OAuth *OAuth `json:"oauth,omitempty"`
	// Allow lists the tools offered; empty means all.
	Allow []string `json:"allow,omitempty"`
	// Deny lists tools never offered.
	Deny []string `json:"deny,omitempty"`
	// Sandbox is what the entry says about the sandbox a stdio server
	// runs in (nil: the default).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Enabled says whether the registering profile has the server enabled.
	Enabled bool `json:"enabled"`
	// Source records what was pasted: config-json, config-toml,
	// github:<owner>/<repo> or explicit.
	Source string `json:"source,omitempty"`
}

// Label returns the name used in messages: Name, else the command or URL.
func (e *Entry) Label() string {
	switch {
	case e.Name != "":
		return e.Name
	case e.Command != "":
		return e.Command
	default:
		return httppolicy.RedactURL(e.URL)
	}
}

// The bounds of what a consent screen shows: every word of a command
// line, every env and header name, on a line of its own, and the URL and
// cwd in full, folded. Beyond them the screen would pass a terminal's
// scrollback, and the person could not read what runs.
const (
	// MaxEntryLines bounds the words of the command line plus the names
	// of env and headers.
	MaxEntryLines = 256
	// MaxEntryBytes bounds the bytes of the command line, cwd, URL and
	// those names together.
	MaxEntryBytes = 16 << 10
)

// Validate checks that the entry can be connected: a known transport, a
// command for stdio, an http(s) URL for http, a sandbox setting that
// Sandbox.Validate takes (for stdio only), and what a consent screen
// shows of it within MaxEntryLines and MaxEntryBytes.
func (e *Entry) Validate() error {
	if err := e.Sandbox.Validate(); err != nil {
		return fmt.Errorf("mcp entry %q: %w", e.Label(), err)
	}
	if err := e.checkShown(); err != nil {
		return err
	}
	switch e.Transport {
	case TransportStdio:
		if strings.TrimSpace(e.Command) == "" {
			return fmt.Errorf("mcp entry %q: stdio transport needs a command", e.Label())
		}
		if e.URL != "" {
			return fmt.Errorf("mcp entry %q: has both a command and a url; keep one and set transport to match", e.Label())
		}
		if !e.OAuth.Empty() {
			return fmt.Errorf("mcp entry %q: oauth is for http servers; give a stdio server its credentials in env", e.Label())
		}
	case TransportHTTP:
		if e.URL == "" {
			return fmt.Errorf("mcp entry %q: http transport needs a url", e.Label())
		}
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp entry %q: url %q is not an http:// or https:// URL", e.Label(), httppolicy.RedactURL(e.URL))
		}
		if e.OAuth != nil {
			if err := e.OAuth.Validate(); err != nil {
				return fmt.Errorf("mcp entry %q: %w", e.Label(), err)
			}
		}
		if !e.Sandbox.Empty() {
			return fmt.Errorf("mcp entry %q: sandbox is for stdio servers, which tai starts; an http server runs elsewhere: take sandbox out", e.Label())
		}
	case "sse", "ws", "websocket":
		return fmt.Errorf("mcp entry %q: transport %q is not supported; tai speaks stdio and Streamable HTTP (\"http\")", e.Label(), e.Transport)
	case "":
		return fmt.Errorf("mcp entry %q: no transport; set transport to \"stdio\" (with command) or \"http\" (with url)", e.Label())
	default:
		return fmt.Errorf("mcp entry %q: unknown transport %q; use \"stdio\" or \"http\"", e.Label(), e.Transport)
	}
	return nil
}

// checkShown refuses an entry whose consent screen no one could read
// whole: see MaxEntryLines. The folders a sandbox grants count as words.
func (e *Entry) checkShown() error {
	lines := 1 + len(e.Args) + len(e.Env) + len(e.Headers)
	size := len(e.Command) + len(e.Cwd) + len(e.URL)
	for _, a := range e.Args {
		size += len(a)
	}
	for k := range e.Env {
		size += len(k)
	}
	for k := range e.Headers {
		size += len(k)
	}
	for _, g := range e.Sandbox.Grants() {
		lines++
		size += len(g.Path)
	}
	if lines > MaxEntryLines || size > MaxEntryBytes {
		return fmt.Errorf("mcp entry %q: its command line, env and header names are %d words (%d bytes), more than the %d words (%d KiB) a consent screen shows so that a person can read them all; no real server needs that many: put long values in a file or in env", e.Label(), lines, size, MaxEntryLines, MaxEntryBytes>>10)
	}
	return nil
}

// Offers is the one policy deciding whether the entry offers tool: nil when
// it does, else an error saying why not and what to change. A tool on the
// deny list is never offered; a non-empty allow list offers only the tools
// it names. The bridge and tai.mcp.connect both ask it.
func (e *Entry) Offers(tool string) error {
	return OffersTool(e.Label(), e.Allow, e.Deny, tool)
}

// OffersTool is Entry.Offers for a server called name with the given
// allow and deny lists (a stored row, say).
func OffersTool(name string, allow, deny []string, tool string) error {
	if slices.Contains(deny, tool) {
		return fmt.Errorf("tool %q of %s is on the entry's deny list; take it off deny to call it", tool, name)
	}
	if len(allow) > 0 && !slices.Contains(allow, tool) {
		return fmt.Errorf("tool %q of %s is not on the entry's allow list (%s); add it to allow to call it", tool, name, strings.Join(allow, ", "))
	}
	return nil
}
