package tool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"tai/engine/llm"
	"tai/mcp"
	"tai/vault"
)

// ResultMax is the largest tool result text kept inline
// (mcp.MCP_RESULT_MAX, 64 KB). A larger result is stored as a vault record
// and the caller gets the record's id and a pointer to record_read instead:
// never a silent truncation.
const ResultMax = mcp.MCP_RESULT_MAX

// spillPreview is how much of a spilled result is still shown inline, as a
// clearly labelled head.
const spillPreview = 2048

// Errors Dispatch returns. Callers test them with errors.Is. A tool that ran
// and failed is not an error: it is a Result with IsError set.
var (
	// ErrUnknownTool reports a name that is neither registered nor known to
	// the fallback.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDenied reports a call the person (or the absence of one) did not
	// approve.
	ErrDenied = errors.New("tool call denied")
)

// Content is one item of a tool result, shaped like an MCP content block.
// Text items carry Text; any other item (an image, a resource) must carry
// its whole JSON in Raw, which is passed through unchanged.
type Content struct {
	Type string
	Text string
	Raw  json.RawMessage
}

// MarshalJSON encodes a text item as {"type":"text","text":…} and any other
// item as its raw JSON.
func (c Content) MarshalJSON() ([]byte, error) {
	return c.appendJSON(nil), nil
}

// appendJSON appends the item as MarshalJSON encodes it; a raw item is
// appended as it is, for the encoder of the whole to check.
func (c Content) appendJSON(b []byte) []byte {
	if c.Type != "text" && len(c.Raw) > 0 {
		return append(b, c.Raw...)
	}
	b = append(b, `{"type":"text","text":`...)
	b = mcp.AppendJSONString(b, c.Text)
	return append(b, '}')
}

// UnmarshalJSON decodes an MCP content block, keeping non-text items raw.
func (c *Content) UnmarshalJSON(b []byte) error {
	var head struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	c.Type = head.Type
	if head.Type == "text" {
		c.Text, c.Raw = head.Text, nil
		return nil
	}
	c.Text = ""
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Result is what a tool returns, shaped like MCP's tools/call result so the
// MCP server can serve it verbatim.
type Result struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

// MarshalJSON encodes the result as MCP's tools/call result; a nil Content
// becomes an empty array, never null.
func (r Result) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(nil), nil
}

// AppendJSON appends the result to b as MarshalJSON encodes it, without
// reflection; raw items are appended as they are, for the encoder of the
// whole to check.
func (r Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendJSON(b)
	}
	b = append(b, ']')
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}')
}

// TextResult returns a successful result holding one text item.
func TextResult(text string) Result {
	return Result{Content: []Content{{Type: "text", Text: text}}}
}

// ErrorResult returns a failed result (IsError) holding one text item.
func ErrorResult(format string, a ...any) Result {
	return Result{Content: []Content{{Type: "text", Text: fmt.Sprintf(format, a...)}}, IsError: true}
}

// Text joins the result's text items with newlines; non-text items appear
// as their JSON.
func (r Result) Text() string {
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		if c.Type == "text" || len(c.Raw) == 0 {
			b.WriteString(c.Text)
		} else {
			b.Write(c.Raw)
		}
	}
	return b.String()
}

// Size is how many bytes the result's items hold (text and raw JSON).
func (r Result) Size() int {
	n := 0
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Raw)
	}
	return n
}

// Tool is one tool the model (or a script) can call.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // JSON Schema, root type object
	// Safe marks a read-only tool that runs without approval.
	Safe bool
	// Run does the work. A failure of the work itself is a Result with
	// IsError; a Go error means the call could not be made at all. Run may
	// be called from several goroutines at once (an agent runs the calls
	// of one answer concurrently), so a tool backed by something
	// single-threaded, such as a Lua state, must serialize itself.
	Run func(ctx context.Context, args map[string]any) (Result, error)
	// Origin names where a bridged tool really lives, as "server/tool".
	// Empty for native tools. It is shown at consent and audited as an
	// "mcp-call".
	Origin string
	// Sensitive names arguments whose values are never shown: consent
	// screens and tool events see "[hidden]" instead (secret_set's value).
	Sensitive []string
	// Check, when set, says before approval why a call cannot succeed
	// (edit_file: old_string not in the file): such a call is answered
	// with the error and nobody is asked. Run must still check for itself.
	Check func(args map[string]any) error
	// Unavailable, when set, says before approval why the session calling
	// in ctx cannot use the tool at all (a bridged tool whose server is not
	// enabled for the session's profile), or "": such a call is answered
	// with the reason and nobody is asked.
	Unavailable func(ctx context.Context) string
	// AuditKind is the kind the audit trail files the tool's calls under;
	// empty means "tool", or "mcp-call" for a bridged one (Origin set).
	AuditKind string
	// Decides marks a tool that puts its own question to the person
	// (Approver.Decide) in every mode, --auto and --yolo included, and
	// refuses when nobody can answer; the registry then does not ask for
	// approval first, so the person is asked once.
	Decides bool
}

// hiddenArg replaces a sensitive argument's value wherever arguments are
// shown.
const hiddenArg = vault.Hidden

// ShownArgs returns args as they may be shown to a person: sensitive
// arguments hidden and known secret values redacted (inside every string,
// however the arguments are later encoded). args is not modified.
// When the vault's secrets cannot be read, every string that could hold
// one is withheld.
func (r *Registry) ShownArgs(t Tool, args map[string]any) map[string]any {
	return shownArgs(r.redactFunc(), t, args)
}

// CallDigest is the digest of a call as consent shows it and the audit
// trail keeps it: over the shown arguments, so neither a sensitive value
// nor a known secret can be recovered from it by hashing guesses.
func (r *Registry) CallDigest(t Tool, args map[string]any) string {
	return Digest(r.ShownArgs(t, args))
}

func shownArgs(redact func(string) string, t Tool, args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for _, k := range t.Sensitive {
		if _, ok := out[k]; ok {
			out[k] = hiddenArg
		}
	}
	shown, _ := vault.RedactValue(redact, out)
	return shown.(map[string]any)
}

// Spec returns the tool as offered to a model.
func (t Tool) Spec() llm.ToolSpec {
	params := t.Parameters
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params}
}

// Fallback resolves a tool the registry does not hold (the MCP bridge
// answers for mcp_* names). It reports false for a name it does not know.
type Fallback func(name string) (Tool, bool)

// SpecSource lists tools the registry does not hold but the model may be
// offered (the MCP bridge's cached schemas) to a session on profile (empty:
// the default profile, for callers with no session). Dispatch reaches them
// through the Fallback. It is called once per selection, so it should
// return a cached slice; the word index over it is rebuilt only when a
// name or description changes.
type SpecSource func(profile string) []llm.ToolSpec

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidToolName reports whether name can be offered to every provider:
// 1–64 of letters, digits, '_' and '-'.
func ValidToolName(name string) error {
	if !toolNameRE.MatchString(name) {
		return fmt.Errorf("tool name %q is not valid: use 1–64 letters, digits, '_' or '-'", name)
	}
	return nil
}

// Registry holds the tools and runs them: Dispatch resolves a name, asks
// for approval, runs the tool, appends an audit entry, redacts the result
// and spills it to a vault record when it is too large. It is safe for
// concurrent use; tools may be added and removed at run time.
type Registry struct {
	store    *vault.Store
	approver *Approver
	now      func() time.Time

	mu       sync.RWMutex
	tools    map[string]*Tool
	fallback Fallback
	source   SpecSource
	index    *wordIndex  // over the registered tools, rebuilt lazily
	extra    *extraIndex // over the SpecSource's tools, refreshed per selection
}

// NewRegistry returns an empty registry that audits, redacts and spills
// through store. Calls whose Caller has an approver are approved by it; approver decides the others, and a nil one
// denies every non-safe call. It panics on a nil store: without one nothing could
// be redacted or audited.
func NewRegistry(store *vault.Store, approver *Approver) *Registry {
	if store == nil {
		panic("engine: NewRegistry needs a vault store")
	}
	if approver == nil {
		approver = NewApprover(Interactive, nil)
	}
	return &Registry{
		store:    store,
		approver: approver,
		now:      time.Now,
		tools:    map[string]*Tool{},
		extra:    &extraIndex{},
	}
}

// Store returns the vault the registry audits, redacts and spills
// through.
func (r *Registry) Store() *vault.Store { return r.store }

// Approver returns the registry's own approver: the one that decides calls
// made by a caller with none of its own (see Caller.Approver).
func (r *Registry) Approver() *Approver { return r.approver }

// ApproverFor returns the approver that decides a call made in ctx: its
// caller's, else the registry's own.
func (r *Registry) ApproverFor(ctx context.Context) *Approver {
	return r.approverOf(CallerFrom(ctx))
}

func (r *Registry) approverOf(c Caller) *Approver {
	if c.Approver != nil {
		return c.Approver
	}
	return r.approver
}

// Lookup is Get as Prepare resolves a name for the caller of ctx: the
// caller's own tools come first; for a NativeOnly caller only registered
// native tools resolve, never the fallback's bridged ones.
func (r *Registry) Lookup(ctx context.Context, name string) (Tool, bool) {
	return r.lookup(CallerFrom(ctx), name)
}

func (r *Registry) lookup(c Caller, name string) (Tool, bool) {
	if t, ok := c.Own[name]; ok {
		return t, true
	}
	if !c.NativeOnly {
		return r.Get(name)
	}
	r.mu.RLock()
	t, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok || t.Origin != "" {
		return Tool{}, false
	}
	return *t, true
}

// Add registers t, replacing any tool of the same name.
func (r *Registry) Add(t Tool) error {
	if err := ValidToolName(t.Name); err != nil {
		return err
	}
	if t.Run == nil {
		return fmt.Errorf("tool %q has no run function", t.Name)
	}
	if t.Parameters != nil {
		if typ, _ := t.Parameters["type"].(string); typ != "object" {
			return fmt.Errorf("tool %q: parameters must be a JSON Schema with type \"object\"", t.Name)
		}
	}
	tt := t
	r.mu.Lock()
	r.tools[t.Name] = &tt
	r.index = nil
	r.mu.Unlock()
	return nil
}

// Remove unregisters the named tool and reports whether it was there.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tools[name]
	delete(r.tools, name)
	if ok {
		r.index = nil
	}
	return ok
}

// SetFallback installs the resolver Dispatch consults for names it does not
// hold. Nil removes it.
func (r *Registry) SetFallback(f Fallback) {
	r.mu.Lock()
	r.fallback = f
	r.mu.Unlock()
}

// SetSpecSource installs the provider of extra tool specs SelectTools and
// Search consider beside the registered tools. Nil removes it.
func (r *Registry) SetSpecSource(s SpecSource) {
	r.mu.Lock()
	r.source = s
	r.mu.Unlock()
}

// Get returns the tool registered (or resolvable through the fallback) as
// name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	t, ok := r.tools[name]
	fb := r.fallback
	r.mu.RUnlock()
	if ok {
		return *t, true
	}
	if fb != nil {
		if t, ok := fb(name); ok && t.Run != nil {
			return t, true
		}
	}
	return Tool{}, false
}

// NativeTools returns the registered tools that are not bridged from an MCP
// server (Origin empty), sorted by name: what tai may serve as its own.
func (r *Registry) NativeTools() []Tool {
	var out []Tool
	for _, t := range r.Tools() {
		if t.Origin == "" {
			out = append(out, t)
		}
	}
	return out
}

// Tools returns the registered tools sorted by name (without the fallback's).
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, *t)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Specs returns every tool spec a model could be offered: the registered
// tools and the SpecSource's, sorted by name.
func (r *Registry) Specs() []llm.ToolSpec {
	tools := r.Tools()
	out := make([]llm.ToolSpec, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		out = append(out, t.Spec())
		seen[t.Name] = true
	}
	r.mu.RLock()
	src := r.source
	r.mu.RUnlock()
	if src != nil {
		for _, s := range src("") {
			if !seen[s.Name] {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Digest returns the short hex sha256 of args in canonical JSON (object
// keys sorted). Consent and the audit trail show it over the arguments as
// shown (see Registry.ShownArgs), never over secret values.
func Digest(args map[string]any) string {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte(fmt.Sprint(args))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Call is one approved tool call, ready to run. Prepare makes it; Run runs
// it. Splitting the two lets an agent ask for every approval of one answer
// in order and then run the approved calls concurrently.
type Call struct {
	reg    *Registry
	tool   Tool
	args   map[string]any
	digest string
	// session names the calling session in the audit trail.
	session string
	// invalid, when set, is why the arguments cannot be used: Run answers
	// it as an error result without running the tool.
	invalid error
}

// Tool returns the tool the call will run.
func (c *Call) Tool() Tool { return c.tool }

// Digest returns the argument digest of the call.
func (c *Call) Digest() string { return c.digest }

// Prepare resolves name (registered tools first, then the fallback) and
// obtains approval for a non-safe tool. A call with arguments the tool's
// schema refuses (see additionalProperties) is prepared without approval
// and answers an error result naming them. A name that is not a tool name
// as MCP defines it (see mcp.CheckToolName) is refused before any lookup.
// Unknown and refused names return an error wrapping ErrUnknownTool,
// refusals one wrapping ErrDenied; all are audited. Nothing runs while the vault holds sealed secrets it cannot
// decrypt (see vault.Store.RedactionReady): the error then wraps
// vault.ErrNoPassphrase or vault.ErrWrongPassphrase. A call the person
// makes themselves (see ByPerson) is not asked about again.
func (r *Registry) Prepare(ctx context.Context, name string, args map[string]any) (*Call, error) {
	if args == nil {
		args = map[string]any{}
	}
	caller := CallerFrom(ctx)
	session := caller.Name
	if err := mcp.CheckToolName(name); err != nil {
		// Refused before any lookup: the audit entry keeps a capped
		// subject and no digest of arguments nothing will use.
		aerr := r.audit(session, Tool{Name: name}, "", "invalid", 0, 0)
		return nil, withAuditNote(fmt.Errorf("%w: %v", ErrUnknownTool, err), aerr)
	}
	t, ok := r.lookup(caller, name)
	if !ok {
		t = Tool{Name: name}
	}
	// One look at the vault's secrets serves the whole preparation. The
	// digest is over the shown arguments, so neither a sensitive value nor
	// a known secret can be recovered from it by hashing guesses.
	red, rerr := r.store.Redactor()
	redact := red.Redact
	if rerr != nil {
		redact = withholdAll(rerr)
	}
	shown := shownArgs(redact, t, args)
	digest := Digest(shown)
	if rerr != nil {
		// Redaction cannot know the secrets (sealed without the key, the
		// vault locked or unreadable): no tool output may reach a model
		// (or a person) until it can.
		aerr := r.audit(session, t, digest, "refused", 0, 0)
		return nil, withAuditNote(fmt.Errorf("tool %s not run: %w", name, rerr), aerr)
	}
	if !ok {
		aerr := r.audit(session, t, digest, "unknown", 0, 0)
		return nil, withAuditNote(fmt.Errorf("%w %q: it is not registered; list the available tools with tool_search", ErrUnknownTool, name), aerr)
	}
	if err := checkArgNames(t, args); err != nil {
		// Nothing will run, so nobody is asked: Run answers the error.
		return &Call{reg: r, tool: t, args: args, digest: digest, session: session, invalid: err}, nil
	}
	if t.Unavailable != nil {
		if why := t.Unavailable(ctx); why != "" {
			return &Call{reg: r, tool: t, args: args, digest: digest, session: session, invalid: errors.New(why)}, nil
		}
	}
	if !t.Safe && !t.Decides && !caller.PersonsOwn() {
		ok, err := r.approverOf(caller).Approve(ctx, Consent{Tool: t.Name, Origin: t.Origin, Digest: digest, Args: shown})
		if err != nil || !ok {
			aerr := r.audit(session, t, digest, "denied", 0, 0)
			if err != nil && ctx.Err() != nil {
				// Interrupted while asked: the prompter's own error text
				// (a Lua traceback) is no reason the model should see.
				return nil, withAuditNote(fmt.Errorf("%w: %s (%s): the turn was interrupted while the person was asked", ErrDenied, t.Name, digest), aerr)
			}
			if err != nil {
				return nil, withAuditNote(fmt.Errorf("%w: %s (%s): %v", ErrDenied, t.Name, digest, err), aerr)
			}
			return nil, withAuditNote(fmt.Errorf("%w: %s (%s) was not approved", ErrDenied, t.Name, digest), aerr)
		}
	}
	return &Call{reg: r, tool: t, args: args, digest: digest, session: session}, nil
}

// Run runs the prepared call, audits it, redacts the result and spills it to
// a vault record when its text exceeds ResultMax.
func (c *Call) Run(ctx context.Context) (Result, error) {
	r := c.reg
	start := r.now()
	var res Result
	var err error
	if c.invalid != nil {
		res = ErrorResult("%v", c.invalid)
	} else {
		res, err = runTool(ctx, c.tool, c.args)
	}
	dur := r.now().Sub(start)
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "error"
		if ctx.Err() != nil {
			outcome = "cancelled"
		}
	case res.IsError:
		outcome = "error"
	}
	red, rerr := r.store.Redactor()
	if rerr != nil {
		// The secrets cannot be read now: neither the result nor an error
		// that might repeat one may go back.
		aerr := r.audit(c.session, c.tool, c.digest, "withheld", dur, 0)
		return Result{}, withAuditNote(fmt.Errorf("tool %s ran but its result is withheld: %w", c.tool.Name, rerr), aerr)
	}
	if err != nil {
		aerr := r.audit(c.session, c.tool, c.digest, outcome, dur, 0)
		return Result{}, withAuditNote(mcp.Reworded(err, "tool "+c.tool.Name+": "+cutError(red, red.Redact(unechoArgs(err.Error(), c.args)))), aerr)
	}
	if res.IsError {
		for i := range res.Content {
			res.Content[i].Text = unechoArgs(res.Content[i].Text, c.args)
		}
	}
	res = redactResult(red.Func(), res)
	size := res.Size()
	res, spillErr := r.spill(c.tool, c.digest, res)
	if aerr := r.audit(c.session, c.tool, c.digest, outcome, dur, size); aerr != nil {
		if spillErr != nil {
			return Result{}, withAuditNote(spillErr, aerr)
		}
		// The call happened; say plainly that the trail missed it.
		res.Content = append(res.Content, Content{Type: "text", Text: "[warning: " + auditNote(aerr) + "]"})
	}
	if spillErr != nil {
		return Result{}, spillErr
	}
	return res, nil
}

// unechoMin is the shortest argument unechoArgs replaces: shorter ones are
// ordinary words too often ("pipe" in "named pipe").
const unechoMin = 8

// unechoArgs replaces, in the text of a failure, every string argument the
// caller gave (unechoMin bytes or more, as given and as a cleaned path)
// with <name>. An error that repeats a guessed path would otherwise
// confirm the guess when redaction turns it into [REDACTED:…]; replacing
// every argument alike shows nothing either way.
func unechoArgs(text string, args map[string]any) string {
	type arg struct{ name, value string }
	var list []arg
	for k, v := range args {
		sv, ok := v.(string)
		if !ok || len(sv) < unechoMin {
			continue
		}
		list = append(list, arg{k, sv})
		if c := filepath.Clean(sv); c != sv && len(c) >= unechoMin {
			list = append(list, arg{k, c})
		}
	}
	// Longest first, so an argument inside another is not replaced first.
	sort.Slice(list, func(i, j int) bool { return len(list[i].value) > len(list[j].value) })
	for _, a := range list {
		text = strings.ReplaceAll(text, a.value, "<"+a.name+">")
	}
	return text
}

func auditNote(aerr error) string {
	return "the audit trail could not record this call: " + aerr.Error()
}

// withAuditNote adds a failed audit append to err's message.
func withAuditNote(err, aerr error) error {
	if aerr == nil {
		return err
	}
	return fmt.Errorf("%w (%s)", err, auditNote(aerr))
}

// runTool runs t, turning a panic in the tool into an error result so one
// faulty tool (a Lua one, say) cannot take the process down.
func runTool(ctx context.Context, t Tool, args map[string]any) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = ErrorResult("tool %s failed: %v", t.Name, p), nil
		}
	}()
	return t.Run(ctx, args)
}

// Dispatch runs the named tool with args: approval, run, audit, redaction,
// spill. It is the one path every caller (the agent, scripts, the MCP
// server) uses.
func (r *Registry) Dispatch(ctx context.Context, name string, args map[string]any) (Result, error) {
	c, err := r.Prepare(ctx, name, args)
	if err != nil {
		return Result{}, err
	}
	return c.Run(ctx)
}

// Redact redacts one string with the current Redactor; withheld whole
// when the secrets cannot be read. A result takes one Redactor for all its
// strings instead.
func (r *Registry) Redact(s string) string {
	return r.redactFunc()(s)
}

// redactFunc returns the current Redactor's Redact, or, when the secrets
// cannot be read, a function that withholds every string long enough to
// hold one.
func (r *Registry) redactFunc() func(string) string {
	red, err := r.store.Redactor()
	if err != nil {
		return withholdAll(err)
	}
	return red.Redact
}

// MaxErrorText caps the text of a tool's failure that goes back to the
// model (a server's JSON-RPC error message can be megabytes): results are
// spilled to records, errors are cut.
const MaxErrorText = 8 << 10

// cutError cuts error text, redacted by red, to MaxErrorText, saying how
// much was dropped; a [REDACTED:name] mark red wrote is never cut in two
// (see vault.Redactor.Cut).
func cutError(red *vault.Redactor, text string) string {
	if len(text) <= MaxErrorText {
		return text
	}
	n := red.Cut(text, MaxErrorText)
	// Not inside a character: back to its first byte.
	for i := 1; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(text[n]); i++ {
		n--
	}
	kept := text[:n]
	return fmt.Sprintf("%s … (%d bytes more were cut)", kept, len(text)-len(kept))
}

// withholdAll returns a redaction that withholds every string that could
// hold a secret, naming err.
func withholdAll(err error) func(string) string {
	note := vault.Withheld(err)
	return func(s string) string {
		if len(s) < vault.MinRedactLen {
			return s
		}
		return note
	}
}

// redactResult redacts every item of res with redact.
func redactResult(redact func(string) string, res Result) Result {
	out := Result{IsError: res.IsError, Content: make([]Content, len(res.Content))}
	for i, c := range res.Content {
		c.Text = redact(c.Text)
		if len(c.Raw) > 0 {
			c.Raw = redactJSON(redact, c.Raw)
		}
		out.Content[i] = c
	}
	return out
}

// redactJSON redacts every string (keys too) inside a JSON value. The JSON
// text itself cannot be redacted as text: an encoder may have escaped a
// secret's & < > (as \u0026…), hiding it from a plain match. Numbers keep
// their digits. Text that is not JSON is redacted as text.
func redactJSON(redact func(string) string, raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return json.RawMessage(redact(string(raw)))
	}
	v, changed := vault.RedactValue(redact, v)
	if !changed {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(redact(string(raw)))
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n"))
}

// RedactValue returns v, a JSON-like value (what a Lua tool returned, say),
// with every string in it (keys too) redacted with one look at the vault's
// secrets, before anything encodes it: an encoder may escape a secret's
// & < > and hide it from a later match. v is not modified. When the
// secrets cannot be read it returns the error naming the cause.
func (r *Registry) RedactValue(v any) (any, error) {
	red, err := r.store.Redactor()
	if err != nil {
		return nil, err
	}
	out, _ := vault.RedactValue(red.Func(), v)
	return out, nil
}

// spill stores a result whose text exceeds ResultMax as a vault record and
// returns a result that names the record.
func (r *Registry) spill(t Tool, digest string, res Result) (Result, error) {
	size := res.Size()
	if size <= ResultMax {
		return res, nil
	}
	text := res.Text()
	id, err := r.store.RecordPut(text, map[string]any{"tool": t.Name, "digest": digest, "isError": res.IsError})
	if err != nil {
		return Result{}, fmt.Errorf("tool %s: result of %d bytes exceeds %d and could not be stored: %v", t.Name, size, ResultMax, err)
	}
	head := text
	if len(head) > spillPreview {
		head = head[:spillPreview]
		for len(head) > 0 && !utf8.ValidString(head) {
			head = head[:len(head)-1]
		}
	}
	note := fmt.Sprintf("The result is %d bytes, over the inline limit of %d, so it was stored as record %s. "+
		"Read it in parts with record_read {\"id\": %q, \"offset\": 0, \"length\": 16384}.\n"+
		"First %d bytes:\n%s", len(text), ResultMax, id, id, len(head), head)
	return Result{Content: []Content{{Type: "text", Text: note}}, IsError: res.IsError}, nil
}

// audit appends one entry to the trail. Its error is reported alongside
// the call's outcome, never in place of it: a finished call stays finished.
func (r *Registry) audit(session string, t Tool, digest, outcome string, dur time.Duration, size int) error {
	kind, subject := "tool", t.Name
	switch {
	case t.AuditKind != "":
		kind = t.AuditKind
	case t.Origin != "":
		kind, subject = "mcp-call", t.Origin
	}
	_, err := r.store.AuditAppend(vault.AuditEntry{
		Time: r.now(), Kind: kind, Subject: subject, Digest: digest,
		Outcome: outcome, Duration: dur, Size: size, Session: session,
	})
	return err
}
