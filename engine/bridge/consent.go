package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/screen"
	secretrule "tai/vault/secret"
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
	// Values are the env values shown, by name: every one but a secret's
	// (a credential's name, or built from a vault secret or credential).
	// Shown, not part of the digest.
	Values map[string]string `json:"-"`
	// Proposed is, for an entry a model proposed, what it asks for beyond
	// the default policy (Bridge.beyondDefault): warned about, not part of
	// the digest.
	Proposed []string `json:"-"`
	// Runtime are the env names that change what the server's runtime
	// runs (Bridge.runtimeNames): warned about.
	Runtime []string `json:"-"`
	// RuntimeValues are their values, but a secret's: part of the digest,
	// so a changed NODE_OPTIONS asks again (other values are not, so
	// servers consented to before stay so).
	RuntimeValues map[string]string `json:"runtime_env,omitempty"`
	URL           string            `json:"url,omitempty"`
	Headers       []string          `json:"headers,omitempty"` // names only
	// Sandbox is what the entry says about the sandbox (nil for the
	// default, so a digest from before the field is unchanged).
	Sandbox *mcp.Sandbox `json:"sandbox,omitempty"`
	// RunIn is the folder the server runs in when the entry names a path
	// relative to it (Bridge.runIn): the same entry started from another
	// folder grants other folders, so it is asked about again.
	RunIn string `json:"run_in,omitempty"`
	// Refs are the ${…} references each env variable ("env:NAME") or
	// header ("header:NAME") is built from, as the entry wrote them: shown,
	// not part of the digest.
	Refs map[string]string `json:"-"`
	// Breaks name the fields that hold a line break ("argv[2]", "cwd",
	// "env NAME", "url"): shown as a warning, not part of the digest.
	Breaks []string `json:"-"`
	// Exposed are the secrets the entry puts on the command line or in
	// the URL's query: shown as warnings, not part of the digest.
	Exposed []exposure `json:"-"`
	// OAuth describes the entry's login settings (client id, the secret's
	// reference, callback port): shown, not part of the digest.
	OAuth string `json:"-"`
	// ClientSecret is the ${NAME} reference of the entry's OAuth client
	// secret: shown with a warning of where it goes.
	ClientSecret string `json:"-"`
	// Found says where a resolved entry was found (repository, pass,
	// file, line): shown, not part of the digest.
	Found string `json:"-"`
	// Confined is what the sandbox lets a stdio server do (set by the
	// bridge, see confinementOf): shown, not part of the digest (Sandbox
	// is).
	Confined confinement `json:"-"`
}

// exposure is one secret put where others can read it.
type exposure struct {
	Name  string // the ${…} name
	Kind  string // "a vault secret" or "a credential"
	Query bool   // in the URL's query rather than on the command line
	Shell string // the env variable a shell script reads it through ("" when in argv itself)
}

// spawnOf is the spawn of the expanded entry e, whose references raw (the
// entry as stored) names; secret tells a name whose value is a secret
// (see Bridge.secretKind).
func spawnOf(e, raw mcp.Entry, secret func(string) string, credential func(string) bool) spawn {
	s := spawn{Server: e.Name, Transport: e.Transport, Cwd: e.Cwd, URL: e.URL, Refs: map[string]string{}, OAuth: raw.OAuth.String()}
	if raw.OAuth != nil && e.Transport == mcp.TransportHTTP {
		s.ClientSecret = raw.OAuth.ClientSecret
	}
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
		if !raw.Sandbox.Empty() {
			s.Sandbox = raw.Sandbox
		}
	}
	s.Values = map[string]string{}
	for k, v := range e.Env {
		s.Env = append(s.Env, k)
		if !credential(k) && !secretRefs(raw.Env[k], secret) {
			s.Values[k] = v
		}
	}
	for k := range e.Headers {
		s.Headers = append(s.Headers, k)
	}
	sort.Strings(s.Env)
	sort.Strings(s.Headers)
	for i, w := range s.Argv {
		if screen.LineBreak(w) {
			s.Breaks = append(s.Breaks, fmt.Sprintf("argv[%d]", i))
		}
	}
	if screen.LineBreak(s.Cwd) {
		s.Breaks = append(s.Breaks, "cwd")
	}
	for _, k := range s.Env {
		// the value as the entry wrote it: a secret it names may hold line
		// breaks (a PEM key) with good reason
		if screen.LineBreak(k) || screen.LineBreak(raw.Env[k]) {
			s.Breaks = append(s.Breaks, "env "+screen.VisibleLine(screen.Quote(k)))
		}
	}
	for _, k := range s.Headers {
		if screen.LineBreak(k) {
			s.Breaks = append(s.Breaks, "header "+screen.VisibleLine(screen.Quote(k)))
		}
	}
	if screen.LineBreak(s.URL) {
		s.Breaks = append(s.Breaks, "url")
	}
	argv, query := config.Exposed(raw)
	for _, n := range argv {
		if kind := secret(n); kind != "" && e.Transport == mcp.TransportStdio {
			s.Exposed = append(s.Exposed, exposure{Name: n, Kind: kind})
		}
	}
	for _, r := range config.ThroughShell(raw) {
		if kind := secret(r.Name); kind != "" && e.Transport == mcp.TransportStdio && !slices.Contains(argv, r.Name) {
			s.Exposed = append(s.Exposed, exposure{Name: r.Name, Kind: kind, Shell: r.Var})
		}
	}
	for _, n := range query {
		if kind := secret(n); kind != "" && e.Transport == mcp.TransportHTTP {
			s.Exposed = append(s.Exposed, exposure{Name: n, Kind: kind, Query: true})
		}
	}
	return s
}

// spawnFor is spawnOf with what the bridge knows beside the entry: the
// folder a relative path in it means, and the variables that change what
// its runtime runs.
func (b *Bridge) spawnFor(e, raw mcp.Entry) spawn {
	sp := spawnOf(e, raw, b.secretKind(), b.credential)
	sp.RunIn = b.runIn(e)
	sp.Runtime = b.runtimeNames(e)
	for _, k := range sp.Runtime {
		if v, ok := sp.Values[k]; ok {
			if sp.RuntimeValues == nil {
				sp.RuntimeValues = map[string]string{}
			}
			sp.RuntimeValues[k] = v
		}
	}
	return sp
}

// secretRefs reports a value built from a reference to a secret (a vault
// secret or a credential, as secret tells).
func secretRefs(v string, secret func(string) string) bool {
	for _, r := range config.Refs(v) {
		if secret(r.Name) != "" {
			return true
		}
	}
	return false
}

// digest identifies the spawn (over the expanded values: a changed
// variable that changes the argv asks again). Only the digest is stored,
// so a field that moves it asks about every server again:
// TestDigestStable holds the digests of entries stored before.
func (s spawn) digest() string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// ConsentScreen is what the MCP consent screen tells a person, as facts
// that stdlib/consent.lua lays out (a person's init.lua may lay them out
// otherwise): which server, what will run or be reached, in which folder,
// with which variables, and what to be warned of. Every value is redacted
// of the secrets the vault knows; none is made safe to show yet, which is
// the screen's part.
type ConsentScreen struct {
	Server string `json:"server"`
	// Changed says the server is registered already and would start (or
	// be reached) otherwise than consented to; else it is new, and the
	// question is whether to add it, enabled for Profile or disabled.
	Changed bool   `json:"changed"`
	Profile string `json:"profile,omitempty"`
	// Instructions are what the server says of itself at its handshake,
	// shown first; empty when it said nothing or has not started yet.
	Instructions string `json:"instructions,omitempty"`
	// Found says where a resolved entry was found (repository, pass,
	// file, line).
	Found     string `json:"found,omitempty"`
	Transport string `json:"transport"`
	// Argv is the command line of a stdio server, word by word.
	Argv []string `json:"argv,omitempty"`
	// Cwd is the folder as the entry wrote it, Dir the folder it resolves
	// to ("" when no sandbox resolved it); both empty: tai's own.
	Cwd string `json:"cwd,omitempty"`
	Dir string `json:"dir,omitempty"`
	// Env are the variables a stdio server is given, by name.
	Env []ConsentVar `json:"env,omitempty"`
	// URL is an HTTP server's address; HostNote what to know of its host
	// (mcp.HostNote: its punycode form, mixed scripts).
	URL      string `json:"url,omitempty"`
	HostNote string `json:"host_note,omitempty"`
	// Headers are the headers sent to an HTTP server, by name (values are
	// never shown).
	Headers []ConsentVar `json:"headers,omitempty"`
	// OAuth describes the entry's login settings; ClientSecret is the
	// ${NAME} its OAuth client secret is read from, which goes to an
	// authorization server the server names.
	OAuth        string `json:"oauth,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// Sandbox is what the sandbox lets a stdio server do.
	Sandbox *ConsentSandbox `json:"sandbox,omitempty"`
	// Breaks name the fields that hold a line break ("argv[2]", "cwd",
	// "env 'NAME'", "url"), rendered visibly.
	Breaks []string `json:"breaks,omitempty"`
	// Exposed are the secrets the entry puts where others can read them.
	Exposed []ConsentExposure `json:"exposed,omitempty"`
	// Proposed is, for an entry a model proposed, what it asks for beyond
	// the default policy.
	Proposed []string `json:"proposed,omitempty"`
	// Runtime are the env names that change what the server's runtime
	// runs (NODE_OPTIONS, PYTHONPATH…).
	Runtime []string `json:"runtime,omitempty"`
}

// ConsentVar is one env variable or header of a ConsentScreen.
type ConsentVar struct {
	Name string `json:"name"`
	// Value is the variable's value when Shown (never a header's, never
	// a secret's).
	Value string `json:"value,omitempty"`
	Shown bool   `json:"shown"`
	// From are the ${…} references the value is built from, as the entry
	// wrote them ("${A}, ${B}"); empty when none.
	From string `json:"from,omitempty"`
}

// ConsentSandbox is what the sandbox lets a stdio server do.
type ConsentSandbox struct {
	// Line says it in one line, rendered visibly (see confinement).
	Line string `json:"line"`
	// Loose says the server runs with all of the person's rights; Off
	// that its entry says sandbox = false.
	Loose bool `json:"loose"`
	Off   bool `json:"off"`
	// Notes are what the policy left out and why, and far grants.
	Notes []string `json:"notes,omitempty"`
}

// ConsentExposure is one secret put where others can read it.
type ConsentExposure struct {
	Name  string `json:"name"`  // the ${…} name
	Kind  string `json:"kind"`  // "a vault secret" or "a credential"
	Query bool   `json:"query"` // in the URL's query rather than on the command line
	// Shell is the env variable a shell script reads it through ("" when
	// in argv itself).
	Shell string `json:"shell,omitempty"`
	// EnvName is the name a server would read it under from env, to
	// write instead (config.EnvName).
	EnvName string `json:"env_name"`
}

// screenOf is s as the consent screen is told it, every value redacted.
func (s spawn) screenOf(redact func(string) string) ConsentScreen {
	c := ConsentScreen{Server: s.Server, Transport: s.Transport, Found: redact(s.Found), Breaks: s.Breaks,
		Proposed: s.Proposed, Runtime: s.Runtime}
	from := func(key string) string { return s.Refs[key] }
	if s.Transport != mcp.TransportStdio {
		c.URL = redact(s.URL)
		c.HostNote = mcp.HostNote(s.URL)
		for _, k := range s.Headers {
			c.Headers = append(c.Headers, ConsentVar{Name: redact(k), From: from("header:" + k)})
		}
		c.OAuth, c.ClientSecret = redact(s.OAuth), s.ClientSecret
	} else {
		for _, w := range s.Argv {
			c.Argv = append(c.Argv, redact(w))
		}
		c.Cwd, c.Dir = redact(s.Cwd), redact(s.Confined.Dir)
		for _, k := range s.Env {
			v, shown := s.Values[k]
			c.Env = append(c.Env, ConsentVar{Name: redact(k), Value: redact(v), Shown: shown, From: from("env:" + k)})
		}
		if s.Confined.Line != "" {
			c.Sandbox = &ConsentSandbox{Line: s.Confined.Line, Loose: s.Confined.Loose, Off: s.Sandbox.IsOff(), Notes: s.Confined.Notes}
		}
	}
	for _, x := range s.Exposed {
		c.Exposed = append(c.Exposed, ConsentExposure{Name: x.Name, Kind: x.Kind, Query: x.Query, Shell: x.Shell, EnvName: config.EnvName(x.Name)})
	}
	return c
}

// ScreenFunc lays out a consent screen: the lines saying what will run
// (body), and the whole question a person answers, body included.
type ScreenFunc func(ctx context.Context, s ConsentScreen) (body, question string, err error)

// errNoScreen is why consent cannot be asked when the bridge has no
// screen to ask it on (Options.Screen is nil).
var errNoScreen = errors.New("no consent screen to show it on")

// names lists env or header names on one line, each rendered visibly with
// the references its value is built from: "Authorization (from
// ${OPENAI_API_KEY})".
func (s spawn) names(kind string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = screen.VisibleLine(n)
		if refs := s.Refs[kind+n]; refs != "" {
			out[i] += " (from " + screen.VisibleLine(refs) + ")"
		}
	}
	return strings.Join(out, ", ")
}

// quoteArgv shows argv on one line as a shell would read it (screen.Quote),
// for the consent a front end records.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = screen.Quote(a)
	}
	return strings.Join(out, " ")
}

// secretKind returns a test for a ${…} name whose value is a secret: "a
// vault secret" for a name the vault holds, "a credential" for one named
// like a credential (secret.CredentialName), else "".
func (b *Bridge) secretKind() func(string) string {
	vaulted := map[string]bool{}
	if list, err := b.store.SecretList(); err == nil {
		for _, s := range list {
			vaulted[s.Name] = true
		}
	}
	return func(name string) string {
		switch {
		case vaulted[name]:
			return "a vault secret"
		case b.credential(name):
			return "a credential"
		}
		return ""
	}
}

// literalParts is what of an entry's value is literal: the value itself
// when it references no variable; else each part around its references
// (and in their defaults) long enough to hold a credential, 8 bytes or
// more once trimmed, such as the key in "${USER}:sk-live-…".
func literalParts(v string) []string {
	refs := config.Refs(v)
	if len(refs) == 0 {
		return []string{v}
	}
	var out []string
	for _, r := range refs {
		v = strings.Replace(v, r.Text, "\x00", 1)
		if r.HasDefault {
			out = append(out, literalParts(r.Default)...)
		}
	}
	for _, p := range strings.Split(v, "\x00") {
		if p = strings.TrimSpace(p); len(p) >= 8 {
			out = append(out, p)
		}
	}
	return out
}

// expand resolves st's ${VAR} references (process environment first, then
// vault secrets), registers every value found for redaction and refuses
// when a name cannot be resolved. It also returns the names it resolved
// from a vault secret or from an environment variable a child would not
// inherit anyway (a credential, as far as tai can tell).
func (b *Bridge) expand(e mcp.Entry) (mcp.Entry, []string, error) {
	var secret []string
	// Literal credentials in the entry are secrets too; a reference to a
	// variable is not one (what it resolves to is, below).
	for k, v := range e.Headers {
		for _, l := range literalParts(v) {
			b.store.AddRedaction("header:"+k, l)
		}
	}
	for k, v := range e.Env {
		if b.credential(k) {
			for _, l := range literalParts(v) {
				b.store.AddRedaction(k, l)
			}
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
	// A password in the URL, and a query value named like a credential
	// (?api_key=…), are secrets too: the consent screen, errors and the
	// audit trail show them redacted.
	if u, err := url.Parse(out.URL); err == nil {
		if pw, ok := u.User.Password(); ok {
			b.store.AddRedaction("url-password", pw)
		}
		for k, vs := range u.Query() {
			for _, v := range vs {
				if b.credential(k) {
					b.store.AddRedaction("url-query:"+k, v)
				}
			}
		}
	}
	// An OAuth client secret goes to whichever authorization server the
	// server names: a secret the entry passes, like any other.
	if e.OAuth != nil {
		if name, ok := mcp.SecretRef(e.OAuth.ClientSecret); ok {
			secret = append(secret, name)
		}
	}
	slices.Sort(secret)
	return out, slices.Compact(secret), nil
}

// unattendedSecrets refuses an entry a model adds while nobody is asked
// (--auto, --yolo) when it hands secrets (names) to the command or URL the
// model chose: that would let the model send a vault secret or an API key
// anywhere without a person seeing it.
func (b *Bridge) unattendedSecrets(ctx context.Context, a *tool.Approver, server string, names []string) error {
	if len(names) == 0 || a.Mode() == tool.Interactive {
		return nil
	}
	if !tool.CallerFrom(ctx).ByModel {
		return nil
	}
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = "${" + n + "}"
	}
	return fmt.Errorf("refused to start MCP server %s: a model asked under --%s, and the entry passes %s (a secret or credential) to it with nobody asked; a person must add it (/mcp add, or tai.mcp.add)", server, a.Mode(), strings.Join(refs, ", "))
}

// consentSpawn asks before a server is started: in interactive mode a
// person answers (nobody there: refused); --auto consents and tells the
// front end; --yolo consents silently. It is for a server already
// registered whose command changed; consentAdd asks for a new one.
func (b *Bridge) consentSpawn(ctx context.Context, sp spawn) error {
	sc := sp.screenOf(b.store.Redact)
	sc.Changed = true
	sc.Instructions = b.knownInstructions(sp.Server)
	_, ask, err := b.consentScreen(ctx, sp, sc)
	if err != nil || ask == "" {
		return err
	}
	ok, err := b.approver(ctx).Decide(ctx, ask)
	if err != nil {
		return fmt.Errorf("mcp server %q not started: nobody could consent (%v)", sp.Server, err)
	}
	if !ok {
		return fmt.Errorf("mcp server %q not started: %w", sp.Server, errDeclined)
	}
	return nil
}

// errDeclined is why a server a person said no to was not started.
var errDeclined = errors.New("consent was refused")

// Answers to the question consentAdd asks.
const (
	addNo      = iota // not added
	addEnabled        // added and enabled for the profile
	addOnly           // added, disabled
)

// consentAdd asks before a new server is started and stored, on one
// screen: what will run, then whether to add it enabled for sc.Profile,
// add it disabled, or not at all. In interactive mode a person answers
// (nobody there: refused). --auto and --yolo consent as consentSpawn does
// and return addOnly: enabling is then what the entry itself says. It
// also returns the screen's body under --auto, for the front end to show
// what started.
func (b *Bridge) consentAdd(ctx context.Context, sp spawn, sc ConsentScreen) (int, string, error) {
	body, ask, err := b.consentScreen(ctx, sp, sc)
	if err != nil {
		return addNo, "", err
	}
	if ask == "" {
		return addOnly, body, nil
	}
	answer, err := b.approver(ctx).Ask(ctx, ask)
	if err != nil {
		return addNo, "", fmt.Errorf("mcp server %q not started: nobody could consent (%v)", sp.Server, err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return addEnabled, "", nil
	case "d", "disabled":
		return addOnly, "", nil
	}
	return addNo, "", fmt.Errorf("mcp server %q not started: %w", sp.Server, errDeclined)
}

// consentScreen lays out sc (Options.Screen) and returns the question to
// ask. Under --auto it records the consent and returns the screen's body
// for the front end, with no question; under --yolo it consents silently
// and returns nothing.
func (b *Bridge) consentScreen(ctx context.Context, sp spawn, sc ConsentScreen) (body, question string, err error) {
	a := b.approver(ctx)
	if err := b.attended(ctx, a, "start MCP server "+sp.Server); err != nil {
		return "", "", err
	}
	args := map[string]any{"transport": sp.Transport}
	if len(sp.Argv) > 0 {
		args["argv"] = screen.VisibleLine(b.store.Redact(quoteArgv(sp.Argv)))
	}
	if sp.Cwd != "" {
		args["cwd"] = screen.VisibleLine(b.store.Redact(sp.Cwd))
	}
	if sp.URL != "" {
		args["url"] = screen.VisibleLine(b.store.Redact(sp.URL))
	}
	if len(sp.Env) > 0 {
		args["env"] = sp.names("env:", sp.Env)
	}
	if len(sp.Headers) > 0 {
		args["headers"] = sp.names("header:", sp.Headers)
	}
	if sp.Found != "" {
		args["found"] = b.store.Redact(sp.Found)
	}
	mode := a.Mode()
	if mode == tool.Yolo {
		return "", "", nil
	}
	if b.opts.Screen == nil {
		return "", "", fmt.Errorf("mcp server %q not started: %w", sp.Server, errNoScreen)
	}
	body, question, err = b.opts.Screen(ctx, sc)
	if err != nil {
		return "", "", fmt.Errorf("mcp server %q not started: its consent screen failed: %w", sp.Server, err)
	}
	if mode == tool.Auto {
		_, err := a.Approve(ctx, tool.Consent{Tool: "mcp-spawn", Origin: sp.Server, Digest: sp.digest()[:12], Args: args})
		return body, "", err
	}
	return body, question, nil
}

// attended refuses what needs a person in a turn a model runs with nobody
// present to consent (a served chat turn): the model cannot consent for a
// person.
func (b *Bridge) attended(ctx context.Context, a *tool.Approver, what string) error {
	if tool.CallerFrom(ctx).ByModel && a.Prompter() == nil {
		return fmt.Errorf("refused to %s: a model asked, and nobody is present to consent; a person must do it (tai.mcp or /mcp)", what)
	}
	return nil
}

// credential reports whether name is a credential's by the words in force
// (Options.CredentialWords).
func (b *Bridge) credential(name string) bool {
	if b.opts.CredentialWords != nil {
		if w := b.opts.CredentialWords(); w != nil {
			return secretrule.Credentials(w).Name(name)
		}
	}
	return secretrule.CredentialName(name)
}
