package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"tai/mcp"
	"tai/vault"
)

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
		aerr := r.audit(nil, session, Tool{Name: name}, "", "invalid", 0, 0)
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
		aerr := r.audit(nil, session, t, digest, "refused", 0, 0)
		return nil, withAuditNote(fmt.Errorf("tool %s not run: %w", name, rerr), aerr)
	}
	if !ok {
		aerr := r.audit(red, session, t, digest, "unknown", 0, 0)
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
			aerr := r.audit(red, session, t, digest, vault.OutcomeDenied, 0, 0)
			if err != nil && ctx.Err() != nil {
				// Interrupted while asked: the prompter's own error text
				// (a Lua traceback) is no reason the model should see.
				return nil, withAuditNote(fmt.Errorf("%w: %s: the turn was interrupted while the person was asked", ErrDenied, t.Name), aerr)
			}
			if err != nil {
				return nil, withAuditNote(fmt.Errorf("%w: %s: %w", ErrDenied, t.Name, err), aerr)
			}
			return nil, withAuditNote(fmt.Errorf("%w: %s was not approved", ErrDenied, t.Name), aerr)
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
	outcome := vault.OutcomeOK
	switch {
	case err != nil:
		outcome = vault.OutcomeError
		if ctx.Err() != nil {
			outcome = vault.OutcomeCancelled
		}
	case res.IsError:
		outcome = vault.OutcomeError
	}
	red, rerr := r.store.Redactor()
	if rerr != nil {
		// The secrets cannot be read now: neither the result nor an error
		// that might repeat one may go back.
		aerr := r.audit(nil, c.session, c.tool, c.digest, "withheld", dur, 0)
		return Result{}, withAuditNote(fmt.Errorf("tool %s ran but its result is withheld: %w", c.tool.Name, rerr), aerr)
	}
	if err != nil {
		aerr := r.audit(red, c.session, c.tool, c.digest, outcome, dur, 0)
		return Result{}, withAuditNote(mcp.Reworded(err, "tool "+c.tool.Name+": "+cutError(red, red.Redact(unechoArgs(err.Error(), c.args)))), aerr)
	}
	if res.IsError {
		for i := range res.Content {
			res.Content[i].Text = unechoArgs(res.Content[i].Text, c.args)
		}
	}
	res = redactResult(red.Func(), res)
	size := res.Bytes()
	res, spillErr := r.spill(c.tool, c.digest, res)
	if aerr := r.audit(red, c.session, c.tool, c.digest, outcome, dur, size); aerr != nil {
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

// audit appends one entry to the trail, redacted by red (the call's look
// at the secrets; nil when it had none). Its error is reported alongside
// the call's outcome, never in place of it: a finished call stays finished.
func (r *Registry) audit(red *vault.Redactor, session string, t Tool, digest, outcome string, dur time.Duration, size int) error {
	kind, subject := "tool", t.Name
	switch {
	case t.AuditKind != "":
		kind = t.AuditKind
	case t.Origin != "":
		kind, subject = "mcp-call", t.Origin
	}
	_, err := r.store.AuditAppendWith(red, vault.AuditEntry{
		Time: r.now(), Kind: kind, Subject: subject, Digest: digest,
		Outcome: outcome, Duration: dur, Size: size, Session: session,
	})
	return err
}
