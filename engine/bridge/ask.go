package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/elicit"
	"tai/mcp/oauth"
	"tai/mcp/pathrule"
)

// What a server may ask tai in the middle of a call, and who answers:
//
//   - elicitation/create: the person of the call (tool.Registry.Answerer),
//     through the prompter's Elicit (the REPL's questions, or the
//     script's tai.mcp.on_elicit); nobody under --auto, --yolo, in a
//     served session or without a terminal, and then it is declined at
//     once and the call's line says so (tool.Note). One tied to no one
//     call (several in flight on a stdio server) goes to their person
//     when they share one (see answererOf).
//   - roots/list: nobody is asked; the answer is the folders the
//     server's sandbox grants (see rootsOf).
//   - sampling/createMessage: the person of the call, through the
//     prompter's ReviewSample and ReviewAnswer (tool.Sampler), when the
//     bridge has a model to answer with (Options.Sample); refused as
//     elicitation is declined, and rate-limited per server (see sample).

// DefaultURLWait bounds how long a call that a server refused with -32042
// waits, once the person opened the URL, for the server's
// notifications/elicitation/complete before it is sent again anyway.
const DefaultURLWait = 5 * time.Minute

// maxAwaited bounds the URL elicitations one connection remembers
// waiting for their notifications/elicitation/complete.
const maxAwaited = 64

// urlAsks holds a connection's URL elicitations the person accepted, by
// elicitationId, until the server says they are complete.
type urlAsks struct {
	mu      sync.Mutex
	awaited map[string]chan struct{}
}

// await returns the channel closed when id completes (nil when too many
// are awaited already).
func (a *urlAsks) await(id string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch, ok := a.awaited[id]; ok {
		return ch
	}
	if a.awaited == nil {
		a.awaited = map[string]chan struct{}{}
	}
	if len(a.awaited) >= maxAwaited {
		return nil
	}
	ch := make(chan struct{})
	a.awaited[id] = ch
	return ch
}

// complete handles notifications/elicitation/complete: an id tai awaits
// is done; any other (unknown, or done already) is ignored, as the spec
// says.
func (a *urlAsks) complete(_ context.Context, params json.RawMessage) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch, ok := a.awaited[p.ElicitationID]; ok {
		close(ch)
		delete(a.awaited, p.ElicitationID)
	}
}

// serverAsks lays over o the method table of a connection to e's server:
// elicitation/create, roots/list, sampling/createMessage (when
// Options.Sample is set) and notifications/elicitation/complete.
func (b *Bridge) serverAsks(o *mcp.ClientOptions, cn *conn, e mcp.Entry) {
	requests := make(map[string]mcp.RequestHandler, len(o.Requests)+2)
	for k, v := range o.Requests {
		requests[k] = v
	}
	notes := make(map[string]mcp.NotificationHandler, len(o.Notifications)+1)
	for k, v := range o.Notifications {
		notes[k] = v
	}
	requests[mcp.MethodElicitationCreate] = func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		req, err := elicit.ParseRequest(params)
		if err != nil {
			return nil, &mcp.WireError{Code: mcp.CodeInvalidParams, Message: err.Error()}
		}
		return json.Marshal(b.elicit(ctx, e.Name, cn, req))
	}
	requests[mcp.MethodRootsList] = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		// The entry as it is now: a grant made while the server runs
		// (with no Landlock to restart it for) is among its roots.
		now := e
		if s, err := b.reload(); err == nil && s.servers[e.Name] != nil {
			if x, _, err := b.expand(s.servers[e.Name].entry); err == nil {
				now = x
			}
		}
		return mcp.RootsResult(b.rootsOf(now)), nil
	}
	if b.opts.Sample != nil {
		// A connection made without a pooled conn (registration) declares
		// sampling too, so the server lists the same tools.
		window := &sampleWindow{}
		if cn != nil {
			window = &cn.sampled
		}
		requests[mcp.MethodSamplingCreateMessage] = func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return b.sample(ctx, e.Name, window, params)
		}
	}
	if cn != nil {
		notes[mcp.MethodElicitationComplete] = cn.asked.complete
	}
	o.Requests, o.Notifications = requests, notes
}

// elicit puts one elicitation to whoever answers for the call in ctx and
// returns the answer to send. A form tai cannot show, a URL it will not
// open, nobody to ask or an answer the form refuses is declined, and the
// call's line says why; a URL the person accepts is opened in their
// browser.
func (b *Bridge) elicit(ctx context.Context, server string, cn *conn, req elicit.Request) elicit.Result {
	decline := elicit.Result{Action: elicit.Decline}
	who, note := b.answererOf(ctx)
	// What the server wrote is shown with the vault's secrets redacted,
	// as its results are.
	q := elicit.Question{Server: server, Message: b.store.Redact(req.Message), ID: req.ElicitationID}
	what := "for a form"
	switch req.Mode {
	case elicit.ModeURL:
		what = "to open a URL"
		link, err := elicit.ParseLink(req.URL)
		if err != nil {
			note(fmt.Sprintf("%s asked %s, declined: %v", server, what, err))
			return decline
		}
		q.Link = &link
	default:
		form, err := elicit.ParseForm(req.RequestedSchema)
		if err != nil {
			note(fmt.Sprintf("%s: %v; declined", server, err))
			return decline
		}
		for i := range form.Fields {
			f := &form.Fields[i]
			f.Title, f.Description = b.store.Redact(f.Title), b.store.Redact(f.Description)
		}
		q.Form = form
	}
	var res elicit.Result
	err := who.Ask(ctx, func(p tool.Prompter) error {
		e, ok := p.(tool.Elicitor)
		if !ok {
			return &tool.ErrNobody{Refusal: tool.RefusedNoTerminal}
		}
		var err error
		res, err = e.Elicit(ctx, q)
		return err
	})
	var nobody *tool.ErrNobody
	switch {
	case errors.As(err, &nobody):
		msg := fmt.Sprintf("%s asked %s, declined: %s", server, what, nobody.Refusal)
		note(msg)
		return decline
	case ctx.Err() != nil:
		return elicit.Result{Action: elicit.Cancel}
	case err != nil:
		note(fmt.Sprintf("%s asked %s, declined: %s", server, what, b.shown(err.Error())))
		return decline
	}
	switch {
	case res.Action != elicit.Accept:
		res.Content = nil
	case q.Form != nil:
		content, err := q.Form.Content(res.Content)
		if err != nil {
			note(fmt.Sprintf("%s asked %s, declined: the answer does not fit it: %v", server, what, err))
			return decline
		}
		res.Content = content
	default:
		res.Content = nil
		if cn != nil && q.ID != "" {
			cn.asked.await(q.ID)
		}
		open := b.opts.OpenURL
		if open == nil {
			open = oauth.OpenBrowser
		}
		if err := open(q.Link.URL); err != nil {
			note(fmt.Sprintf("could not open a browser (%v): open %s yourself", err, q.Link.URL))
		} else {
			note("opened " + q.Link.URL + " in your browser")
		}
	}
	return res
}

// answererOf returns who answers a request a server sent with ctx, and
// how to say what came of it. A request of one call is answered by that
// call's person and said on its line. One that belongs to no one call
// (several calls in flight on a stdio server) is answered by the person
// of the calls in flight when they all have the same one (else nobody),
// and said on each of their lines. One that came while no call was in
// flight is declined, and said as a warning: no call's line to say it on.
func (b *Bridge) answererOf(ctx context.Context) (tool.Answerer, func(string)) {
	if who := b.reg.Answerer(ctx); who.Refusal != tool.RefusedNoCall {
		return who, func(text string) { tool.Note(ctx, text) }
	}
	calls := mcp.CallsInFlight(ctx)
	if len(calls) == 0 {
		return tool.Answerer{Refusal: tool.RefusedNoCall}, func(text string) {
			if b.opts.Client != nil && b.opts.Client.OnWarning != nil {
				b.opts.Client.OnWarning(text)
			}
		}
	}
	return b.reg.AnswererOf(calls), func(text string) {
		for _, c := range calls {
			tool.Note(c, text)
		}
	}
}

// urlsRequired runs the URL elicitations a -32042 error lists, one
// after the other, then waits for the server to say each is complete
// (up to URLWait, or the call's end). It reports whether the call should
// be sent again: every one was accepted.
func (b *Bridge) urlsRequired(ctx context.Context, server string, cn *conn, we *mcp.WireError) bool {
	reqs, err := elicit.Required(we.Data)
	if err != nil {
		tool.Note(ctx, fmt.Sprintf("%s needs a URL opened first, but %v", server, err))
		return false
	}
	var waits []chan struct{}
	for _, req := range reqs {
		var ch chan struct{}
		if cn != nil {
			ch = cn.asked.await(req.ElicitationID)
		}
		if res := b.elicit(ctx, server, cn, req); res.Action != elicit.Accept {
			return false
		}
		if ch != nil {
			waits = append(waits, ch)
		}
	}
	wait := b.opts.URLWait
	if wait <= 0 {
		wait = DefaultURLWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-timer.C:
			tool.Note(ctx, fmt.Sprintf("%s did not say the browser step was complete within %v; tai sent the call again", server, wait))
			return true
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// rootsOf returns the roots of e's server (e expanded as it is spawned): exactly the folders its sandbox
// grants it because its entry names them (its cwd, its folder arguments,
// its sandbox grants), as sandbox.ForServer resolved them and as they
// remain after the deny list. The package of a script argument is granted
// only so the server can run it, and is no root: a filesystem server
// takes its roots as the folders it serves, and the first as the one a
// relative path means. An http server, or a stdio server with no
// folder grants, has none. A stdio server whose entry turns the sandbox
// off gets the folder it runs in only: it can reach everything, and
// offering every folder would say nothing; the folder it was started in
// is the one its entry points it at.
func (b *Bridge) rootsOf(e mcp.Entry) []mcp.Root {
	if e.Transport != mcp.TransportStdio {
		return nil
	}
	p := b.ServerPolicy(e)
	if p.Off {
		if p.Dir == "" {
			return nil
		}
		return []mcp.Root{mcp.RootOf(p.Dir)}
	}
	granted := func(dir string) bool {
		in := func(g sandbox.Path) bool { return pathrule.Within(dir, g.Path) }
		return slices.ContainsFunc(p.Read, in) || slices.ContainsFunc(p.Write, in)
	}
	var roots []mcp.Root
	var seen []string
	for _, dir := range p.Granted {
		if slices.Contains(seen, dir) || slices.Contains(p.Scripts, dir) || !granted(dir) {
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		seen = append(seen, dir)
		roots = append(roots, mcp.RootOf(dir))
	}
	return roots
}

// rootsChanged tells server's live connection, if any, that its roots
// changed (notifications/roots/list_changed).
func (b *Bridge) rootsChanged(ctx context.Context, server string) error {
	b.mu.Lock()
	cn := b.conns[server]
	b.mu.Unlock()
	if cn == nil {
		return nil
	}
	cn.mu.Lock()
	c := cn.c
	cn.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.RootsChanged(ctx)
}
