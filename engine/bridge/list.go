package bridge

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"tai/mcp"
	"tai/mcp/screen"
)

// ServerInfo describes one registered server for mcp_list and
// tai.mcp.list.
type ServerInfo struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Target    string   `json:"target"` // the argv or URL, secrets redacted
	Source    string   `json:"source"`
	Profiles  []string `json:"profiles"` // the profiles it is enabled for
	Enabled   bool     `json:"enabled"`  // for the current profile
	Tools     int      `json:"tools"`    // listed (cached)
	Granted   int      `json:"granted"`  // whose definition is the one granted
	Offered   int      `json:"offered"`  // offered to the current profile
	Withheld  int      `json:"withheld"`
	Removed   int      `json:"removed"`
	Connected bool     `json:"connected"`
	// Words are the argv, or the URL, one word each, secrets redacted,
	// for a front end to show with screen.ShowWords (tai.term.words).
	Words []string `json:"words"`
	// SecretInArgv are the ${…} names of secrets the entry puts on the
	// command line (or in the URL's query), where others can read them.
	SecretInArgv []string `json:"secret_in_argv"`
	// Login is the OAuth login state of an http server tai logs in to
	// ("logged in, expires in 52m, refresh held", "no login held ..."),
	// empty for other servers.
	Login string `json:"login,omitempty"`
	// OAuth describes the login settings of an http server (client id,
	// the client secret's ${NAME} reference, callback port), empty when
	// it has none.
	OAuth string `json:"oauth,omitempty"`
	// Sandbox says in one line what the sandbox lets a stdio server do
	// ("reads: system; writes: its own package cache, its own state; network: open"),
	// or that it is off; empty for an http server.
	Sandbox string `json:"sandbox,omitempty"`
	// Host shows an http server's host that is not plain ASCII with its
	// punycode form, and warns when it mixes scripts (mcp.HostNote); empty
	// for a plain ASCII host.
	Host string `json:"host,omitempty"`
	// Prompts counts the prompts listed (cached); Withheld does not count
	// them.
	Prompts int `json:"prompts"`
	// Withholding, when set, says why none of the server's tools or
	// prompts is offered: its instructions changed since they were
	// granted, and how a person grants them.
	Withholding string `json:"withholding,omitempty"`
	// SandboxOff says the entry turns the sandbox off (sandbox = false):
	// the server runs with all of the person's rights.
	SandboxOff bool `json:"sandbox_off,omitempty"`
	// Unsandboxed says the server runs with all of the person's rights:
	// its entry turns the sandbox off, or no sandbox can run here.
	Unsandboxed bool `json:"unsandboxed,omitempty"`
}

// ToolInfo describes one tool of a registered server for mcp_tools and
// tai.mcp.tools. Description is the granted one: a withheld tool shows
// only why it is withheld.
type ToolInfo struct {
	Name        string `json:"name"` // the bridged name
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Description string `json:"description"`
	State       string `json:"state"` // StateGranted, StateWithheld or StateRemoved
	Offered     bool   `json:"offered"`
	Reason      string `json:"reason,omitempty"`
}

// List returns every registered server, sorted by name; Enabled is for
// the profile of the caller in ctx.
func (b *Bridge) List(ctx context.Context) ([]ServerInfo, error) {
	s, err := b.reload()
	if err != nil {
		return nil, err
	}
	profile := b.profileFor(ctx)
	b.mu.Lock()
	connected := map[string]bool{}
	for name, cn := range b.conns {
		connected[name] = cn.c != nil
	}
	b.mu.Unlock()
	out := make([]ServerInfo, 0, len(s.order))
	secret := b.secretKind()
	for _, name := range s.order {
		st := s.servers[name]
		info := ServerInfo{
			Name: name, Transport: st.row.Transport, Source: st.row.Source,
			Target: b.store.Redact(target(st.entry)), Profiles: []string{},
			Enabled: st.profiles[profile], Tools: len(st.tools), Removed: len(st.removed),
			Connected: connected[name], Words: []string{}, SecretInArgv: []string{},
			Login: b.loginState(st.entry), OAuth: st.entry.OAuth.String(),
		}
		if st.entry.Transport == mcp.TransportHTTP {
			info.Host = mcp.HostNote(st.entry.URL)
		}
		if st.entry.Transport == mcp.TransportStdio {
			c := b.confinementOf(st.entry)
			info.Sandbox, info.SandboxOff, info.Unsandboxed = c.Line, st.entry.Sandbox.IsOff(), c.Loose
		}
		for _, w := range words(st.entry) {
			info.Words = append(info.Words, b.store.Redact(w))
		}
		for _, x := range spawnOf(st.entry, st.entry, secret, b.credential).Exposed {
			if ref := "${" + x.Name + "}"; !slices.Contains(info.SecretInArgv, ref) {
				info.SecretInArgv = append(info.SecretInArgv, ref)
			}
		}
		for p, on := range st.profiles {
			if on {
				info.Profiles = append(info.Profiles, p)
			}
		}
		sort.Strings(info.Profiles)
		info.Prompts = len(st.prompts)
		if st.instructionsWithheld() {
			info.Withholding = st.instructions.reason
		}
		for _, bt := range st.tools {
			switch {
			case bt.state == StateWithheld:
				info.Withheld++
			case info.Enabled && bt.offered():
				info.Offered++
			}
			if bt.state == StateGranted {
				info.Granted++
			}
		}
		out = append(out, info)
	}
	return out, nil
}

func target(e mcp.Entry) string {
	if e.Transport == mcp.TransportStdio {
		return quoteArgv(words(e))
	}
	return e.URL
}

// words is e's argv, or its URL.
func words(e mcp.Entry) []string {
	if e.Transport == mcp.TransportStdio {
		return append([]string{e.Command}, e.Args...)
	}
	return []string{e.URL}
}

// Tools returns the tools of server (every server when empty), sorted by
// server and tool, removed ones last per server; Offered is for the
// profile of the caller in ctx.
func (b *Bridge) Tools(ctx context.Context, server string) ([]ToolInfo, error) {
	s, err := b.reload()
	if err != nil {
		return nil, err
	}
	profile := b.profileFor(ctx)
	if server != "" && s.servers[server] == nil {
		return nil, notRegistered(server)
	}
	var out []ToolInfo
	for _, name := range s.order {
		if server != "" && name != server {
			continue
		}
		st := s.servers[name]
		for _, bt := range st.tools {
			ti := ToolInfo{Name: bt.name, Server: name, Tool: bt.tool, State: bt.state, Offered: bt.offered(), Reason: bt.reason}
			if bt.state == StateGranted {
				ti.Description = bt.cached.Description
			}
			if ti.Offered && !st.profiles[profile] {
				ti.Offered = false
				ti.Reason = fmt.Sprintf("server not enabled for profile %q", profile)
			}
			out = append(out, ti)
		}
		for _, r := range st.removed {
			out = append(out, ToolInfo{Name: BridgedName(name, r), Server: name, Tool: r, State: StateRemoved,
				Reason: "the server no longer lists it"})
		}
	}
	return out, nil
}

// listText renders servers for a model or a person.
func listText(list []ServerInfo, profile string) string {
	if len(list) == 0 {
		return "No MCP servers are registered. Add one with mcp_add (a pasted config, a file path)."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d MCP server(s); current profile %q:\n", len(list), profile)
	for _, s := range list {
		state := "disabled here"
		if s.Enabled {
			state = "enabled here"
		}
		fmt.Fprintf(&b, "- %s (%s, %s):\n", screen.VisibleLine(s.Name), s.Transport, state)
		for _, l := range screen.ShowWords(s.Words, screen.ShowWidth) {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		if s.Host != "" {
			fmt.Fprintf(&b, "  %s\n", s.Host)
		}
		if len(s.SecretInArgv) > 0 {
			fmt.Fprintf(&b, "  ⚠ secret in argv: %s is readable by every user of this machine (process list, or the URL's query in server logs); pass it in env (or a header) instead\n", strings.Join(s.SecretInArgv, ", "))
		}
		if s.Login != "" {
			fmt.Fprintf(&b, "  OAuth: %s\n", s.Login)
		}
		switch {
		case s.SandboxOff:
			fmt.Fprintf(&b, "  ⚠ sandbox %s (sandbox = false in its entry)\n", s.Sandbox)
		case s.Unsandboxed:
			fmt.Fprintf(&b, "  ⚠ sandbox: %s\n", s.Sandbox)
		case s.Sandbox != "":
			fmt.Fprintf(&b, "  sandbox: %s\n", s.Sandbox)
		}
		fmt.Fprintf(&b, "  enabled for: %s; tools: %d listed, %d granted, %d offered here, %d withheld, %d removed; source %s\n",
			orNone(s.Profiles), s.Tools, s.Granted, s.Offered, s.Withheld, s.Removed, screen.VisibleLine(s.Source))
		if s.Withholding != "" {
			fmt.Fprintf(&b, "  instructions %s\n", s.Withholding)
		}
	}
	return b.String()
}

// toolsText renders tools for a model or a person.
func toolsText(list []ToolInfo) string {
	if len(list) == 0 {
		return "No tools are cached for that server."
	}
	var b strings.Builder
	for _, t := range list {
		fmt.Fprintf(&b, "- %s (%s/%s) [%s", t.Name, t.Server, t.Tool, t.State)
		if t.Offered {
			b.WriteString(", offered")
		}
		b.WriteString("]")
		if t.Description != "" {
			fmt.Fprintf(&b, ": %s", oneLine(t.Description, 200))
		}
		b.WriteString("\n")
		if t.Reason != "" {
			fmt.Fprintf(&b, "  %s\n", t.Reason)
		}
	}
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// addText renders an AddReport.
func addText(r AddReport) string {
	var b strings.Builder
	for _, s := range r.Servers {
		switch s.Outcome {
		case Added:
			state := "stored disabled for profile " + s.Profile + "; enable it with mcp_enable"
			if s.Enabled {
				state = "enabled for profile " + s.Profile
			}
			if s.NeedsLogin {
				state = "stored disabled: it needs an OAuth login (HTTP 401); mcp_login (or /mcp login " + s.Server + ") logs in and enables it"
			}
			fmt.Fprintf(&b, "added %s (%s), %s; %d tools: %s\n", s.Server, s.Transport, state, len(s.Tools), strings.Join(s.Tools, ", "))
			for _, n := range s.Notes {
				fmt.Fprintf(&b, "  %s\n", n)
			}
			if s.Consent == "auto" {
				fmt.Fprintf(&b, "  started under --auto without asking:\n%s\n", s.spawnText)
			}
		case Skipped:
			fmt.Fprintf(&b, "skipped %s: %s\n", screen.VisibleLine(s.Server), screen.VisibleLine(s.Reason))
		default:
			fmt.Fprintf(&b, "refused %s: %s\n", screen.VisibleLine(s.Server), screen.VisibleLine(s.Reason))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note (%s): %s%s\n", n.Level, screen.VisibleLine(serverPart(n.Server)), screen.VisibleLine(n.Text))
	}
	return b.String()
}

func serverPart(s string) string {
	if s == "" {
		return ""
	}
	return s + ": "
}
