package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"tai/engine"
	"tai/mcp"
	"tai/mcp/config"
)

// spawn is what a person consents to before a server is started: the
// exact argv (or URL), the working directory and the names of the
// variables and headers set, with every known secret redacted.
type spawn struct {
	Server    string   `json:"server"`
	Transport string   `json:"transport"`
	Argv      []string `json:"argv,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Env       []string `json:"env,omitempty"` // names only
	URL       string   `json:"url,omitempty"`
	Headers   []string `json:"headers,omitempty"` // names only
	// Refs are the ${…} references each env variable ("env:NAME") or
	// header ("header:NAME") is built from, as the entry wrote them: shown,
	// not part of the digest.
	Refs map[string]string `json:"-"`
}

// spawnOf is the spawn of the expanded entry e, whose references raw (the
// entry as stored) names.
func spawnOf(e, raw mcp.Entry) spawn {
	s := spawn{Server: e.Name, Transport: e.Transport, Cwd: e.Cwd, URL: e.URL, Refs: map[string]string{}}
	note := func(key, v string) {
		var refs []string
		for _, r := range config.Refs(v) {
			refs = append(refs, r.Text)
		}
		if len(refs) > 0 {
			s.Refs[key] = strings.Join(refs, ", ")
		}
	}
	for k, v := range raw.Env {
		note("env:"+k, v)
	}
	for k, v := range raw.Headers {
		note("header:"+k, v)
	}
	if e.Transport == mcp.TransportStdio {
		s.Argv = append([]string{e.Command}, e.Args...)
	}
	for k := range e.Env {
		s.Env = append(s.Env, k)
	}
	for k := range e.Headers {
		s.Headers = append(s.Headers, k)
	}
	sort.Strings(s.Env)
	sort.Strings(s.Headers)
	return s
}

// digest identifies the spawn (over the expanded values: a changed
// variable that changes the argv asks again). Only the digest is stored.
func (s spawn) digest() string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// text is the spawn as a person reads it, secrets redacted.
func (s spawn) text(redact func(string) string) string {
	var b strings.Builder
	switch s.Transport {
	case mcp.TransportStdio:
		fmt.Fprintf(&b, "  run:  %s\n", redact(quoteArgv(s.Argv)))
		cwd := s.Cwd
		if cwd == "" {
			cwd = "(tai's working directory)"
		}
		fmt.Fprintf(&b, "  cwd:  %s\n", redact(cwd))
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "  env:  %s (values not shown)\n", s.names("env:", s.Env))
		}
	default:
		fmt.Fprintf(&b, "  url:  %s\n", redact(s.URL))
		if len(s.Headers) > 0 {
			fmt.Fprintf(&b, "  headers: %s (values not shown)\n", s.names("header:", s.Headers))
		}
	}
	return b.String()
}

// names lists env or header names, each with the references its value is
// built from: "Authorization (from ${OPENAI_API_KEY})".
func (s spawn) names(kind string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if refs := s.Refs[kind+n]; refs != "" {
			out[i] += " (from " + refs + ")"
		}
	}
	return strings.Join(out, ", ")
}

// quoteArgv shows argv as a shell would read it: words with blanks or
// quotes are single-quoted.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// expand resolves st's ${VAR} references (process environment first, then
// vault secrets), registers every value found for redaction and refuses
// when a name cannot be resolved. It also returns the names it resolved
// from a vault secret or from an environment variable a child would not
// inherit anyway (a credential, as far as tai can tell).
func (b *Bridge) expand(e mcp.Entry) (mcp.Entry, []string, error) {
	var secret []string
	// Literal credentials in the entry are secrets too.
	for k, v := range e.Headers {
		b.store.AddRedaction("header:"+k, v)
	}
	for k, v := range e.Env {
		if credentialName(k) {
			b.store.AddRedaction(k, v)
		}
	}
	lookup := config.Chain(
		func(name string) (string, bool) {
			v, ok := b.opts.Getenv(name)
			if ok && !slices.Contains(mcp.InheritedEnv(), name) {
				b.store.AddRedaction(name, v)
				secret = append(secret, name)
			}
			return v, ok
		},
		func(name string) (string, bool) {
			v, _, err := b.store.SecretGet(name)
			if err != nil {
				return "", false
			}
			b.store.AddRedaction(name, v)
			secret = append(secret, name)
			return v, true
		},
		config.FolderVars(b.opts.Dir),
	)
	out, missing := b.opts.Expand(e, lookup)
	if len(missing) > 0 {
		return e, nil, config.MissingError(e.Name, missing)
	}
	slices.Sort(secret)
	return out, slices.Compact(secret), nil
}

// unattendedSecrets refuses an entry a model adds while nobody is asked
// (--auto, --yolo) when it hands secrets (names) to the command or URL the
// model chose: that would let the model send a vault secret or an API key
// anywhere without a person seeing it.
func (b *Bridge) unattendedSecrets(ctx context.Context, a *engine.Approver, server string, names []string) error {
	if len(names) == 0 || a.Mode() == engine.Interactive {
		return nil
	}
	if _, byModel := engine.AgentFrom(ctx); !byModel {
		return nil
	}
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = "${" + n + "}"
	}
	return fmt.Errorf("refused to start MCP server %s: a model asked under --%s, and the entry passes %s (a secret or credential) to it with nobody asked; a person must add it (/mcp add, or tai.mcp.add)", server, a.Mode(), strings.Join(refs, ", "))
}

// credentialName reports an environment name that holds a credential, as
// the shell's environment policy reads names.
func credentialName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL", "AUTH", "PAT"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// consentSpawn asks before a server is started: in interactive mode a
// person answers (nobody there: refused); --auto consents and tells the
// front end; --yolo consents silently. first says the server is not
// registered yet.
func (b *Bridge) consentSpawn(ctx context.Context, sp spawn, first bool) error {
	a := b.approver(ctx)
	if err := b.attended(ctx, a, "start MCP server "+sp.Server); err != nil {
		return err
	}
	args := map[string]any{"transport": sp.Transport}
	if len(sp.Argv) > 0 {
		args["argv"] = b.store.Redact(quoteArgv(sp.Argv))
	}
	if sp.Cwd != "" {
		args["cwd"] = b.store.Redact(sp.Cwd)
	}
	if sp.URL != "" {
		args["url"] = b.store.Redact(sp.URL)
	}
	if len(sp.Env) > 0 {
		args["env"] = sp.names("env:", sp.Env)
	}
	if len(sp.Headers) > 0 {
		args["headers"] = sp.names("header:", sp.Headers)
	}
	switch a.Mode() {
	case engine.Yolo:
		return nil
	case engine.Auto:
		_, err := a.Approve(ctx, engine.Consent{Tool: "mcp-spawn", Origin: sp.Server, Digest: sp.digest()[:12], Args: args})
		return err
	}
	why := "tai is about to start MCP server " + sp.Server + " for the first time:"
	if !first {
		why = "MCP server " + sp.Server + " would start with a command that differs from the one you consented to:"
	}
	q := why + "\n" + sp.text(b.store.Redact) + "Start it? [y/N]"
	ok, err := a.Decide(ctx, q)
	if err != nil {
		return fmt.Errorf("mcp server %q not started: nobody could consent (%v)", sp.Server, err)
	}
	if !ok {
		return fmt.Errorf("mcp server %q not started: consent was refused", sp.Server)
	}
	return nil
}

// attended refuses what needs a person in a turn a model runs with nobody
// present to consent (a served chat turn): the model cannot consent for a
// person.
func (b *Bridge) attended(ctx context.Context, a *engine.Approver, what string) error {
	if _, byModel := engine.AgentFrom(ctx); byModel && a.Prompter() == nil {
		return fmt.Errorf("refused to %s: a model asked, and nobody is present to consent; a person must do it (tai.mcp or /mcp)", what)
	}
	return nil
}
