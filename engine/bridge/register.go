package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/github"
	"tai/vault"
)

// Outcomes of one server in an AddReport.
const (
	// Added means verified and stored.
	Added = vault.OutcomeAdded
	// Skipped means a server of that name is registered already.
	Skipped = vault.OutcomeSkipped
	// Refused means not stored, for Reason.
	Refused = vault.OutcomeRefused
)

// AddRequest is what mcp_add and tai.mcp.add take.
type AddRequest struct {
	// Source is a pasted config (JSON, TOML, a fragment or one entry, a
	// claude|codex|gemini mcp add line), the path of a file holding one, a
	// server's http(s) URL, a GitHub repository URL, or the name of a
	// stored server.
	Source string
	// Name names a bare entry (one with no name of its own).
	Name string
	// Profile is the registering profile (a TOML enabled applies to it);
	// empty means the current one.
	Profile string
	// Replace stores an entry over a stored server of the same name (an
	// update a person chose): the stored one is deleted only once the
	// new one is consented to and verified. The model's mcp_add never
	// sets it.
	Replace bool
}

// ServerOutcome is what became of one server of an Add or Import.
type ServerOutcome struct {
	Server    string   `json:"server"`
	Outcome   string   `json:"outcome"` // Added, Skipped or Refused
	Reason    string   `json:"reason,omitempty"`
	Transport string   `json:"transport,omitempty"`
	Tools     []string `json:"tools,omitempty"` // as listed at verification
	Profile   string   `json:"profile,omitempty"`
	Enabled   bool     `json:"enabled"`
	// Consent says how the start was consented to: "asked" (a person
	// said yes), "auto" (--auto: the front end should show Spawn) or
	// "yolo" (silently). Empty when nothing was started.
	Consent string `json:"consent,omitempty"`
	// Spawn is what was started, as the consent screen is told it
	// (secrets redacted).
	Spawn *ConsentScreen `json:"spawn,omitempty"`
	// spawnText is Spawn as the consent screen laid it out under --auto,
	// for the model's report (addText).
	spawnText string
	// Notes name the listed tools and prompts that were refused, and why.
	Notes []string `json:"notes,omitempty"`
	// Prompts are the prompts listed at verification, pinned with the
	// tools.
	Prompts []string `json:"prompts,omitempty"`
	// Instructions are the server's instructions for the model, pinned
	// with the tools (bounded, redacted, cleaned).
	Instructions string `json:"instructions,omitempty"`
	// NeedsLogin says the server answered 401: it is stored disabled
	// with no tools until an OAuth login (/mcp login, mcp_login).
	NeedsLogin bool `json:"needs_login,omitempty"`
	// Found says, for a server resolved from a GitHub repository, which
	// pass found it and in which file and line.
	Found string `json:"found,omitempty"`
	// Declined says a Refused server was refused because the person said
	// no at its consent question, so a front end need not read Reason.
	Declined bool `json:"declined,omitempty"`
}

// AddReport is the result of Add or Import.
type AddReport struct {
	Servers []ServerOutcome `json:"servers"`
	Notes   []config.Note   `json:"notes,omitempty"`
}

// Count returns how many servers had outcome o.
func (r AddReport) Count(o string) int {
	n := 0
	for _, s := range r.Servers {
		if s.Outcome == o {
			n++
		}
	}
	return n
}

// Add normalizes req.Source into entries and registers each one: a name
// already stored is skipped; otherwise the spawn is consented to (asked in
// interactive mode, automatic under --auto, silent under --yolo), the
// server is started and its tools listed, and only then is its row, the
// registering profile's row (enabled as the person chose on the consent
// screen; under --auto and --yolo as the entry says, else disabled),
// its pins and its tool cache stored, in one transaction. A server that
// fails verification stores nothing; its outcome says why, with its
// stderr tail. The error is for a source that could not be read at all.
func (b *Bridge) Add(ctx context.Context, req AddRequest) (AddReport, error) {
	rep := AddReport{Servers: []ServerOutcome{}}
	text := strings.TrimSpace(req.Source)
	if text == "" {
		return rep, errors.New("mcp_add: source is empty: paste a server config (JSON or TOML), give a file path, or name a stored server")
	}
	if err := b.attended(ctx, b.approver(ctx), "add an MCP server"); err != nil {
		return rep, err
	}
	s, err := b.current()
	if err != nil {
		return rep, err
	}
	if github.IsSource(text) {
		return b.addResolved(ctx, rep, text, req)
	}
	if !strings.ContainsAny(text, "\n{}[]=\"") && !isURL(text) && !config.IsCLILine(text) {
		if st := s.servers[text]; st != nil {
			rep.Servers = append(rep.Servers, ServerOutcome{Server: text, Outcome: Skipped, Transport: st.row.Transport, Reason: "already registered"})
			return rep, nil
		}
		if data, err := readSource(text); err == nil {
			text = string(data)
		} else if !errors.Is(err, os.ErrNotExist) {
			return rep, fmt.Errorf("mcp_add: %v", err)
		} else if looksLikePath(text) {
			return rep, fmt.Errorf("mcp_add: no file %s, and no stored server of that name: give a config, a file or a server name", text)
		}
	}
	if b.opts.Normalize == nil {
		return rep, errors.New("mcp_add: this tai has no config normalizer: only stored server names can be given")
	}
	entries, notes, err := b.opts.Normalize(text, req.Name)
	rep.Notes = notes
	if err != nil {
		return rep, fmt.Errorf("mcp_add: %s", b.shown(err.Error()))
	}
	if len(entries) == 0 {
		var why []string
		for _, n := range notes {
			why = append(why, serverPart(n.Server)+n.Text)
		}
		msg := "mcp_add: the source holds no server entry tai can add"
		if len(why) > 0 {
			msg += ": " + strings.Join(why, "; ")
		}
		return rep, errors.New(b.shown(msg))
	}
	profile := req.Profile
	if profile == "" {
		profile = b.profileFor(ctx)
	}
	for _, e := range entries {
		rep.Servers = append(rep.Servers, b.addOne(ctx, e, profile, "", req.Replace))
	}
	return rep, nil
}

// addResolved resolves a GitHub repository URL into one entry and adds it
// like any other: consent (naming where the entry was found), a live
// handshake, then the vault, with source github:<owner>/<repo>.
func (b *Bridge) addResolved(ctx context.Context, rep AddReport, url string, req AddRequest) (AddReport, error) {
	if b.opts.Resolve == nil {
		return rep, fmt.Errorf("mcp_add: %s is a GitHub repository, and this tai has no resolver: paste the config its README shows (the JSON or TOML block)", url)
	}
	res, err := b.opts.Resolve(ctx, url)
	if err != nil {
		return rep, fmt.Errorf("mcp_add: %s", b.shown(err.Error()))
	}
	rep.Notes = res.Notes
	e := res.Entry
	if req.Name != "" {
		e.Name = req.Name
	}
	profile := req.Profile
	if profile == "" {
		profile = b.profileFor(ctx)
	}
	found := res.Source.String() + ": " + res.Origin()
	out := b.addOne(ctx, e, profile, found, req.Replace)
	out.Found = b.shown(found)
	rep.Servers = append(rep.Servers, out)
	return rep, nil
}

// isURL reports a source that is one http(s) URL: a server's address, for
// the normalizer.
func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) && u.Host != "" && !strings.ContainsAny(s, " \t\n")
}

func looksLikePath(s string) bool {
	return strings.ContainsAny(s, "/\\") || strings.HasSuffix(s, ".json") || strings.HasSuffix(s, ".toml") || strings.HasPrefix(s, "~")
}

// readSource reads the config file path ("~/" means the home folder).
func readSource(path string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(home, rest)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a config file", path)
	}
	if fi.Size() > mcp.MCP_HTTP_MAX_BODY {
		return nil, fmt.Errorf("%s is %d bytes, too large for a config file", path, fi.Size())
	}
	return os.ReadFile(path)
}

// SetEnabled enables or disables server for profile (empty: the current
// profile).
func (b *Bridge) SetEnabled(ctx context.Context, server, profile string, on bool) (string, error) {
	if profile == "" {
		profile = b.profileFor(ctx)
	}
	if err := b.store.ServerProfileSet(server, profile, on); err != nil {
		if errors.Is(err, vault.ErrNotFound) {
			return profile, notRegistered(server)
		}
		return profile, err
	}
	what := "disable"
	if on {
		what = "enable"
	}
	b.auditAdmin(what, server+"@"+profile, "ok")
	_, err := b.reload()
	return profile, err
}

// Remove deletes server with its profile rows, pins, cached tools and
// package caches (its state folder stays), after
// asking: a person answers in interactive mode; --auto and --yolo approve
// it as they approve any call; a model in a turn nobody attends (a served
// chat) is refused.
func (b *Bridge) Remove(ctx context.Context, server string) error {
	s, err := b.reload()
	if err != nil {
		return err
	}
	st := s.servers[server]
	if st == nil {
		return notRegistered(server)
	}
	a := b.approver(ctx)
	if err := b.attended(ctx, a, "remove MCP server "+server); err != nil {
		return err
	}
	if a.Mode() == tool.Interactive {
		var enabled []string
		for p, on := range st.profiles {
			if on {
				enabled = append(enabled, p)
			}
		}
		sort.Strings(enabled)
		q := fmt.Sprintf("Remove MCP server %s (%s, %d tools, enabled for: %s)? Its pins go too, so adding it again asks for consent again; its package cache goes too, with what the server kept in it. [y/N]",
			server, st.row.Transport, len(st.tools), orNone(enabled))
		ok, err := a.Decide(ctx, q)
		if err != nil {
			return fmt.Errorf("mcp server %q not removed: nobody could confirm (%v)", server, err)
		}
		if !ok {
			return fmt.Errorf("mcp server %q not removed: the person said no", server)
		}
	}
	if err := b.deleteServer(server); err != nil {
		return err
	}
	b.auditAdmin("remove", server, "ok")
	_, err = b.reload()
	return err
}

// deleteServer deletes server's rows, connection, login and package
// caches, without asking (Remove asks; an update was consented to).
func (b *Bridge) deleteServer(server string) error {
	b.dropConn(server)
	b.forgetAuthorizer(server)
	if err := b.store.ServerDelete(server); err != nil {
		return err
	}
	// Tokens and registration are per server, shared by every profile.
	if err := (vaultTokens{b.store, server}).dropAll(); err != nil {
		return fmt.Errorf("mcp server %q removed, but its OAuth tokens were not: %w", server, err)
	}
	// A server added later under this name must not run what this one
	// left in its package caches.
	if err := sandbox.RemoveCaches(server, b.baseEnv()); err != nil {
		return fmt.Errorf("mcp server %q removed, but its package caches were not: %w", server, err)
	}
	return nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "no profile"
	}
	return strings.Join(list, ", ")
}

// Grant connects to server, lists its tools and prompts and asks a
// person, with the diff against the pin, to grant its instructions when
// withheld, then each withheld prompt and tool (only the tool or prompt
// toolName, or "instructions", when given). It asks in every mode and refuses when nobody can answer: pins
// are a person's decision. It returns the tools granted.
func (b *Bridge) Grant(ctx context.Context, server, toolName string) ([]string, error) {
	a := b.approver(ctx)
	if tool.CallerFrom(ctx).ByModel {
		return nil, errors.New("a model cannot grant tools: a person grants them (/mcp grant)")
	}
	if a.Prompter() == nil {
		return nil, fmt.Errorf("nobody can grant tools of %q here: grant them at the REPL (/mcp grant %s)", server, server)
	}
	s, err := b.current()
	if err != nil {
		return nil, err
	}
	st := s.servers[server]
	if st == nil {
		return nil, notRegistered(server)
	}
	c, err := b.client(ctx, st, false)
	if err != nil {
		return nil, err
	}
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return nil, b.failure(err, c.Stderr())
	}
	rows := listing(tools)
	if err := b.store.ToolsReplace(server, rows); err != nil {
		return nil, err
	}
	if err := b.cacheOffers(ctx, server, c); err != nil {
		return nil, b.failure(err, c.Stderr())
	}
	if s, err = b.reload(); err != nil {
		return nil, err
	}
	st = s.servers[server]
	var granted []string
	found := toolName == ""
	// The instructions first: while they are withheld, nothing of the
	// server is offered.
	if toolName == vault.KindInstructions && st.instructions == nil {
		return nil, fmt.Errorf("mcp server %q gives no instructions to grant", server)
	}
	if toolName == vault.KindInstructions {
		found = true
	}
	if st.instructionsWithheld() && (toolName == "" || toolName == vault.KindInstructions) {
		ok, err := b.askInstructionsGrant(ctx, a, st)
		if err != nil {
			return granted, err
		}
		if ok {
			granted = append(granted, vault.KindInstructions)
		}
	}
	var withheld []*offeredPrompt
	for _, p := range st.prompts {
		if toolName != "" && p.name != toolName {
			continue
		}
		found = true
		if p.state == StateWithheld {
			withheld = append(withheld, p)
		}
	}
	got, err := b.askPromptsGrant(ctx, a, st, withheld)
	granted = append(granted, got...)
	if err != nil {
		return granted, err
	}
	for _, bt := range st.tools {
		if toolName != "" && bt.tool != toolName {
			continue
		}
		found = true
		if bt.cached.Refused != "" {
			if toolName != "" {
				return nil, fmt.Errorf("tool %q of %s cannot be granted: %s", toolName, server, bt.reason)
			}
			continue
		}
		if bt.state != StateWithheld {
			continue
		}
		ok, err := b.askGrant(ctx, a, st, bt.cached)
		if err != nil {
			return granted, err
		}
		if ok {
			granted = append(granted, bt.tool)
		}
	}
	if !found {
		return nil, fmt.Errorf("mcp server %q does not list a tool or prompt %q", server, toolName)
	}
	_, err = b.reload()
	return granted, err
}

// auditAdmin records a change to the registry in the audit trail.
func (b *Bridge) auditAdmin(what, subject, outcome string) {
	_, _ = b.store.AuditAppend(vault.AuditEntry{Kind: "mcp-" + what, Subject: subject, Outcome: outcome})
}
