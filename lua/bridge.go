package lua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/bridge"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/oauth"
)

// Bridge returns the host's MCP bridge (registered servers, their tools in
// the registry, the mcp_* tools), building the engine first. Call it only
// from the goroutine that owns the host.
func (h *Host) Bridge() (*bridge.Bridge, error) {
	if _, err := h.Engine(); err != nil {
		return nil, err
	}
	return h.bridge, nil
}

// newBridge builds the bridge over the engine's registry at engine start.
func (h *Host) newBridge(e *engine.Engine) (*bridge.Bridge, error) {
	store := e.Store()
	b, err := bridge.New(e.Tools(), store, &bridge.Options{
		Normalize: h.mcpNormalizer(),
		Resolve:   h.Resolver(),
		Profile: func() string {
			if h.engine.sess != nil {
				return h.engine.sess.Profile().Name
			}
			return e.Profile().Name
		},
		Dir:             e.Dir(),
		Clean:           func(s string) string { return CleanText(s, false) },
		Client:          h.mcpClientOptions(h.opts.Version, h.mcpWarning),
		Deny:            h.deny.get,
		RuntimeEnv:      h.runtimeEnv.get,
		CredentialWords: h.credentials.get,
		Person:          h.loginPerson,
		Screen:          h.consentScreen,
		// A server's sampling request is answered by the model of the
		// session whose call it belongs to, once its person approves.
		Sample:        e.Sample,
		SampleModel:   e.SampleModel,
		SamplingLimit: h.sampling.get,
		OAuthHints:    oauthHints,
	})
	if err != nil {
		return nil, err
	}
	e.SetInstructions(b.SystemPrompt)
	return b, nil
}

// consentScreen lays out the MCP consent screen with the Lua module
// tai.consent (require("tai.consent").screen, so an init.lua that replaces
// it is heard), on the goroutine that owns the state.
func (h *Host) consentScreen(ctx context.Context, s bridge.ConsentScreen) (body, question string, err error) {
	var rerr error
	err = h.onLua(ctx, func() {
		L := h.L
		out, err := h.callLua(L.GetGlobal("require"), 1, glua.LString("tai.consent"))
		if err != nil {
			rerr = err
			return
		}
		mod, ok := out[0].(*glua.LTable)
		if !ok {
			rerr = errors.New("tai.consent is not a module table")
			return
		}
		raw, err := json.Marshal(s)
		if err != nil {
			rerr = err
			return
		}
		facts, err := ToLua(L, json.RawMessage(raw))
		if err != nil {
			rerr = err
			return
		}
		out, err = h.callLua(mod.RawGetString("screen"), 2, facts)
		if err != nil {
			rerr = err
			return
		}
		b, okb := out[0].(glua.LString)
		q, okq := out[1].(glua.LString)
		if !okb || !okq {
			rerr = errors.New("tai.consent.screen must return the body and the question, two strings")
			return
		}
		body, question = string(b), string(q)
	})
	if err == nil {
		err = rerr
	}
	return body, question, err
}

// mcpClientOptions returns the options of an MCP client the host opens:
// Options.MCPClient with the version, the warning callback and the
// startup line filled in, and the call timeouts $TAI_MCP_CALL_TIMEOUT and
// $TAI_MCP_CALL_MAX_TOTAL set where it leaves them unset (a value that is
// not a duration is said on stderr, and the default kept).
func (h *Host) mcpClientOptions(version string, warn func(string)) *mcp.ClientOptions {
	var o mcp.ClientOptions
	if h.opts.MCPClient != nil {
		o = *h.opts.MCPClient
	}
	o.Version, o.OnWarning, o.OnStartup = version, warn, startupLine(h.opts.Stderr, h.startupSay)
	getenv := h.getenv()
	for _, v := range []struct {
		name string
		d    *time.Duration
		def  time.Duration
	}{{"TAI_MCP_CALL_TIMEOUT", &o.CallTimeout, mcp.MCP_CALL_TIMEOUT}, {"TAI_MCP_CALL_MAX_TOTAL", &o.CallMaxTotal, mcp.MCP_CALL_MAX_TOTAL}} {
		if *v.d != 0 {
			continue
		}
		if d, err := envDuration(getenv, v.name); err != nil {
			fmt.Fprintf(h.opts.Stderr, "tai: %v; using %s\n", err, v.def)
		} else {
			*v.d = d
		}
	}
	return &o
}

// envDuration reads the variable name as a duration ("90s", "5m"; a bare
// number is seconds): 0 when it is unset, an error naming it when it is
// not a positive duration.
func envDuration(getenv func(string) string, name string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if n, nerr := strconv.ParseFloat(v, 64); err != nil && nerr == nil {
		d, err = time.Duration(n*float64(time.Second)), nil
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%s is not a duration: give one such as 90s or 10m", name, CleanText(v, false))
	}
	return d, nil
}

// mcpNormalizer reads pasted configs for the bridge: config.Normalize with
// the repair rules of normalize.lua and the stored servers known by name.
func (h *Host) mcpNormalizer() bridge.Normalizer { return h.Normalizer() }

// openBridge installs the registry functions in tai.mcp, one per agent
// tool, each taking one table of that tool's arguments:
//
//	tai.mcp.add{source=, name=, profile=} -> {servers={{server=, outcome=, reason=,
//	        transport=, tools={…}, profile=, enabled=}, …}, notes={…}} | nil, err
//	tai.mcp.list() -> {{name=, transport=, target=, source=, profiles={…}, enabled=,
//	        tools=, granted=, offered=, withheld=, removed=, connected=}, …} | nil, err
//	tai.mcp.enable{server=, profile=} -> profile | nil, err
//	tai.mcp.disable{server=, profile=} -> profile | nil, err
//	tai.mcp.remove{server=} -> true | nil, err       (asks first)
//	tai.mcp.tools{server=} -> {{name=, server=, tool=, description=, state=, offered=, reason=}, …} | nil, err
//	tai.mcp.call{server=, tool=, args=} -> {content={…}, isError=bool} | nil, err
//	tai.mcp.grant{server=, tool=} -> {tool, …} | nil, err   (asks a person)
//	tai.mcp.allow{server=, paths={…}} -> message | nil, err   (asks a person)
//	tai.mcp.import{client= | path=} -> {files={{path=, report=, error=}, …}} | nil, err
//	tai.mcp.log{server=, level=} -> {entries={…}, kept=, dropped=, level=, set=, note=} | nil, err
//	        (what the server logged, never shown to a model; see mcplog.go)
//	tai.mcp.sampling_limit([n]) -> n   (sampling requests a server may make a minute; mcpsample.go)
//	tai.mcp.login{server=, profile=, client_id=, client_secret=, client_metadata_url=,
//	        callback_port=} -> message | nil, err   (opens a browser; client_secret is a ${NAME})
//
// add, grant, allow and import ask consent through tai.prompter; call goes
// through the same audit, redaction and spill as tai.call, and like it is
// not asked about again when the person calls (engine.ByPerson).
func (h *Host) openBridge(L *glua.LState, tai *glua.LTable) {
	mod, ok := tai.RawGetString("mcp").(*glua.LTable)
	if !ok {
		mod = L.NewTable()
		tai.RawSetString("mcp", mod)
	}
	for name, fn := range map[string]glua.LGFunction{
		"add":     h.mcpAdd,
		"list":    h.mcpList,
		"enable":  func(L *glua.LState) int { return h.mcpEnable(L, true) },
		"disable": func(L *glua.LState) int { return h.mcpEnable(L, false) },
		"remove":  h.mcpRemove,
		"tools":   h.mcpToolList,
		"call":    h.mcpCallTool,
		"grant":   h.mcpGrant,
		"allow":   h.mcpAllow,
		"import":  h.mcpImport,
		"login":   h.mcpLogin,
		"log":     h.mcpLog,

		"sampling_limit": h.mcpSamplingLimit,
	} {
		mod.RawSetString(name, L.NewFunction(fn))
	}
	h.openResources(mod, L)
	h.openPrompts(mod, L)
}

// onBridge runs fn with the bridge and a context carrying the host's
// session, away from the Lua goroutine (so prompts can run on it).
func (h *Host) onBridge(L *glua.LState, fn func(ctx context.Context, b *bridge.Bridge) error) error {
	b, err := h.Bridge()
	if err != nil {
		return err
	}
	ctx := engine.WithSession(luaContext(L), h.engine.sess)
	h.Await(func() { err = fn(ctx, b) })
	return err
}

// pushJSON pushes v converted to Lua through its JSON form.
func pushJSON(L *glua.LState, v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return fail(L, err.Error())
	}
	lv, err := ToLua(L, json.RawMessage(raw))
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(lv)
	return 1
}

func fieldString(L *glua.LState, args map[string]any, key string, required bool) string {
	v, ok := args[key]
	if !ok || v == nil {
		if required {
			L.ArgError(1, key+" is required")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		L.ArgError(1, key+" must be a string")
	}
	return s
}

func checkFields(L *glua.LState, args map[string]any, allowed ...string) {
	for k := range args {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			L.ArgError(1, fmt.Sprintf("unknown field %q (fields: %v)", k, allowed))
		}
	}
}

func (h *Host) mcpAdd(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "source", "name", "profile", "replace")
	req := bridge.AddRequest{
		Source:  fieldString(L, args, "source", true),
		Name:    fieldString(L, args, "name", false),
		Profile: fieldString(L, args, "profile", false),
	}
	if v, ok := args["replace"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			L.ArgError(1, "replace must be true or false")
		}
		req.Replace = b
	}
	var rep bridge.AddReport
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		rep, err = b.Add(ctx, req)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	return pushJSON(L, rep)
}

func (h *Host) mcpList(L *glua.LState) int {
	var list []bridge.ServerInfo
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		list, err = b.List(ctx)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	if list == nil {
		list = []bridge.ServerInfo{}
	}
	return pushJSON(L, list)
}

func (h *Host) mcpEnable(L *glua.LState, on bool) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "profile")
	server := fieldString(L, args, "server", true)
	profile := fieldString(L, args, "profile", false)
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		profile, err = b.SetEnabled(ctx, server, profile, on)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(profile))
	return 1
}

func (h *Host) mcpRemove(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server")
	server := fieldString(L, args, "server", true)
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) error {
		return b.Remove(ctx, server)
	}); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func (h *Host) mcpToolList(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server")
	server := fieldString(L, args, "server", false)
	var list []bridge.ToolInfo
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		list, err = b.Tools(ctx, server)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	if list == nil {
		list = []bridge.ToolInfo{}
	}
	return pushJSON(L, list)
}

func (h *Host) mcpCallTool(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "tool", "args")
	server := fieldString(L, args, "server", true)
	toolName := fieldString(L, args, "tool", true)
	targs, _ := args["args"].(map[string]any)
	if v, ok := args["args"]; ok && targs == nil {
		if list, isList := v.([]any); !isList || len(list) > 0 {
			L.ArgError(1, "args must be a table of the tool's named arguments")
		}
	}
	var res tool.Result
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) error {
		name, err := b.Callable(ctx, server, toolName)
		if err != nil {
			return err
		}
		res, err = h.engine.sess.Dispatch(tool.ByPerson(ctx), name, targs)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	t, err := resultTable(L, res)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(t)
	return 1
}

func (h *Host) mcpGrant(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "tool")
	server := fieldString(L, args, "server", true)
	toolName := fieldString(L, args, "tool", false)
	var granted []string
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		granted, err = b.Grant(ctx, server, toolName)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	if granted == nil {
		granted = []string{}
	}
	return pushJSON(L, granted)
}

func (h *Host) mcpAllow(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "paths")
	server := fieldString(L, args, "server", true)
	var paths []string
	list, ok := args["paths"].([]any)
	if !ok {
		L.ArgError(1, "paths must be a list of strings")
	}
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			L.ArgError(1, "paths must be a list of strings")
		}
		paths = append(paths, s)
	}
	var said string
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		said, err = b.Allow(ctx, server, paths)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(said))
	return 1
}

func (h *Host) mcpImport(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "client", "path")
	client := fieldString(L, args, "client", false)
	path := fieldString(L, args, "path", false)
	var rep bridge.ImportReport
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		rep, err = b.Import(ctx, client, path, bridge.Places{Dir: h.engine.eng.Dir(), Getenv: h.getenv()})
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	return pushJSON(L, rep)
}

// mcpWarning shows what a server did wrong without ending its session (a
// flood of requests), cleaned, through tai.notify; it comes from the
// server's reader goroutine, so it is said when the state is free.
func (h *Host) mcpWarning(msg string) {
	h.tellSoon("warn", "tai: "+CleanText(msg, false))
}

// oauthHints word what a person does after a login error, in the REPL's
// commands and tai.mcp's functions.
var oauthHints = oauth.Hints{
	Login: func(server string) string {
		return "run /mcp login " + server + " in tai's REPL (or tai.mcp.login{server=\"" + server + "\"})"
	},
	ClientID: func(server string) string {
		return "run /mcp login " + server + " --client-id ID --callback-port PORT " +
			"(add --client-secret ${SECRET_NAME} for a confidential app, its secret stored first with tai.vault.secret_set)"
	},
}
