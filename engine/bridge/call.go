package bridge

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// call runs tool on server for a bridged dispatch. Approval, audit,
// redaction and spill happen around it in tool.Call.Run; here the
// server must be enabled for the profile, the entry must offer the tool
// and its pin must hold. A tool that ran and failed is a result with
// IsError; a JSON-RPC error, a timeout or a dead server is an error.
func (b *Bridge) call(ctx context.Context, server, toolName string, args map[string]any) (tool.Result, error) {
	// The vault, not the snapshot the tool was chosen from: another tai
	// may have found the tool redefined since, and withheld it.
	s, err := b.reload()
	if err != nil {
		return tool.Result{}, err
	}
	st := s.servers[server]
	if st == nil {
		return tool.ErrorResult("mcp server %q is not registered (any more): mcp_list shows the servers", server), nil
	}
	if profile := b.profileFor(ctx); !st.profiles[profile] {
		name := screen.VisibleLine(server)
		tool.Note(ctx, fmt.Sprintf("refused: %s is not enabled for profile %s; /mcp enable %s", name, screen.VisibleLine(profile), name))
		return tool.ErrorResult("%s", st.disabledFor(profile)), nil
	}
	if why := st.refusal(toolName); why != "" {
		return b.refused(ctx, st, why), nil
	}
	c, err := b.client(ctx, st, true)
	if err != nil {
		return tool.Result{}, err
	}
	// The listing just made (a first one, or one after the server said
	// its tools changed) may have withheld the tool; it reloaded the
	// snapshot, so the one in memory is current.
	if s, err = b.current(); err == nil {
		if st2 := s.servers[server]; st2 != nil {
			if why := st2.refusal(toolName); why != "" {
				return b.refused(ctx, st2, why), nil
			}
		}
	}
	res, err := c.Call(ctx, toolName, args)
	// A server that needs the person to open a URL first (-32042) gets
	// the call once more after they did.
	if we := (*mcp.WireError)(nil); errors.As(err, &we) && we.Code == mcp.CodeURLElicitationRequired {
		cn, _ := b.connFor(server)
		if b.urlsRequired(ctx, server, cn, we) {
			res, err = c.Call(ctx, toolName, args)
		}
	}
	if err != nil {
		if dead(err) {
			stderr := c.Stderr()
			b.forget(server, c)
			return tool.Result{}, b.explained(st.entry, b.failure(fmt.Errorf("%w (tai starts it again on the next call)", err), stderr), true)
		}
		return tool.Result{}, err
	}
	out := convert(server, res, b.outputSchema(c.Name(), toolName))
	if out.IsError {
		// A tool that failed because the sandbox refused it a path says
		// so, with the grant that allows it.
		if r := b.refusal(st.entry, out.Text(), true); r != "" {
			out.Content = append(out.Content, tool.Content{Type: "text", Text: b.shown(r)})
		}
	}
	return out, nil
}

// refused is the result of a call tai does not send, why it refused:
// the model is told why in full, and the call's line says it in short
// (a server withholding its tools for its changed instructions says
// so, and whether the person declined them this session), with the fix.
func (b *Bridge) refused(ctx context.Context, st *serverState, why string) tool.Result {
	note := why
	if in := st.instructions; st.instructionsWithheld() && why == in.reason {
		name := screen.VisibleLine(st.row.Name)
		note = fmt.Sprintf("withheld: %s changed its instructions; /mcp grant %s shows them", name, name)
		if in.pinned == "" {
			note = fmt.Sprintf("withheld: %s now gives instructions; /mcp grant %s shows them", name, name)
		}
		if b.wasDeclined(instructionsKey(st)) {
			note = fmt.Sprintf("withheld: you declined %s's new instructions this session; /mcp grant %s asks again", name, name)
		}
	}
	tool.Note(ctx, note)
	return tool.ErrorResult("%s", why)
}

// disabledFor says that the server is not enabled for profile, where it
// is, and how a person enables it here.
func (st *serverState) disabledFor(profile string) string {
	var on []string
	for p, enabled := range st.profiles {
		if enabled {
			on = append(on, p)
		}
	}
	sort.Strings(on)
	where := "no profile"
	if len(on) > 0 {
		where = "profile " + strings.Join(on, ", ")
	}
	name := st.row.Name
	return fmt.Sprintf("mcp server %q is not enabled for profile %q, so its tools are not offered (it is enabled for %s): the person enables it here with /mcp enable %s (or mcp_enable {\"server\": %q})", name, profile, where, name, name)
}

// refusal says why tool is not offered, or "" when it is.
func (st *serverState) refusal(toolName string) string {
	for _, bt := range st.tools {
		if bt.tool == toolName {
			return bt.reason
		}
	}
	for _, r := range st.removed {
		if r == toolName {
			return fmt.Sprintf("tool %q of %s is gone: the server no longer lists it", toolName, st.row.Name)
		}
	}
	if err := st.entry.Offers(toolName); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("withheld: the server has not listed tool %q; a person must grant it once it does (/mcp grant %s %s)", toolName, st.row.Name, toolName)
}

// forget drops c from the pool when it is still server's connection, so
// the next call opens a new one.
func (b *Bridge) forget(server string, c *mcp.Client) {
	b.mu.Lock()
	cn := b.conns[server]
	b.mu.Unlock()
	if cn == nil {
		return
	}
	cn.mu.Lock()
	if cn.c == c {
		cn.c = nil
	}
	cn.mu.Unlock()
	c.Close()
}
