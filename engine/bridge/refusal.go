package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/screen"
)

// maxRefused bounds the paths one refusal names.
const maxRefused = 3

// refusal says in at most three lines what the sandbox of e's stdio
// server (e as stored) refused it, as text shows it (its stderr, an
// error, a tool's result: a "Permission denied" line naming a path the
// policy does not grant), and how to allow it: the exact line for the
// entry's sandbox field and, when the server is stored, /mcp allow. It
// returns "" when text names nothing the sandbox refused.
func (b *Bridge) refusal(e mcp.Entry, text string, stored bool) string {
	if e.Transport != mcp.TransportStdio || e.Sandbox.IsOff() {
		return ""
	}
	if _, err := sandbox.Available(); err != nil {
		return ""
	}
	ex, _, err := b.expand(e)
	if err != nil {
		return ""
	}
	p := b.ServerPolicy(ex)
	dir := p.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	var reads, writes, denied []string
	var under []string
	for _, d := range p.Explain(text, dir) {
		switch {
		case d.Under.Path != "":
			denied = append(denied, p.Tilde(d.Path))
			under = append(under, p.Tilde(d.Under.Path))
		case d.Read:
			reads = append(reads, d.Path)
		case d.In == "":
			writes = append(writes, d.Path)
		}
	}
	name := screen.VisibleLine(e.Name)
	if len(reads) == 0 && len(writes) == 0 {
		if len(denied) == 0 {
			return ""
		}
		return fmt.Sprintf("tai's sandbox refused %s to mcp server %s: %s is never granted (tai.sandbox.deny in init.lua sets what is)",
			strings.Join(first(denied), ", "), name, strings.Join(slices.Compact(under), ", "))
	}
	field, paths := "read", reads
	if len(reads) == 0 {
		field, paths = "write", writes
	}
	// Each path is written from ~ where it can be: the entry and /mcp
	// allow both take that form, and it is not the path a call gave,
	// which a failed call's text never repeats (see tool.Registry).
	paths = first(paths)
	for i, path := range paths {
		paths[i] = p.Tilde(path)
	}
	sb := mcp.Sandbox{}
	if e.Sandbox != nil {
		sb = *e.Sandbox
	}
	if field == "read" {
		sb.Read = append(slices.Clip(sb.Read), paths...)
	} else {
		sb.Write = append(slices.Clip(sb.Write), paths...)
	}
	line, _ := json.Marshal(sb)
	var msg strings.Builder
	fmt.Fprintf(&msg, "tai's sandbox refused %s to mcp server %s\n", screen.VisibleLine(strings.Join(paths, ", ")), name)
	switch {
	case stored && field == "read":
		fmt.Fprintf(&msg, "to allow it, run /mcp allow %s %s\nor add to the entry's sandbox.read: \"sandbox\": %s",
			name, screen.VisibleLine(strings.Join(paths, " ")), screen.VisibleLine(string(line)))
	case stored:
		fmt.Fprintf(&msg, "to allow it, add to the entry's sandbox.write: \"sandbox\": %s", screen.VisibleLine(string(line)))
	default:
		fmt.Fprintf(&msg, "to allow it, add to the entry's sandbox.%s and add it again: \"sandbox\": %s", field, screen.VisibleLine(string(line)))
	}
	return msg.String()
}

// first is the first maxRefused of s.
func first(s []string) []string {
	return s[:min(len(s), maxRefused)]
}

// explained words err, a failure of e's server whose text (with its
// stderr tail) shows what the sandbox refused it, as that refusal (see
// refusal); any other err is returned as it is.
func (b *Bridge) explained(e mcp.Entry, err error, stored bool) error {
	if err == nil {
		return nil
	}
	if r := b.refusal(e, err.Error(), stored); r != "" {
		return mcp.Reworded(err, b.shown(r))
	}
	return err
}

// Allow grants e's stdio server server reading paths (absolute, or from
// ~) beyond what its sandbox grants: it adds them to the entry's
// sandbox.read, asks consent again with the new sandbox line (as a spawn
// that changed is asked), stores the entry with that consent and stops
// the running server, so its next start has them. A model cannot: a
// person widens a sandbox. It returns what was granted, for the person.
func (b *Bridge) Allow(ctx context.Context, server string, paths []string) (string, error) {
	if tool.CallerFrom(ctx).ByModel {
		return "", errors.New("a model cannot widen a server's sandbox: a person does, with /mcp allow")
	}
	if len(paths) == 0 {
		return "", errors.New("name the file or folder to allow: /mcp allow SERVER PATH")
	}
	s, err := b.reload()
	if err != nil {
		return "", err
	}
	st := s.servers[server]
	if st == nil {
		return "", notRegistered(server)
	}
	e := st.entry
	if e.Transport != mcp.TransportStdio {
		return "", fmt.Errorf("mcp server %q is an http server: only a stdio server runs in tai's sandbox", server)
	}
	if e.Sandbox.IsOff() {
		return "", fmt.Errorf("mcp server %q runs without a sandbox already (its entry says sandbox = false)", server)
	}
	var sb mcp.Sandbox
	if e.Sandbox != nil {
		sb = *e.Sandbox
	}
	sb.Read = slices.Clone(sb.Read)
	home, _ := os.UserHomeDir()
	var added []string
	for _, p := range paths {
		abs := p
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			abs = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(abs) {
			return "", fmt.Errorf("%s is not an absolute path: give it from / or ~/", screen.VisibleLine(p))
		}
		abs = filepath.Clean(abs)
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("nothing to allow at %s: %v", screen.VisibleLine(abs), err)
		}
		if !slices.Contains(sb.Read, abs) {
			sb.Read = append(sb.Read, abs)
			added = append(added, abs)
		}
	}
	if len(added) == 0 {
		return fmt.Sprintf("mcp server %s may read %s already", server, screen.VisibleLine(strings.Join(paths, ", "))), nil
	}
	e.Sandbox = &sb
	if err := e.Validate(); err != nil {
		return "", err
	}
	ex, _, err := b.expand(e)
	if err != nil {
		return "", err
	}
	sp := b.spawnFor(ex, e)
	sp.Confined = b.confinementOf(ex)
	if err := b.consentSpawn(ctx, sp); err != nil {
		return "", err
	}
	row, err := b.store.ServerGet(server)
	if err != nil {
		return "", err
	}
	row.Sandbox = sandboxRow(e.Sandbox)
	if err := b.store.ServerPut(row); err != nil {
		return "", err
	}
	if err := b.store.ServerConsent(server, sp.digest()); err != nil {
		return "", err
	}
	b.auditAdmin("allow", server+": "+strings.Join(added, ", "), "ok")
	if _, err := b.reload(); err != nil {
		return "", err
	}
	if sp.Confined.Loose {
		// No Landlock policy holds the running server (none on this
		// system): the grant changes only its roots, which it is told
		// of while it runs.
		if err := b.rootsChanged(ctx, server); err != nil {
			b.dropConn(server)
		}
		return fmt.Sprintf("mcp server %s may now read %s; it was told its roots changed", server, screen.VisibleLine(strings.Join(added, ", "))), nil
	}
	// Landlock cannot widen a running process: the server starts again,
	// under the new policy, and asks for its roots then.
	b.dropConn(server)
	return fmt.Sprintf("mcp server %s may now read %s; it starts with it on its next call", server, screen.VisibleLine(strings.Join(added, ", "))), nil
}
