package bridge

import (
	"context"
	"fmt"
	"strings"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
	"tai/vault"
)

// listing turns a tools/list answer into cache rows. A tool whose name no
// call could carry (badName) is left out rather than failing the whole
// server. A tool listed twice with the same
// definition is kept once; one listed twice with different definitions
// is refused, since the model, the pin and the server could each take a
// different one. A definition beyond the bounds (definitionProblem) is
// refused. A refused row keeps only the name and the reason.
func listing(tools []mcp.Tool) []vault.ServerTool {
	out := make([]vault.ServerTool, 0, len(tools))
	at := map[string]int{}
	for _, t := range tools {
		if badName(t.Name) != "" {
			continue
		}
		row := vault.ServerTool{Tool: t.Name, Description: t.Description, Schema: t.InputSchema}
		if why := definitionProblem(t); why != "" {
			row = vault.ServerTool{Tool: t.Name, Refused: why}
		}
		i, seen := at[t.Name]
		if !seen {
			at[t.Name] = len(out)
			out = append(out, row)
			continue
		}
		prev := out[i]
		if prev.Refused == row.Refused && (row.Refused != "" || toolHash(prev.Tool, prev.Description, prev.Schema) == toolHash(row.Tool, row.Description, row.Schema)) {
			continue
		}
		out[i] = vault.ServerTool{Tool: t.Name, Refused: "the server lists it more than once, with different definitions"}
	}
	return out
}

// badName says why no call could carry a listed tool's name (control
// characters, over 256 bytes), "" when one can.
func badName(name string) string {
	switch {
	case len(name) > 256:
		return fmt.Sprintf("its name is %d bytes, over the 256 tai accepts", len(name))
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "its name holds control characters"
	}
	return ""
}

// badNames notes each listed tool that listing leaves out for its name,
// the name clipped and shown visibly.
func badNames(tools []mcp.Tool) []string {
	var notes []string
	for _, t := range tools {
		if why := badName(t.Name); why != "" {
			notes = append(notes, fmt.Sprintf("tool %s refused: %s", mcp.Clip(t.Name), why))
		}
	}
	return notes
}

// relist lists server's tools on c, stores the listing as the cache and
// settles drift: a tool added or redefined since its pin is withheld
// unless a person grants it now (interactive mode only, when prompt); a
// removed one is dropped silently.
func (b *Bridge) relist(ctx context.Context, server string, c *mcp.Client, prompt bool) error {
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return b.failure(err, c.Stderr())
	}
	rows := listing(tools)
	if err := b.store.ToolsReplace(server, rows); err != nil {
		return err
	}
	if err := b.cacheOffers(ctx, server, c); err != nil {
		return b.failure(err, c.Stderr())
	}
	s, err := b.reload()
	if err != nil {
		return err
	}
	st := s.servers[server]
	if st == nil {
		return fmt.Errorf("mcp server %q was removed meanwhile", server)
	}
	a := b.approver(ctx)
	if !prompt || a.Mode() != tool.Interactive || a.Prompter() == nil {
		return nil // --auto, --yolo and served sessions never grant drift
	}
	granted := false
	// ask puts one withheld definition to the person, unless they
	// declined it as it is now.
	ask := func(k declinedKey, grant func() (bool, error)) {
		if b.wasDeclined(k) {
			return
		}
		ok, err := grant()
		switch {
		case err != nil:
		case !ok:
			b.decline(k)
		default:
			granted = true
		}
	}
	instructionsOK := true
	if st.instructionsWithheld() {
		ask(instructionsKey(st), func() (bool, error) { return b.askInstructionsGrant(ctx, a, st) })
		instructionsOK = granted
	}
	// The withheld prompts go on one screen, however many: all or none;
	// none while the instructions stay withheld, which withhold them all.
	var ps []*offeredPrompt
	for _, p := range st.prompts {
		if instructionsOK && p.state == StateWithheld && !b.wasDeclined(promptKey(p)) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		got, err := b.askPromptsGrant(ctx, a, st, ps)
		switch {
		case err != nil:
		case len(got) == 0:
			for _, p := range ps {
				b.decline(promptKey(p))
			}
		default:
			granted = true
		}
	}
	for _, bt := range st.tools {
		if bt.state == StateWithheld && bt.cached.Refused == "" {
			ask(toolKey(bt), func() (bool, error) { return b.askGrant(ctx, a, st, bt.cached) })
		}
	}
	if granted {
		_, err = b.reload()
	}
	return err
}

// askGrant shows how t differs from its pin and stores the new pin when a
// person says yes.
func (b *Bridge) askGrant(ctx context.Context, a *tool.Approver, st *serverState, t vault.ServerTool) (bool, error) {
	pin, pinned := st.pins[t.Tool]
	var q strings.Builder
	if pinned {
		fmt.Fprintf(&q, "MCP server %s redefined tool %s since you granted it:\n", screen.VisibleLine(st.row.Name), screen.VisibleLine(t.Tool))
	} else {
		fmt.Fprintf(&q, "MCP server %s now lists a tool it did not have when you added it: %s\n", screen.VisibleLine(st.row.Name), screen.VisibleLine(t.Tool))
	}
	q.WriteString(b.shown(driftDiff(pin.Description, pin.Schema, t.Description, t.Schema)))
	q.WriteString("Grant the new definition? [y/N]")
	ok, err := a.Decide(ctx, q.String())
	if err != nil || !ok {
		return false, err
	}
	if err := b.store.PinPut(pinOf(st.row.Name, t)); err != nil {
		return false, err
	}
	b.auditAdmin("grant", st.row.Name+"/"+t.Tool, "ok")
	return true, nil
}

// declinedKey names one definition a person may decline: a tool's, a
// prompt's or a server's instructions, as they are now (hash).
type declinedKey struct {
	server, what, hash string
}

func toolKey(bt *bridged) declinedKey { return declinedKey{bt.server, bt.tool, bt.hash} }

func promptKey(p *offeredPrompt) declinedKey {
	return declinedKey{p.server, "prompt\x00" + p.name, p.hash}
}

func instructionsKey(st *serverState) declinedKey {
	return declinedKey{st.row.Name, "\x00instructions", st.instructions.hash}
}

// wasDeclined reports whether a person declined k's definition, as it
// is now, when this bridge asked unprompted.
func (b *Bridge) wasDeclined(k declinedKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.declined[[2]string{k.server, k.what}] == k.hash
}

// decline remembers that a person declined k's definition as it is now;
// an explicit grant still asks.
func (b *Bridge) decline(k declinedKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.declined[[2]string{k.server, k.what}] = k.hash
}

func pinOf(server string, t vault.ServerTool) vault.ToolPin {
	return vault.ToolPin{Server: server, Tool: t.Tool, Hash: toolHash(t.Tool, t.Description, t.Schema), Description: t.Description, Schema: t.Schema}
}
