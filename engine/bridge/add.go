package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"tai/engine/tool"
	"tai/mcp"
	"tai/vault"
)

// addOne verifies and stores one entry; found, when not empty, says where
// a resolved entry came from, for the consent screen; replace stores it
// over a stored server of its name (see AddRequest.Replace). Its steps
// run in order, each refusing with what it found wrong: admit, ask,
// verify, store.
func (b *Bridge) addOne(ctx context.Context, e mcp.Entry, profile, found string, replace bool) ServerOutcome {
	out := ServerOutcome{Server: e.Name, Transport: e.Transport, Profile: profile}
	a := &adding{b: b, ctx: ctx, e: e, profile: profile, out: &out}
	err := a.admit(replace)
	if err == nil {
		err = a.ask(found)
	}
	if err == nil {
		err = a.verify()
	}
	if err == nil {
		err = a.store()
	}
	var skip skipped
	switch {
	case errors.As(err, &skip):
		out.Outcome, out.Reason, out.Tools = Skipped, string(skip), nil
	case err != nil:
		out.Outcome, out.Reason = Refused, b.shown(err.Error())
	default:
		out.Outcome, out.Enabled = Added, a.enabled
	}
	return out
}

// skipped is a step's reason to leave a server of the entry's name as it
// is stored: not a refusal.
type skipped string

func (s skipped) Error() string { return string(s) }

// adding is one entry on its way through addOne: what each step learns,
// and out, what the person is told.
type adding struct {
	b       *Bridge
	ctx     context.Context
	e       mcp.Entry // as given
	ex      mcp.Entry // its references expanded
	profile string
	out     *ServerOutcome

	replacing  bool // a stored server of its name gives way
	sp         spawn
	enabled    bool
	needsLogin bool
	rows       []vault.ServerTool
	prompts    []vault.ServerTool
	instr      []vault.ServerTool
	pins       []vault.ToolPin
}

// admit checks the entry before anybody is asked: named and valid, not
// registered already (unless replacing), within MCP_MAX_SERVERS, its
// references expandable, nothing an unattended caller may not grant, and
// a sandbox where the entry requires one.
func (a *adding) admit(replace bool) error {
	b, e := a.b, a.e
	if e.Name == "" {
		return errors.New("the entry has no name: give one (name=…)")
	}
	if err := e.Validate(); err != nil {
		return err
	}
	s, err := b.reload()
	if err != nil {
		return err
	}
	if st := s.servers[e.Name]; st != nil {
		if !replace {
			a.out.Transport = st.row.Transport
			return skipped("already registered")
		}
		a.replacing = true
	}
	if len(s.servers) >= b.opts.MaxServers && !a.replacing {
		return fmt.Errorf("%d servers are registered, the most tai keeps (MCP_MAX_SERVERS): remove one first (mcp_remove)", len(s.servers))
	}
	ex, secrets, err := b.expand(e)
	if err != nil {
		return err
	}
	a.ex = ex
	if err := b.unattendedSecrets(a.ctx, b.approver(a.ctx), e.Name, secrets); err != nil {
		return err
	}
	if err := b.unattendedBeyondDefault(a.ctx, b.approver(a.ctx), ex); err != nil {
		return err
	}
	return b.requireSandbox(ex)
}

// ask puts the spawn to the person (or to --auto or --yolo), and learns
// whether the server is to be enabled.
func (a *adding) ask(found string) error {
	b, ctx := a.b, a.ctx
	sp := b.spawnFor(a.ex, a.e)
	if tool.CallerFrom(ctx).ByModel {
		sp.Proposed = b.beyondDefault(a.ex)
	}
	sp.Found = b.clean(found)
	sp.Confined = b.confinementOf(a.ex)
	a.sp = sp
	switch b.approver(ctx).Mode() {
	case tool.Yolo:
		a.out.Consent = "yolo"
	case tool.Auto:
		a.out.Consent = "auto"
	default:
		a.out.Consent = "asked"
	}
	sc := sp.screenOf(b.store.Redact)
	sc.Profile = a.profile
	a.out.Spawn = &sc
	choice, body, err := b.consentAdd(ctx, sp, sc)
	a.out.spawnText = strings.TrimRight(body, "\n")
	if err != nil {
		a.out.Declined = errors.Is(err, errDeclined)
		return err
	}
	a.enabled = a.e.Enabled
	if a.out.Consent == "asked" {
		a.enabled = choice == addEnabled
	}
	return nil
}

// verify starts the server and lists its tools. A server that asks for
// an OAuth login is stored disabled, with no tools, for a login next.
func (a *adding) verify() error {
	b, ctx, e, ex := a.b, a.ctx, a.e, a.ex
	var tools []mcp.Tool
	var notes []string
	c, err := mcp.Connect(ctx, ex, b.clientOptions(nil, ex))
	stderr := ""
	if err == nil {
		tools, err = b.listTools(ctx, c)
		if err == nil {
			a.prompts, a.instr, notes, err = b.listOffers(ctx, c)
		}
		stderr = c.Stderr()
		c.Close()
	}
	if err != nil && unauthorized(err) && oauthable(e) {
		if no := b.noOAuth(ctx, ex, err); no != nil {
			return fmt.Errorf("nothing stored: %v", no)
		}
	}
	switch {
	case err != nil && unauthorized(err) && !oauthable(e) && e.Transport == mcp.TransportHTTP:
		return fmt.Errorf("verification failed, nothing stored: the server refused the Authorization header the entry sets (HTTP 401); check those credentials (the header's value, or the secret it names): %v", b.failure(err, ""))
	case err != nil && unauthorized(err) && oauthable(e):
		// Stored disabled, no tools cached: a login comes next.
		a.needsLogin, a.enabled, a.out.NeedsLogin = true, false, true
	case err != nil && errors.As(err, new(*mcp.StartupError)):
		return fmt.Errorf("verification failed, nothing stored: %v (to add it once more: the same paste, /mcp add, tai.mcp.add or mcp_add)", b.explained(e, b.failure(err, stderr), false))
	case err != nil:
		return fmt.Errorf("verification failed, nothing stored: %v", b.explained(e, b.failure(err, stderr), false))
	}
	a.rows = listing(tools)
	a.out.Notes = badNames(tools)
	for _, t := range a.rows {
		if t.Refused != "" {
			a.out.Notes = append(a.out.Notes, fmt.Sprintf("tool %s refused: %s", mcp.Clip(t.Tool), t.Refused))
			continue
		}
		a.pins = append(a.pins, pinOf(e.Name, t))
		a.out.Tools = append(a.out.Tools, t.Tool)
	}
	// The prompts and instructions the server gives now are pinned with
	// its tools: the person consented to this server as it is.
	for _, n := range notes {
		a.out.Notes = append(a.out.Notes, b.shown(n))
	}
	for _, p := range a.prompts {
		a.pins = append(a.pins, promptPin(e.Name, p))
		a.out.Prompts = append(a.out.Prompts, p.Tool)
	}
	for _, in := range a.instr {
		a.pins = append(a.pins, instructionsPin(e.Name, in.Description))
		a.out.Instructions = b.shown(in.Description)
	}
	if len(a.instr) == 0 && !a.needsLogin {
		// None given: instructions the server gives later are a change.
		a.pins = append(a.pins, instructionsPin(e.Name, ""))
	}
	return nil
}

// store writes the server, the registering profile's row, its tools and
// their pins in one transaction, over the stored server it replaces, with
// the digest of the spawn consented to.
func (a *adding) store() error {
	b, e := a.b, a.e
	source := e.Source
	if source == "" {
		source = "explicit"
	}
	if a.replacing {
		// consented to and verified: the stored entry gives way
		if err := b.deleteServer(e.Name); err != nil {
			a.out.Tools = nil
			return fmt.Errorf("the stored %s could not be replaced: %v", e.Name, err)
		}
		b.auditAdmin("remove", e.Name, "replaced")
	}
	err := b.store.ServerRegister(vault.Registration{
		Server: vault.Server{
			Name: e.Name, Transport: e.Transport, Command: e.Command, Args: e.Args, Env: e.Env,
			URL: e.URL, Headers: e.Headers, OAuth: oauthRow(e.OAuth), Cwd: e.Cwd, Allow: e.Allow, Deny: e.Deny,
			Sandbox: sandboxRow(e.Sandbox), Source: source, Consented: a.sp.digest(),
		},
		Profile: a.profile, Enabled: a.enabled, Pins: a.pins, Tools: a.cached(), MaxServers: b.opts.MaxServers,
	})
	switch {
	case errors.Is(err, vault.ErrExists):
		return skipped("already registered (by another tai meanwhile)")
	case err != nil:
		a.out.Tools = nil
		return err
	}
	if a.needsLogin {
		b.auditAdmin("add", e.Name, "needs login")
	} else {
		b.auditAdmin("add", e.Name, "ok")
	}
	_, err = b.reload()
	return err
}

// cached is every row the registration caches: tools, prompts and
// instructions, each of its kind.
func (a *adding) cached() []vault.ServerTool {
	rows := append([]vault.ServerTool(nil), a.rows...)
	for _, p := range a.prompts {
		p.Kind = vault.KindPrompt
		rows = append(rows, p)
	}
	for _, in := range a.instr {
		in.Kind = vault.KindInstructions
		rows = append(rows, in)
	}
	return rows
}
