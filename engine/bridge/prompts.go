package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
	"tai/vault"
)

// A server's prompts are pinned like its tools: the listing (name, title,
// description, arguments) is cached in the vault and pinned at
// registration; a prompt added or redefined since is withheld until a
// person grants it, seeing the diff. What prompts/get returns is not
// pinned: it depends on the arguments by design, and the person sees it
// whole, folded, before it is sent, and sends it or not.

// MaxPrompts is how many prompts of one server become commands; the
// others are listed as not offered.
const MaxPrompts = mcp.MCP_MAX_TOOLS

// maxPromptName bounds a prompt's name: it becomes a command.
const maxPromptName = 128

// MaxPromptText bounds the text of one rendered prompt, all its messages
// together: it becomes one turn, sent with every request after it.
const MaxPromptText = 1 << 20

// offeredPrompt is one cached prompt of one server.
type offeredPrompt struct {
	server string
	name   string
	// title, description and args are the cached definition.
	title       string
	description string
	args        []mcp.PromptArgument
	hash        string
	state       string // StateGranted or StateWithheld
	reason      string // why it cannot run ("" when it can)
	cached      vault.ServerTool
}

// promptDefinition is the pinned part of a prompt besides its name and
// description, as its cached row's Schema holds it.
type promptDefinition struct {
	Title     string               `json:"title,omitempty"`
	Arguments []mcp.PromptArgument `json:"arguments,omitempty"`
}

// promptHash is the pin of one prompt definition (kept apart from a
// tool's of the same name).
func promptHash(name, description string, def json.RawMessage) string {
	return toolHash("prompt\x00"+name, description, def)
}

// offers builds the server's prompts and instructions from their cached
// rows and pins.
func (ss *serverState) offers(rows []vault.ServerTool, pins []vault.ToolPin) {
	promptPins := map[string]vault.ToolPin{}
	var instrPin *vault.ToolPin
	for _, p := range pins {
		switch p.Kind {
		case vault.KindPrompt:
			promptPins[p.Tool] = p
		case vault.KindInstructions:
			instrPin = &p
		}
	}
	ss.promptPins = promptPins
	ss.instructionsPinned = instrPin != nil
	name := ss.row.Name
	sort.Slice(rows, func(i, j int) bool { return rows[i].Tool < rows[j].Tool })
	for _, r := range rows {
		switch r.Kind {
		case vault.KindInstructions:
			in := &offeredInstructions{text: r.Description, hash: instructionsHash(r.Description), state: StateGranted}
			switch {
			case instrPin == nil || instrPin.Description == "" && in.hash != instrPin.Hash:
				in.state, in.reason = StateWithheld, "withheld: the server gives instructions it did not give when you added it; a person must grant them (/mcp grant "+name+")"
			case instrPin.Hash != in.hash:
				in.state, in.reason = StateWithheld, "withheld: the server changed its instructions since they were granted; a person must grant them again (/mcp grant "+name+")"
			}
			if instrPin != nil {
				in.pinned = instrPin.Description
			}
			ss.instructions = in
		case vault.KindPrompt:
			p := &offeredPrompt{server: name, name: r.Tool, description: r.Description, cached: r, state: StateGranted}
			var def promptDefinition
			_ = json.Unmarshal(r.Schema, &def)
			p.title, p.args = def.Title, def.Arguments
			p.hash = promptHash(r.Tool, r.Description, r.Schema)
			pin, pinned := promptPins[r.Tool]
			switch {
			case !pinned:
				p.state, p.reason = StateWithheld, "withheld: the server added this prompt after registration; a person must grant it (/mcp grant "+name+" "+r.Tool+")"
			case pin.Hash != p.hash:
				p.state, p.reason = StateWithheld, "withheld: the server redefined this prompt since it was granted; a person must grant it again (/mcp grant "+name+" "+r.Tool+")"
			}
			ss.prompts = append(ss.prompts, p)
		}
	}
}

// promptProblem says why a listed prompt cannot become a command ("" when
// it can): its name must be one word a person can type.
func promptProblem(p mcp.Prompt) string {
	switch {
	case len(p.Name) > maxPromptName:
		return fmt.Sprintf("its name is %d bytes, over the %d tai accepts", len(p.Name), maxPromptName)
	case strings.ContainsFunc(p.Name, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '=' || r == unicode.ReplacementChar
	}):
		return "its name holds spaces, control characters or '=', which no command can carry"
	case len(p.Description) > MaxDescriptionBytes:
		return fmt.Sprintf("its description is %d bytes, over the %d tai accepts", len(p.Description), MaxDescriptionBytes)
	case len(p.Arguments) > 64:
		return fmt.Sprintf("it takes %d arguments, over the 64 tai accepts", len(p.Arguments))
	}
	return ""
}

// maxPromptNotes bounds the notes one listing gives about refused
// prompts; the rest are counted.
const maxPromptNotes = 10

// promptListing turns a prompts/list answer into cache rows: at most
// MaxPrompts of them, by name. A prompt beyond the bounds (promptProblem)
// is left out with a note naming it visibly; a name listed twice keeps its
// first definition.
func promptListing(prompts []mcp.Prompt) (rows []vault.ServerTool, notes []string) {
	sort.SliceStable(prompts, func(i, j int) bool { return prompts[i].Name < prompts[j].Name })
	seen := map[string]bool{}
	refused, over := 0, 0
	for _, p := range prompts {
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		if why := promptProblem(p); why != "" {
			if refused++; refused <= maxPromptNotes {
				notes = append(notes, fmt.Sprintf("prompt %s refused: %s", mcp.Clip(p.Name), why))
			}
			continue
		}
		if len(rows) == MaxPrompts {
			over++
			continue
		}
		def, _ := json.Marshal(promptDefinition{Title: p.Title, Arguments: p.Arguments})
		rows = append(rows, vault.ServerTool{Tool: p.Name, Description: p.Description, Schema: def})
	}
	if refused > maxPromptNotes {
		notes = append(notes, fmt.Sprintf("%d more prompts refused for their names or size", refused-maxPromptNotes))
	}
	if over > 0 {
		notes = append(notes, fmt.Sprintf("%d prompts past the first %d (by name) are not offered as commands", over, MaxPrompts))
	}
	return rows, notes
}

// promptPin is the pin of a cached prompt row.
func promptPin(server string, r vault.ServerTool) vault.ToolPin {
	return vault.ToolPin{Server: server, Kind: vault.KindPrompt, Tool: r.Tool, Hash: promptHash(r.Tool, r.Description, r.Schema), Description: r.Description, Schema: r.Schema}
}

// listOffers lists c's prompts (when it declares any) and reads its
// instructions, as cache rows of each kind, within the connect timeout.
func (b *Bridge) listOffers(ctx context.Context, c *mcp.Client) (prompts, instr []vault.ServerTool, notes []string, err error) {
	if text := c.Instructions(); text != "" {
		instr = []vault.ServerTool{{Tool: vault.KindInstructions, Description: boundInstructions(text)}}
	}
	ctx, cancel := context.WithTimeout(ctx, b.connectLimit())
	defer cancel()
	listed, err := c.Prompts(ctx)
	if err != nil {
		if dead(err) {
			return nil, nil, nil, err
		}
		// A server whose prompts cannot be listed keeps its tools.
		return nil, instr, []string{"prompts not listed: " + err.Error()}, nil
	}
	prompts, notes = promptListing(listed)
	return prompts, instr, notes, nil
}

// cacheOffers stores c's prompts and instructions as server's cache.
func (b *Bridge) cacheOffers(ctx context.Context, server string, c *mcp.Client) error {
	prompts, instr, _, err := b.listOffers(ctx, c)
	if err != nil {
		return err
	}
	// Most connections find what the vault holds: nothing is written.
	s, err := b.reload()
	if err != nil {
		return err
	}
	st := s.servers[server]
	if st == nil || !st.samePrompts(prompts) {
		if err := b.store.ListingReplace(server, vault.KindPrompt, prompts); err != nil {
			return err
		}
	}
	if st == nil || !st.sameInstructions(instr) {
		if err := b.store.ListingReplace(server, vault.KindInstructions, instr); err != nil {
			return err
		}
	}
	return b.adoptOffers(server, prompts, instr)
}

// samePrompts reports whether rows (sorted by name) are the cached
// prompt listing.
func (ss *serverState) samePrompts(rows []vault.ServerTool) bool {
	if len(rows) != len(ss.prompts) {
		return false
	}
	for i, r := range rows {
		c := ss.prompts[i].cached
		if r.Tool != c.Tool || r.Description != c.Description || !bytes.Equal(r.Schema, c.Schema) {
			return false
		}
	}
	return true
}

// sameInstructions reports whether rows are the cached instructions.
func (ss *serverState) sameInstructions(rows []vault.ServerTool) bool {
	if ss.instructions == nil || len(rows) == 0 {
		return ss.instructions == nil && len(rows) == 0
	}
	return rows[0].Description == ss.instructions.text
}

// adoptOffers pins a server's prompts and instructions as they are now
// when it has no pin of its instructions at all: it was registered before
// tai pinned them, or before its OAuth login let it be listed, and the
// person who added it trusted it as it was then, as a login trusts its
// first tool listing. A server registered since always has that pin
// (empty when it gave no instructions), so a change is withheld.
func (b *Bridge) adoptOffers(server string, prompts, instr []vault.ServerTool) error {
	s, err := b.current()
	if err != nil {
		return err
	}
	st := s.servers[server]
	if st == nil || st.instructionsPinned {
		return nil
	}
	text := ""
	if len(instr) > 0 {
		text = instr[0].Description
	}
	if err := b.store.PinPut(instructionsPin(server, text)); err != nil {
		return err
	}
	for _, p := range prompts {
		if _, pinned := st.promptPins[p.Tool]; !pinned {
			if err := b.store.PinPut(promptPin(server, p)); err != nil {
				return err
			}
		}
	}
	b.auditAdmin("adopt", server, "prompts and instructions pinned as first listed")
	return nil
}

// askPromptGrant shows how prompt p differs from its pin and stores the
// new pin when a person says yes.
func (b *Bridge) askPromptGrant(ctx context.Context, a *tool.Approver, st *serverState, p *offeredPrompt) (bool, error) {
	pin, pinned := st.promptPins[p.name]
	var q strings.Builder
	if pinned {
		fmt.Fprintf(&q, "MCP server %s redefined prompt %s since you granted it:\n", screen.VisibleLine(st.row.Name), screen.VisibleLine(p.name))
	} else {
		fmt.Fprintf(&q, "MCP server %s now lists a prompt it did not have when you added it: %s\n", screen.VisibleLine(st.row.Name), screen.VisibleLine(p.name))
	}
	q.WriteString(b.shown(definitionDiff(pin.Description, pin.Schema, p.cached.Description, p.cached.Schema, "title and arguments")))
	q.WriteString("Grant the new definition? [y/N]")
	ok, err := a.Decide(ctx, q.String())
	if err != nil || !ok {
		return false, err
	}
	if err := b.store.PinPut(promptPin(st.row.Name, p.cached)); err != nil {
		return false, err
	}
	b.auditAdmin("grant", st.row.Name+"/prompt:"+p.name, "ok")
	return true, nil
}

// maxDriftNamed bounds the new prompts one grant screen names, and
// maxDriftDiffs the redefined ones it shows a diff for; the rest are
// counted.
const (
	maxDriftNamed = 5
	maxDriftDiffs = 2
)

// askPromptsGrant puts a server's withheld prompts ps to a person on one
// screen, whatever their number: how many are new and which, and a diff
// of the first few redefined; a yes grants them all, a no none. It
// returns what was granted.
func (b *Bridge) askPromptsGrant(ctx context.Context, a *tool.Approver, st *serverState, ps []*offeredPrompt) ([]string, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	if len(ps) == 1 {
		ok, err := b.askPromptGrant(ctx, a, st, ps[0])
		if err != nil || !ok {
			return nil, err
		}
		return []string{"prompt " + ps[0].name}, nil
	}
	var added, changed []*offeredPrompt
	for _, p := range ps {
		if _, pinned := st.promptPins[p.name]; pinned {
			changed = append(changed, p)
		} else {
			added = append(added, p)
		}
	}
	var counts []string
	if len(added) > 0 {
		counts = append(counts, fmt.Sprintf("%d new", len(added)))
	}
	if len(changed) > 0 {
		counts = append(counts, fmt.Sprintf("%d redefined", len(changed)))
	}
	var q strings.Builder
	fmt.Fprintf(&q, "MCP server %s lists prompts you did not grant: %s.\n", screen.VisibleLine(st.row.Name), strings.Join(counts, ", "))
	if len(added) > 0 {
		q.WriteString("new: " + promptNames(added, maxDriftNamed) + "\n")
	}
	for i, p := range changed {
		if i == maxDriftDiffs {
			q.WriteString("also redefined: " + promptNames(changed[i:], maxDriftNamed) + "\n")
			break
		}
		pin := st.promptPins[p.name]
		fmt.Fprintf(&q, "redefined %s:\n", screen.VisibleLine(p.name))
		q.WriteString(b.shown(definitionDiff(pin.Description, pin.Schema, p.cached.Description, p.cached.Schema, "title and arguments")))
	}
	fmt.Fprintf(&q, "Grant all %d? (no grants none; /mcp grant %s NAME grants one) [y/N]", len(ps), screen.VisibleLine(st.row.Name))
	ok, err := a.Decide(ctx, q.String())
	if err != nil || !ok {
		return nil, err
	}
	var granted []string
	for _, p := range ps {
		if err := b.store.PinPut(promptPin(st.row.Name, p.cached)); err != nil {
			return granted, err
		}
		granted = append(granted, "prompt "+p.name)
	}
	b.auditAdmin("grant", st.row.Name+"/prompts", fmt.Sprintf("ok: %d prompts", len(ps)))
	return granted, nil
}

// promptNames lists the names of ps, at most n of them, then how many
// more.
func promptNames(ps []*offeredPrompt, n int) string {
	var names []string
	for i, p := range ps {
		if i == n {
			names = append(names, fmt.Sprintf("and %d more", len(ps)-n))
			break
		}
		names = append(names, screen.VisibleLine(p.name))
	}
	return strings.Join(names, ", ")
}

// PromptInfo is one prompt of a registered server, as a front end lists
// it: Offered says it can run now (granted, its server enabled for the
// profile); Reason says why not.
type PromptInfo struct {
	Server      string               `json:"server"`
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	Arguments   []mcp.PromptArgument `json:"arguments,omitempty"`
	State       string               `json:"state"`
	Offered     bool                 `json:"offered"`
	Reason      string               `json:"reason,omitempty"`
}

// Prompts lists the cached prompts of the servers enabled for the
// caller's profile (never a spawn), sorted by server and name; server,
// when given, narrows to one. The texts are a server's: cleaned for a
// terminal, secrets redacted.
func (b *Bridge) Prompts(ctx context.Context, server string) ([]PromptInfo, error) {
	s, err := b.reload()
	if err != nil {
		return nil, err
	}
	profile := b.profileFor(ctx)
	var out []PromptInfo
	for _, name := range s.order {
		st := s.servers[name]
		if server != "" && name != server || !st.profiles[profile] {
			continue
		}
		for _, p := range st.prompts {
			info := PromptInfo{Server: name, Name: p.name, Title: b.shown(p.title), Description: b.shown(p.description), State: p.state, Reason: p.reason}
			for _, a := range p.args {
				a.Title, a.Description = b.shown(a.Title), b.shown(a.Description)
				info.Arguments = append(info.Arguments, a)
			}
			if info.Reason == "" && st.instructionsWithheld() {
				info.Reason = st.instructions.reason
			}
			info.Offered = info.Reason == ""
			out = append(out, info)
		}
	}
	if server != "" && s.servers[server] == nil {
		return nil, notRegistered(server)
	}
	return out, nil
}

// promptFor finds server's prompt for the caller in ctx, or says why it
// cannot run.
func (b *Bridge) promptFor(ctx context.Context, s *snapshot, server, name string) (*serverState, *offeredPrompt, error) {
	st := s.servers[server]
	if st == nil {
		return nil, nil, notRegistered(server)
	}
	if profile := b.profileFor(ctx); !st.profiles[profile] {
		return nil, nil, errors.New(st.disabledFor(profile))
	}
	for _, p := range st.prompts {
		if p.name != name {
			continue
		}
		if p.reason != "" {
			return nil, nil, fmt.Errorf("prompt %s of %s: %s", screen.VisibleLine(name), server, p.reason)
		}
		if st.instructionsWithheld() {
			return nil, nil, fmt.Errorf("prompt %s of %s: %s", screen.VisibleLine(name), server, st.instructions.reason)
		}
		return st, p, nil
	}
	return nil, nil, fmt.Errorf("mcp server %s lists no prompt %s: /help lists the prompts of enabled servers", server, screen.VisibleLine(name))
}

// PromptTurn is a rendered prompt: its messages, ready to open a turn
// (texts redacted; images as parts), and what the person is shown.
type PromptTurn struct {
	Server      string
	Name        string
	Description string
	Messages    []llm.Message
}

// GetPrompt renders server's prompt name with args (prompts/get) for the
// caller in ctx: the prompt must be granted and its server enabled for
// the profile; a required argument missing is an error naming it. Each
// message becomes one llm.Message: text items as text, images as parts
// (with a label in the text), an embedded resource's text inline, a blob
// or audio as a label.
func (b *Bridge) GetPrompt(ctx context.Context, server, name string, args map[string]string) (PromptTurn, error) {
	s, err := b.reload()
	if err != nil {
		return PromptTurn{}, err
	}
	st, p, err := b.promptFor(ctx, s, server, name)
	if err != nil {
		return PromptTurn{}, err
	}
	for _, a := range p.args {
		if a.Required && args[a.Name] == "" {
			arg := screen.VisibleLine(a.Name)
			return PromptTurn{}, fmt.Errorf("prompt %s of %s needs argument %s: give %s=value", screen.VisibleLine(name), server, arg, arg)
		}
	}
	c, err := b.client(ctx, st, true)
	if err != nil {
		return PromptTurn{}, err
	}
	// Connecting may have listed the prompts anew and withheld this one.
	if s, err = b.current(); err != nil {
		return PromptTurn{}, err
	}
	if _, _, err := b.promptFor(ctx, s, server, name); err != nil {
		return PromptTurn{}, err
	}
	res, err := c.GetPrompt(ctx, name, args)
	if err != nil {
		if dead(err) {
			b.forget(server, c)
		}
		return PromptTurn{}, err
	}
	b.auditAdmin("prompt", server+"/"+name, "ok")
	turn := PromptTurn{Server: server, Name: name, Description: b.shown(res.Description)}
	size := 0
	for _, m := range res.Messages {
		msg := b.promptMessage(server, m)
		if size += len(msg.Content); size > MaxPromptText {
			return PromptTurn{}, fmt.Errorf("prompt %s of %s rendered more than %d bytes of text, the most tai sends as one turn: give it narrower arguments", screen.VisibleLine(name), server, MaxPromptText)
		}
		turn.Messages = append(turn.Messages, msg)
	}
	return turn, nil
}

// promptMessage converts one message of a rendered prompt, through the
// same content conversion as a tool result.
func (b *Bridge) promptMessage(server string, m mcp.PromptMessage) llm.Message {
	var c tool.Content
	if text, ok := mcp.TextOf(m.Content); ok {
		c = tool.Content{Type: "text", Text: text}
	} else {
		c = item(server, m.Content)
	}
	out := llm.Message{Role: m.Role}
	switch {
	case c.Type == "text":
		out.Content = b.store.Redact(c.Text)
	case c.Binary():
		out.Content = c.Label()
		switch {
		case c.Type == "image" && len(c.Data) > tool.BinaryMax:
			out.Content += fmt.Sprintf(" (over %d MB: not sent)", tool.BinaryMax>>20)
		case c.Type == "image":
			out.Parts = []llm.Part{{Type: "image", MIME: c.MIME, Data: c.Data}}
		}
	default:
		raw, _ := json.Marshal(c)
		out.Content = b.store.Redact(string(raw))
	}
	return out
}

// CompletePromptArgument asks server for the values argument arg of its
// prompt may take (completion/complete), given what is typed so far and
// the arguments chosen already. A server that does not offer completions
// yields none.
func (b *Bridge) CompletePromptArgument(ctx context.Context, server, prompt, arg, value string, chosen map[string]string) ([]string, error) {
	return b.completePromptArgument(ctx, server, prompt, arg, value, chosen, false)
}

// CompletePromptArgumentQuietly is CompletePromptArgument for Tab on the
// command line: it never asks a person anything (a server whose start
// would need consent gets ErrWouldAsk) and gives up after quietWait.
func (b *Bridge) CompletePromptArgumentQuietly(ctx context.Context, server, prompt, arg, value string, chosen map[string]string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, quietWait)
	defer cancel()
	vals, err := b.completePromptArgument(ctx, server, prompt, arg, value, chosen, true)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("mcp server %s did not complete %s within %s", mcp.Clip(server), screen.VisibleLine(arg), quietWait)
	}
	return vals, err
}

func (b *Bridge) completePromptArgument(ctx context.Context, server, prompt, arg, value string, chosen map[string]string, quiet bool) ([]string, error) {
	s, err := b.current()
	if err != nil {
		return nil, err
	}
	st, _, err := b.promptFor(ctx, s, server, prompt)
	if err != nil {
		return nil, err
	}
	if quiet {
		cn, err := b.connFor(server)
		if err != nil {
			return nil, err
		}
		cn.mu.Lock()
		open := cn.c != nil
		cn.mu.Unlock()
		if !open && !b.opensQuietly(st) {
			return nil, ErrWouldAsk
		}
	}
	c, err := b.client(ctx, st, false)
	if err != nil {
		return nil, err
	}
	vals, err := c.CompletePrompt(ctx, prompt, arg, value, chosen)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, b.shown(v))
	}
	return out, nil
}
