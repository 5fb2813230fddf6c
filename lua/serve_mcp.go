package lua

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/mcp"
	"tai/mcp/server"
)

// ServeRequest is what tai.serve and --serve-mcp ask for.
type ServeRequest struct {
	// Key is the Bearer key clients must send.
	Key string
	// Port is the TCP port; 0 picks a free one (the banner names it).
	Port int
	// Bind is the address to listen on.
	Bind string
	// Ready, when set, is called with the server's URL once it listens
	// (for a program embedding the server; the banner says the same).
	Ready func(url string)
	// ToolBudget is the tokens the tools' schemas may take before a served
	// chat turn chooses among them (0: engine.DefaultToolBudget).
	ToolBudget int
}

// DefaultServeRequest returns the port and bind address the environment
// asks for (TAI_MCP_PORT, TAI_MCP_BIND), else mcp.MCP_DEFAULT_PORT on
// 127.0.0.1. A TAI_MCP_PORT that is not a port number is an error naming
// it.
func DefaultServeRequest(getenv func(string) string) (ServeRequest, error) {
	r := ServeRequest{Port: mcp.MCP_DEFAULT_PORT, Bind: "127.0.0.1"}
	if v := getenv("TAI_MCP_PORT"); v != "" {
		p, err := ParsePort(v)
		if err != nil {
			return r, fmt.Errorf("TAI_MCP_PORT: %w", err)
		}
		r.Port = p
	}
	if v := getenv("TAI_MCP_BIND"); v != "" {
		r.Bind = v
	}
	return r, nil
}

// ParsePort reads a TCP port number, 0 to 65535.
func ParsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("%q is not a port number: give 0 to 65535 (0 picks a free port)", s)
	}
	return p, nil
}

// argvKeyWarning is what tai.serve says when tai's command line held its key
// (in a -e chunk, or an argument a script passed on).
const argvKeyWarning = `tai: warning: the server's key was on tai's command line, in the process list
where every user of this machine can read it, until tai hid it just now (it shows
as ********), and it stays in your shell's history. Make a new key and give
it so that neither holds it: store it with tai.vault.secret_set and serve with
tai.serve{key_secret = NAME}, or take it from os.getenv("TAI_MCP_KEY").
`

// openServe installs tai.serve:
//
//	tai.serve{key=, key_secret=, port=, bind=, tool_budget=} -> true | nil, err
//	    key: the Bearer key (at least 16 characters), or key_secret: the
//	    vault secret holding it; port defaults to $TAI_MCP_PORT else 8765,
//	    bind to $TAI_MCP_BIND else 127.0.0.1; tool_budget is the tokens the
//	    tools' schemas may take before a served chat turn chooses among
//	    them (as tai.chat's). Serves every native tool
//	    (Lua tools added with tai.tool included) plus chat and completions
//	    until Ctrl-C or SIGTERM, then shuts down gracefully and returns
//	    true. Every call a client makes runs without asking (as --yolo).
func (h *Host) openServe(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("serve", L.NewFunction(h.luaServe))
}

func (h *Host) luaServe(L *glua.LState) int {
	t := L.CheckTable(1)
	req, err := DefaultServeRequest(h.getenv())
	if err != nil {
		return fail(L, err.Error())
	}
	str := func(field string) string { return optString(L, 1, t, field) }
	key, secret := str("key"), str("key_secret")
	switch {
	case key != "" && secret != "":
		L.ArgError(1, "give key or key_secret, not both")
	case key == "" && secret == "":
		L.ArgError(1, "a key is required: key = \"…\" or key_secret = \"vault secret name\" ("+server.KeyHint+")")
	}
	switch v := t.RawGetString("port").(type) {
	case glua.LNumber:
		p, err := ParsePort(v.String())
		if err != nil {
			L.ArgError(1, "port: "+err.Error())
		}
		req.Port = p
	case glua.LString:
		p, err := ParsePort(string(v))
		if err != nil {
			L.ArgError(1, "port: "+err.Error())
		}
		req.Port = p
	case *glua.LNilType:
	default:
		L.ArgError(1, "port must be a number")
	}
	if b := str("bind"); b != "" {
		req.Bind = b
	}
	req.ToolBudget = optToolBudget(L, 1, t)
	if secret != "" {
		store, err := h.Vault()
		if err != nil {
			return fail(L, err.Error())
		}
		v, _, err := store.SecretGet(secret)
		if err != nil {
			return fail(L, fmt.Sprintf("key_secret %q: %v", secret, err))
		}
		key = v
	}
	req.Key = key
	if err := h.Serve(luaContext(L), req); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

// Serve runs the MCP server for req on the host's engine until ctx ends or
// SIGTERM comes, then shuts it down gracefully. It prints the banner (the
// URL, the --yolo warning, client snippets with the key masked) to Stderr.
// Lua tools run on this goroutine, one at a time, while it serves: call it
// only from the goroutine that owns the host.
func (h *Host) Serve(ctx context.Context, req ServeRequest) error {
	if err := server.CheckKey(req.Key); err != nil {
		return err
	}
	if h.opts.HideKey != nil && h.opts.HideKey(req.Key) {
		io.WriteString(h.opts.Stderr, argvKeyWarning)
	}
	e, err := h.Engine()
	if err != nil {
		return err
	}
	// Every call would be refused while redaction cannot know the secrets
	// (a sealed vault without its passphrase): say so now, not per call.
	if _, err := e.Store().Redactor(); err != nil {
		return fmt.Errorf("cannot serve: %w", err)
	}
	// Whatever gave the key (TAI_MCP_KEY, which tai has left by now, a
	// vault secret, a script), no output shows it.
	e.Store().AddRedaction(server.KeyEnv, req.Key)
	// From now on nobody watches this terminal: a call that needs the
	// passphrase (the vault sealed by another process meanwhile) fails at
	// once rather than hang its client at a prompt.
	defer e.Store().RefusePrompts("a running server never asks for the passphrase; restart it with TAI_VAULT_PASSPHRASE set")()
	opts := &server.Options{
		Key:     req.Key,
		Version: h.opts.Version,
		Logf: func(format string, args ...any) {
			h.tellSoon("warn", fmt.Sprintf("tai: "+format, args...))
		},
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		// Clients on other machines may dial this machine by its own
		// name; a rebinding attacker's name is never it.
		short, _, _ := strings.Cut(name, ".")
		opts.AllowedHosts = []string{name, short, short + ".local"}
	}
	srv, err := server.New(e.Served(&engine.ServedOptions{ToolBudget: req.ToolBudget}), opts)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(req.Bind, strconv.Itoa(req.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot serve on %s: the port is in use (another tai --serve-mcp?); pick another with --mcp-port or TAI_MCP_PORT", addr)
		}
		return fmt.Errorf("cannot serve on %s: %v", addr, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	host, exposed := req.Bind, true
	switch ip := net.ParseIP(req.Bind); {
	case ip != nil && ip.IsUnspecified():
		host = "127.0.0.1" // every interface: this machine's own address works
	case mcp.IsLoopback(req.Bind):
		exposed = false
	}
	url := "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + server.DefaultPath
	fmt.Fprint(h.opts.Stderr, server.Banner("tai", url, req.Key, exposed, taiAdd))
	if req.Ready != nil {
		req.Ready(url)
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	var serr error
	h.Await(func() { serr = srv.Serve(ctx, ln) })
	h.tell(h.L, "warn", "tai: MCP server stopped; every session is closed")
	return serr
}

// taiAdd is the REPL command another tai adds a served tai with, for the
// banner's snippet.
const taiAdd = "/mcp add"
