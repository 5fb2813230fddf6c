package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"tai/engine/tool"
	"tai/mcp/screen"
	"tai/vault"
	"tai/vault/secret"
)

// Limits of the vault tools.
const (
	// RecordReadDefault is record_read's default length; RecordReadMax the
	// most one call returns (ResultMax, so a read never spills again).
	RecordReadDefault = 16 * 1024
	RecordReadMax     = tool.ResultMax - 1024
	// AuditTailMax bounds audit_tail's n.
	AuditTailMax = 500
)

// Vault is what the vault tools (secret_set, secret_list,
// secret_delete, record_read, audit_tail) need: the vault they act on.
type Vault struct {
	// Store is the vault.
	Store *vault.Store
}

// Tools returns the vault tools.
func (vt Vault) Tools() []tool.Tool {
	return []tool.Tool{
		{
			Name: "secret_set",
			Description: "Store a secret (an API key, a token) in the vault under a name. The value is never shown " +
				"again: it is scrubbed from all output. Profiles and MCP configs refer to secrets by name.",
			Parameters: tool.Schema([]string{"name", "value"}, map[string]any{
				"name":        tool.Prop("string", "secret name: 1-128 letters, digits, '-', '_' or '.'"),
				"value":       tool.Prop("string", "the secret value"),
				"description": tool.Prop("string", "what the secret is for"),
			}),
			Run:       vt.secretSet,
			Sensitive: []string{"value"},
		},
		{
			Name:        "secret_list",
			Description: "List the vault's secrets by name, with their metadata and update time; values are never shown.",
			Parameters:  tool.Schema(nil, map[string]any{}),
			Safe:        true,
			Run:         vt.secretList,
		},
		{
			Name:        "secret_delete",
			Description: "Delete a secret from the vault by name.",
			Parameters: tool.Schema([]string{"name"}, map[string]any{
				"name": tool.Prop("string", "secret name"),
			}),
			Run: vt.secretDelete,
		},
		{
			Name: "record_read",
			Description: "Read part of a stored record, such as a large tool result that was spilled to the vault: " +
				"give its id, an offset in bytes and a length (default 16384).",
			Parameters: tool.Schema([]string{"id"}, map[string]any{
				"id":     tool.Prop("string", "record id"),
				"offset": tool.Prop("integer", "byte offset to start at (default 0)"),
				"length": tool.Prop("integer", fmt.Sprintf("bytes to read (default %d, at most %d)", RecordReadDefault, RecordReadMax)),
			}),
			Safe: true,
			Run:  vt.recordRead,
		},
		{
			Name:        "audit_tail",
			Description: "Show the newest entries of the audit trail of tool calls, MCP calls and secret changes.",
			Parameters: tool.Schema(nil, map[string]any{
				"n":    tool.Prop("integer", "how many entries (default 20)"),
				"kind": tool.Prop("string", "only entries of this kind: tool, mcp-call, secret, …"),
			}),
			Safe: true,
			Run:  vt.auditTail,
		},
	}
}

func (vt Vault) secretSet(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	name := a.Str("name", true)
	value := a.Str("value", true)
	desc := a.Str("description", false)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if err := vault.ValidSecretName(name); err != nil {
		return tool.ErrorResult("secret_set: %v", err), nil
	}
	var meta map[string]any
	if desc != "" {
		meta = map[string]any{"description": desc}
	}
	if err := vt.Store.SecretSet(name, value, meta); err != nil {
		return tool.ErrorResult("secret_set: %v", err), nil
	}
	if len(value) < secret.MinLen {
		return tool.TextResult(fmt.Sprintf("stored secret %s (%d bytes); warning: values shorter than %d bytes cannot be redacted, so this one will show wherever it appears", name, len(value), secret.MinLen)), nil
	}
	return tool.TextResult(fmt.Sprintf("stored secret %s (%d bytes; the value is never shown)", name, len(value))), nil
}

func (vt Vault) secretList(context.Context, map[string]any) (tool.Result, error) {
	list, err := vt.Store.SecretList()
	if err != nil {
		return tool.ErrorResult("secret_list: %v", err), nil
	}
	if len(list) == 0 {
		return tool.TextResult("no secrets stored"), nil
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var b strings.Builder
	for _, s := range list {
		fmt.Fprintf(&b, "%s\tupdated %s", s.Name, s.Updated.UTC().Format(time.RFC3339))
		if len(s.Meta) > 0 {
			m, _ := json.Marshal(s.Meta)
			fmt.Fprintf(&b, "\t%s", m)
		}
		b.WriteByte('\n')
	}
	return tool.TextResult(b.String()), nil
}

func (vt Vault) secretDelete(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	name := a.Str("name", true)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if err := vt.Store.SecretDelete(name); err != nil {
		if errors.Is(err, vault.ErrNotFound) {
			return tool.ErrorResult("secret_delete: no secret named %q: see secret_list", name), nil
		}
		return tool.ErrorResult("secret_delete: %v", err), nil
	}
	return tool.TextResult("deleted secret " + name), nil
}

func (vt Vault) recordRead(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	id := a.Str("id", true)
	offset := a.Int("offset", 0)
	length := a.Int("length", RecordReadDefault)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if offset < 0 {
		return tool.ErrorResult("record_read: offset %d is negative", offset), nil
	}
	if length <= 0 || length > RecordReadMax {
		return tool.ErrorResult("record_read: length %d is out of range: give 1 to %d", length, RecordReadMax), nil
	}
	whole, _, err := vt.Store.RecordGet(id, 0, 0)
	if err != nil {
		// The vault says why an id is missing (never stored, deleted, or
		// dropped by the retention limit); the model needs that to act.
		return tool.ErrorResult("record_read: %v", err), nil
	}
	// The whole record is redacted before it is paged: a secret learnt
	// after the record was stored must not be cut in two by the pages.
	// Offsets count bytes of the redacted text.
	red, err := vt.Store.Redactor()
	if err != nil {
		return tool.ErrorResult("record_read: %v", err), nil
	}
	whole = red.Redact(whole)
	size := len(whole)
	if offset > size {
		return tool.ErrorResult("record_read: offset %d is past the end of record %s (%d bytes)", offset, id, size), nil
	}
	// A page does not end inside a [REDACTED:name] mark the redaction
	// wrote: it is kept whole. Text that only looks like one is cut.
	end := offset + red.Cut(whole[offset:], length)
	text := whole[offset:end]
	next := ""
	if end < size {
		next = fmt.Sprintf("; %d bytes remain, continue with offset %d", size-end, end)
	}
	return tool.TextResult(fmt.Sprintf("[record %s, bytes %d-%d of %d%s]\n%s", id, offset, end, size, next, text)), nil
}

func (vt Vault) auditTail(_ context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	n := a.Int("n", 20)
	kind := a.Str("kind", false)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if n <= 0 || n > AuditTailMax {
		return tool.ErrorResult("audit_tail: n %d is out of range: give 1 to %d", n, AuditTailMax), nil
	}
	entries, err := vt.Store.AuditTail(n, kind)
	if err != nil {
		return tool.ErrorResult("audit_tail: %v", err), nil
	}
	if len(entries) == 0 {
		return tool.TextResult("the audit trail is empty"), nil
	}
	// One line per entry: what an entry records (a name a model or a
	// client chose) shows its line breaks and controls as \n, \x1b and the
	// like, so it cannot pass for entries of its own.
	v := screen.VisibleLine
	var b strings.Builder
	for _, en := range entries {
		fmt.Fprintf(&b, "#%d %s %s %s digest=%s %s %s %dB", en.Seq, en.Time.UTC().Format(time.RFC3339),
			v(en.Kind), v(en.Subject), v(en.Digest), v(en.Outcome), en.Duration.Round(time.Millisecond), en.Size)
		if en.Session != "" {
			b.WriteString(" session=" + v(en.Session))
		}
		b.WriteByte('\n')
	}
	return tool.TextResult(b.String()), nil
}
