package lua

import (
	"bufio"
	"context"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
	"tai/mcp/oauth"
)

// mcpLogin is tai.mcp.login{server=, profile=, client_id=, client_secret=,
// client_metadata_url=, callback_port=}: an OAuth login to a registered
// http server (see bridge.Bridge.Login).
func (h *Host) mcpLogin(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "profile", "client_id", "client_secret", "client_metadata_url", "callback_port")
	server := fieldString(L, args, "server", true)
	o := bridge.LoginOptions{
		Profile:           fieldString(L, args, "profile", false),
		ClientID:          fieldString(L, args, "client_id", false),
		ClientSecret:      fieldString(L, args, "client_secret", false),
		ClientMetadataURL: fieldString(L, args, "client_metadata_url", false),
	}
	if v, ok := args["callback_port"]; ok && v != nil {
		n, isInt := v.(int64) // a whole Lua number arrives as int64
		if !isInt || n < 1 || n > 65535 {
			L.ArgError(1, "callback_port must be a port number (1-65535)")
		}
		o.CallbackPort = int(n)
	}
	var msg string
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		msg, err = b.Login(ctx, server, o)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(msg))
	return 1
}

// loginPerson is the person at this tai for an OAuth login: lines go
// through tai.notify; a redirect URL pasted while the login waits is read through the
// line editor when there is one (the REPL's), else from stdin when it is
// a terminal. The returned stop ends that reading.
func (h *Host) loginPerson(ctx context.Context) (*oauth.Person, func()) {
	// The login runs away from the Lua goroutine: its lines are said
	// through tai.notify when the state is free (above a line being
	// edited, which the editor draws again).
	p := &oauth.Person{Say: func(line string) { h.tellSoon("warn", "tai: "+CleanText(line, false)) }}
	lines := make(chan string)
	done := make(chan struct{})
	var finished chan struct{}
	switch r := h.term.editor; {
	case r != nil && !r.closed:
		finished = make(chan struct{})
		p.Paste = lines
		taken := make(chan bool, 1)
		p.Pasted = func(ok bool) { taken <- ok }
		go func() {
			defer close(finished)
			r.inst.SetPrompt("redirect URL> ")
			for {
				line, err := r.inst.Readline()
				if err != nil {
					close(lines) // Ctrl-C or Ctrl-D: the person gives up the login
					return
				}
				select {
				case lines <- strings.TrimSpace(r.paste.expand(line)):
				case <-done:
					return
				}
				// Read on only when the login wants another line: a taken
				// redirect URL ends the reading, with no prompt drawn again.
				select {
				case ok := <-taken:
					if ok {
						return
					}
				case <-done:
					return
				}
			}
		}()
		return p, func() {
			close(done)
			// End the editor's read (a newline typed for the person), then
			// wait for it, so the REPL gets its editor back.
			select {
			case <-finished:
			default:
				r.inject.Inject([]byte("\r"))
				<-finished
			}
		}
	case isTerminal(h.opts.Stdin):
		rctx, cancel := context.WithCancel(ctx)
		p.Paste = lines
		go func() {
			sc := bufio.NewScanner(ctxReader{r: h.opts.Stdin, ctx: func() context.Context { return rctx }})
			for sc.Scan() {
				select {
				case lines <- sc.Text():
				case <-rctx.Done():
					return
				}
			}
			if rctx.Err() == nil {
				close(lines) // end of input: the person gives up the login
			}
		}()
		return p, cancel
	}
	return p, func() {}
}
