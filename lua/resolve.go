package lua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/config"
	"tai/mcp/github"
)

// resolveTimeout bounds the deterministic pass: every file it reads and
// the rules of resolve.lua.
const resolveTimeout = 60 * time.Second

// resolveState runs resolve.lua in a Lua state of its own (built on first
// use, kept for the host's life) so the bridge's mcp_add can resolve from
// the agent's goroutine while the main state waits. One resolution runs at
// a time.
type resolveState struct {
	h *Host
	moduleState
	// steps and timeout bound the subagent pass; zero means
	// MCP_RESOLVER_STEPS and MCP_RESOLVER_TIMEOUT (tests shorten them).
	steps   int
	timeout time.Duration

	// last is the last resolution, reused for the same source within
	// resolveReuse (the preview of /mcp add, then the add itself, read a
	// repository once and run its subagent once).
	lastMu sync.Mutex
	last   *github.Resolution
	lastAt time.Time
}

// resolveReuse is how long a resolution is reused for the same source.
const resolveReuse = 2 * time.Minute

// Resolver returns the GitHub resolver: it recognises the URL, reads the
// repository through the contents API at TAI_GITHUB_API (default the
// public API) with the vault secret or environment variable GITHUB_TOKEN
// when set, and runs resolve.lua's pass over it. Nothing is verified or
// stored. It may be called from any goroutine.
func (h *Host) Resolver() func(ctx context.Context, url string) (github.Resolution, error) {
	h.modules.resolveOnce.Do(func() { h.modules.resolve = &resolveState{h: h} })
	return h.modules.resolve.run
}

// githubClient builds the contents-API client from the environment and
// the vault.
func (h *Host) githubClient() (*github.Client, error) {
	token := ""
	if h.opts.Vault != nil {
		if store, err := h.Vault(); err == nil {
			if v, _, err := store.SecretGet("GITHUB_TOKEN"); err == nil {
				token = v
			}
		}
	}
	if token == "" {
		if v, ok := os.LookupEnv("GITHUB_TOKEN"); ok && v != "" {
			token = v
			if h.opts.Vault != nil {
				if store, err := h.Vault(); err == nil {
					store.AddRedaction("GITHUB_TOKEN", v)
				}
			}
		}
	}
	return github.New(github.Options{Base: os.Getenv("TAI_GITHUB_API"), Token: token})
}

// run is the resolver.
func (r *resolveState) run(ctx context.Context, text string) (github.Resolution, error) {
	src, err := github.Parse(text)
	if err != nil {
		return github.Resolution{}, err
	}
	r.lastMu.Lock()
	if r.last != nil && r.last.Source == src && time.Since(r.lastAt) < resolveReuse {
		res := *r.last
		r.lastMu.Unlock()
		return res, nil
	}
	r.lastMu.Unlock()
	res, err := r.resolve(ctx, src)
	if err == nil {
		r.lastMu.Lock()
		r.last, r.lastAt = &res, time.Now()
		r.lastMu.Unlock()
	}
	return res, err
}

// resolve runs the deterministic pass, then the subagent pass when the
// first finds nothing.
func (r *resolveState) resolve(ctx context.Context, src github.Source) (github.Resolution, error) {
	client, err := r.h.githubClient()
	if err != nil {
		return github.Resolution{}, err
	}
	dctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	branch, err := client.DefaultBranch(dctx, src)
	if err != nil {
		return github.Resolution{}, err
	}
	res, why, err := r.deterministic(dctx, client, src, branch)
	if err != nil {
		return github.Resolution{}, err
	}
	if res != nil {
		return *res, nil
	}
	if len(why.several) > 0 {
		return github.Resolution{}, &github.SeveralError{Source: src, Why: why.severalWhy, Servers: why.several}
	}
	if why.refused != "" {
		return github.Resolution{}, fmt.Errorf("%s: %s%s", src, why.refused, noteLines(why.notes))
	}
	first := why.reason
	if first == "" {
		first = "no file names a way to run a server"
	}
	sess, ok := engine.SessionFrom(ctx)
	if !ok {
		sess = r.h.engine.sess
	}
	if sess == nil {
		return github.Resolution{}, fmt.Errorf("%s: %s%s\n  paste the config block its README or docs show instead,\n  or configure a model (see /help models) so tai can read the docs for you", src, first, noteLines(why.notes))
	}
	res, err = r.agent(ctx, sess, client, src, why)
	if err != nil {
		return github.Resolution{}, fmt.Errorf("%s: no server entry found: %s; then the model pass (mcp_resolve_agent) %v\n  paste the config block its README or docs show instead%s", src, first, err, noteLines(why.notes))
	}
	return *res, nil
}

// Names of the subagent's read-only tools: the contents API (a file, a
// folder listing) and the README.
const (
	toolRepoFile   = "repo_file"
	toolRepoList   = "repo_list"
	toolRepoReadme = "repo_readme"
)

// agentTools are the only tools the resolver subagent may have: reads of
// the repository being resolved, nothing that writes, runs or registers.
func agentTools(client *github.Client, src github.Source) map[string]tool.Tool {
	obj := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	path := func(args map[string]any) string { p, _ := args["path"].(string); return p }
	return map[string]tool.Tool{
		toolRepoFile: {
			Name: toolRepoFile, Safe: true,
			Description: "Read one file of the repository being resolved (" + src.String() + "), by its path inside the repository folder.",
			Parameters:  obj(map[string]any{"path": str("the file's path, such as package.json or docs/setup.md")}, "path"),
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				f, ok, err := client.File(ctx, src, path(args))
				switch {
				case err != nil:
					return tool.ErrorResult("%v", err), nil
				case !ok:
					return tool.ErrorResult("no file %q in %s", path(args), src), nil
				}
				return tool.TextResult(f.Text), nil
			},
		},
		toolRepoList: {
			Name: toolRepoList, Safe: true,
			Description: "List a folder of the repository being resolved (" + src.String() + "); an empty path lists its root.",
			Parameters:  obj(map[string]any{"path": str("the folder's path; empty for the root")}),
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				list, err := client.List(ctx, src, path(args))
				if err != nil {
					return tool.ErrorResult("%v", err), nil
				}
				var b strings.Builder
				for _, e := range list {
					fmt.Fprintf(&b, "%s\t%s\t%d\n", e.Type, e.Path, e.Size)
				}
				return tool.TextResult(b.String()), nil
			},
		},
		toolRepoReadme: {
			Name: toolRepoReadme, Safe: true,
			Description: "Read the raw README of the repository folder being resolved (" + src.String() + ").",
			Parameters:  obj(map[string]any{}),
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				f, ok, err := client.Readme(ctx, src)
				switch {
				case err != nil:
					return tool.ErrorResult("%v", err), nil
				case !ok:
					return tool.ErrorResult("%s has no README", src), nil
				}
				return tool.TextResult(f.Path + ":\n" + f.Text), nil
			},
		},
	}
}

// agent runs the subagent pass (mcp_resolve_agent): a fork of sess with
// resolve.lua's brief, only the read-only repository tools, and the step
// and time caps; resolve.lua's M:agent_answer reads its answer.
func (r *resolveState) agent(ctx context.Context, sess *engine.Session, client *github.Client, src github.Source, why passOutcome) (*github.Resolution, error) {
	brief, task, names, err := r.agentBrief(src, why)
	if err != nil {
		return nil, err
	}
	offered := agentTools(client, src)
	var own []tool.Tool
	for _, n := range names {
		t, ok := offered[n]
		if !ok {
			return nil, fmt.Errorf("was not run: resolve.lua's brief asks for the tool %q, but the resolver subagent may only read the repository (%s, %s, %s)", n, toolRepoFile, toolRepoList, toolRepoReadme)
		}
		own = append(own, t)
	}
	if len(own) == 0 {
		return nil, errors.New("was not run: resolve.lua's brief names no tool for it (M.agent_tools)")
	}
	steps, timeout := r.steps, r.timeout
	if steps <= 0 {
		steps = mcp.MCP_RESOLVER_STEPS
	}
	if timeout <= 0 {
		timeout = mcp.MCP_RESOLVER_TIMEOUT
	}
	turn, err := sess.Fork(ctx, engine.ForkOptions{Task: task, System: brief, Own: own, MaxSteps: steps, Timeout: timeout})
	switch {
	case err != nil:
		return nil, fmt.Errorf("failed: %v", err)
	case turn.Exhausted:
		return nil, fmt.Errorf("ran out of its %d steps without an answer", steps)
	case turn.Filtered || turn.Empty:
		return nil, errors.New("gave no answer (empty, refused or filtered)")
	}
	return r.agentAnswer(src, turn.Text)
}

// agentBrief reads M.brief, M.agent_tools and M:agent_task(source, saw).
func (r *resolveState) agentBrief(src github.Source, why passOutcome) (brief, task string, tools []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	L := r.L
	base := L.GetTop()
	defer L.SetTop(base)
	brief = glua.LVAsString(L.GetField(r.mod, "brief"))
	if list, ok := L.GetField(r.mod, "agent_tools").(*glua.LTable); ok {
		list.ForEach(func(_, v glua.LValue) { tools = append(tools, glua.LVAsString(v)) })
	}
	fn := L.GetField(r.mod, "agent_task")
	if brief == "" || fn.Type() != glua.LTFunction {
		return "", "", nil, errors.New("was not run: resolve.lua has no M.brief or M:agent_task")
	}
	saw := L.NewTable()
	for _, s := range why.saw {
		saw.Append(glua.LString(s))
	}
	err = func() (err error) {
		defer recoverLua(L, base, &err)
		return L.CallByParam(glua.P{Fn: fn, NRet: 1, Protect: true}, r.mod, glua.LString(src.String()), saw)
	}()
	if err != nil {
		return "", "", nil, fmt.Errorf("was not run: resolve.lua failed (an internal error: %s; please report it)", luaMessage(err))
	}
	return brief, glua.LVAsString(L.Get(-1)), tools, nil
}

// agentAnswer runs M:agent_answer(text, gh) over the subagent's reply.
func (r *resolveState) agentAnswer(src github.Source, text string) (*github.Resolution, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	L := r.L
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	L.SetContext(ctx)
	defer L.RemoveContext()
	base := L.GetTop()
	defer L.SetTop(base)
	fn := L.GetField(r.mod, "agent_answer")
	if fn.Type() != glua.LTFunction {
		return nil, errors.New("answered, but resolve.lua has no M:agent_answer to read it")
	}
	var apiErr error
	gh := r.ghTable(ctx, nil, src, &apiErr)
	err := func() (err error) {
		defer recoverLua(L, base, &err)
		return L.CallByParam(glua.P{Fn: fn, NRet: 2, Protect: true}, r.mod, glua.LString(text), gh)
	}()
	if err != nil {
		return nil, fmt.Errorf("answered, but resolve.lua failed reading it (an internal error: %s; please report it)", luaMessage(err))
	}
	result, err := FromLua(L, L.Get(base+1))
	if err != nil {
		return nil, fmt.Errorf("answered, but resolve.lua's result: %w", err)
	}
	if m, ok := result.(map[string]any); ok && m["entry"] != nil {
		res, err := resolution(src, m)
		if err != nil {
			return nil, fmt.Errorf("answered an entry tai cannot use: %w", err)
		}
		res.Pass = github.PassAgent
		return &res, nil
	}
	why := glua.LVAsString(L.Get(base + 2))
	if why == "" {
		why = "gave an answer resolve.lua did not accept"
	}
	return nil, errors.New(why)
}

// noteLines lists, for a failure message, the notes resolve.lua ranked
// (at most five), one to a line.
func noteLines(notes []config.Note) string {
	var b strings.Builder
	for i, n := range notes {
		if i == 5 {
			break
		}
		b.WriteString("\n  - ")
		b.WriteString(n.Text)
	}
	return b.String()
}

// passOutcome is what a pass saw when it found no entry.
type passOutcome struct {
	refused    string          // a definite answer that no single entry exists
	reason     string          // why nothing was found, in words a person can act on
	several    []github.Server // the servers a repository of several offers
	severalWhy string          // what showed them
	saw        []string        // what each file held
	notes      []config.Note   // what was left out, and why
}

// deterministic runs M:resolve(gh) of resolve.lua.
func (r *resolveState) deterministic(ctx context.Context, client *github.Client, src github.Source, branch string) (*github.Resolution, passOutcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.L == nil && r.err == nil {
		r.open()
	}
	if r.err != nil {
		return nil, passOutcome{}, r.err
	}
	L := r.L
	L.SetContext(ctx)
	defer L.RemoveContext()
	base := L.GetTop()
	defer L.SetTop(base)
	fn := L.GetField(r.mod, "resolve")
	if fn.Type() != glua.LTFunction {
		return nil, passOutcome{}, errors.New("resolve.lua: the module has no resolve function")
	}
	var apiErr error
	gh := r.ghTable(ctx, client, src, &apiErr)
	gh.RawSetString("branch", glua.LString(branch))
	err := func() (err error) {
		defer recoverLua(L, base, &err)
		return L.CallByParam(glua.P{Fn: fn, NRet: 2, Protect: true}, r.mod, gh)
	}()
	if err != nil {
		if apiErr != nil {
			return nil, passOutcome{}, apiErr
		}
		if ctx.Err() != nil {
			return nil, passOutcome{}, fmt.Errorf("%s: reading the repository took longer than %s and was stopped", src, resolveTimeout)
		}
		return nil, passOutcome{}, internalError(src, err)
	}
	result, err := FromLua(L, L.Get(base+1))
	if err != nil {
		return nil, passOutcome{}, fmt.Errorf("resolve.lua: result: %w", err)
	}
	if m, ok := result.(map[string]any); ok && m["entry"] != nil {
		res, err := resolution(src, m)
		if err != nil {
			return nil, passOutcome{}, err
		}
		res.Pass = github.PassDeterministic
		return &res, passOutcome{}, nil
	}
	whyV, _ := FromLua(L, L.Get(base+2))
	var out passOutcome
	if m, ok := whyV.(map[string]any); ok {
		out.refused, _ = m["refused"].(string)
		out.reason, _ = m["reason"].(string)
		out.severalWhy, _ = m["several_why"].(string)
		if list, ok := m["several"].([]any); ok {
			for _, v := range list {
				if s, ok := v.(map[string]any); ok {
					var srv github.Server
					srv.Name, _ = s["name"].(string)
					srv.URL, _ = s["url"].(string)
					srv.Way, _ = s["way"].(string)
					out.several = append(out.several, srv)
				}
			}
		}
		out.notes = notesFrom(m["notes"])
		if saw, ok := m["saw"].([]any); ok {
			for _, s := range saw {
				if str, ok := s.(string); ok {
					out.saw = append(out.saw, str)
				}
			}
		}
	}
	return nil, out, nil
}

// luaMessage is a Lua error's message alone: its first line, without
// the stack.
func luaMessage(err error) string {
	msg := luaError(err).Error()
	var le *Error
	if errors.As(luaError(err), &le) {
		msg = le.Message
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// internalError is what a failure inside resolve.lua says to the person:
// one line, without the Lua stack, and a request to report it.
func internalError(src github.Source, err error) error {
	msg := luaMessage(err)
	return fmt.Errorf("%s: the resolver failed on this repository (an internal error: %s): paste the config block its README shows instead\n  - please report this, with the repository's URL, so the resolver can be fixed", src, msg)
}

// resolution reads resolve.lua's result table.
func resolution(src github.Source, m map[string]any) (github.Resolution, error) {
	res := github.Resolution{Source: src}
	b, err := json.Marshal(m["entry"])
	if err != nil {
		return res, fmt.Errorf("resolve.lua: entry: %w", err)
	}
	if err := json.Unmarshal(b, &res.Entry); err != nil {
		return res, fmt.Errorf("resolve.lua: the entry is not a server entry: %w", err)
	}
	if res.Entry.Transport == "" {
		res.Entry.Transport = mcp.TransportStdio
		if res.Entry.URL != "" {
			res.Entry.Transport = mcp.TransportHTTP
		}
	}
	res.Entry.Source = src.ID()
	res.Entry.Enabled = false
	if err := res.Entry.Validate(); err != nil {
		return res, fmt.Errorf("resolve.lua: %w", err)
	}
	res.File, _ = m["file"].(string)
	res.Via, _ = m["via"].(string)
	if n, ok := m["line"].(float64); ok {
		res.Line = int(n)
	} else if n, ok := m["line"].(int64); ok {
		res.Line = int(n)
	}
	res.Notes = notesFrom(m["notes"])
	return res, nil
}

// notesFrom reads a list of {server=, level=, text=} tables.
func notesFrom(v any) []config.Note {
	list, _ := v.([]any)
	var out []config.Note
	for _, n := range list {
		m, ok := n.(map[string]any)
		if !ok {
			continue
		}
		note := config.Note{}
		note.Server, _ = m["server"].(string)
		note.Level, _ = m["level"].(string)
		note.Text, _ = m["text"].(string)
		switch note.Level {
		case config.LevelInfo, config.LevelWarn, config.LevelRefused:
		default:
			note.Level = config.LevelWarn
		}
		out = append(out, note)
	}
	return out
}

// ghTable builds the gh argument of M:resolve: the source and the
// read-only functions over the repository.
func (r *resolveState) ghTable(ctx context.Context, client *github.Client, src github.Source, apiErr *error) *glua.LTable {
	L := r.L
	raise := func(L *glua.LState, err error) {
		*apiErr = err
		L.RaiseError("%s", err.Error())
	}
	gh := L.NewTable()
	gh.RawSetString("source", sourceToLua(L, src))
	// read pushes a file's text and path; nothing when it is absent;
	// nil and why when it is not read (too large, not a file); an API
	// failure stops the pass.
	read := func(get func() (github.File, bool, error)) glua.LGFunction {
		return func(L *glua.LState) int {
			if client == nil {
				L.RaiseError("the repository is not read here")
			}
			f, ok, err := get()
			switch {
			case errors.Is(err, github.ErrUnreadable):
				L.Push(glua.LNil)
				L.Push(glua.LString(err.Error()))
				return 2
			case err != nil:
				raise(L, err)
			case !ok:
				return 0
			}
			L.Push(glua.LString(f.Text))
			L.Push(glua.LString(f.Path))
			return 2
		}
	}
	gh.RawSetString("file", L.NewFunction(func(L *glua.LState) int {
		name := L.CheckString(1)
		return read(func() (github.File, bool, error) { return client.File(ctx, src, name) })(L)
	}))
	gh.RawSetString("readme", L.NewFunction(read(func() (github.File, bool, error) { return client.Readme(ctx, src) })))
	gh.RawSetString("server_json", L.NewFunction(func(L *glua.LState) int {
		cands, notes, err := github.ServerJSON(L.CheckString(1))
		if err != nil {
			return fail(L, err.Error())
		}
		list := make([]map[string]any, 0, len(cands))
		for _, c := range cands {
			list = append(list, map[string]any{"entry": c.Entry, "kind": c.Kind, "from": c.From, "line": c.Line})
		}
		pushJSON(L, list)
		pushJSON(L, notes)
		return 2
	}))
	gh.RawSetString("normalize", L.NewFunction(func(L *glua.LState) int {
		text := ""
		switch v := L.CheckAny(1).(type) {
		case glua.LString:
			text = string(v)
		case *glua.LTable:
			x, err := FromLua(L, v)
			if err != nil {
				return fail(L, err.Error())
			}
			b, err := json.Marshal(x)
			if err != nil {
				return fail(L, err.Error())
			}
			text = string(b)
		default:
			L.ArgError(1, "a config text or an entry table")
		}
		entries, notes, err := r.h.Normalizer()(text, L.OptString(2, ""))
		if err != nil {
			return fail(L, err.Error())
		}
		pushJSON(L, entries)
		pushJSON(L, notes)
		return 2
	}))
	gh.RawSetString("toml", L.NewFunction(func(L *glua.LState) int {
		var v map[string]any
		if err := toml.Unmarshal([]byte(L.CheckString(1)), &v); err != nil {
			return fail(L, "not TOML: "+err.Error())
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fail(L, err.Error())
		}
		var x any
		if err := json.Unmarshal(b, &x); err != nil {
			return fail(L, err.Error())
		}
		lv, err := ToLua(L, x)
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(lv)
		return 1
	}))
	// placeholder(s) is the stand-in a README left in s (YOUR_KEY,
	// <token>, /path/to/…), as a paste's notes name it; "" when none.
	gh.RawSetString("placeholder", L.NewFunction(func(L *glua.LState) int {
		L.Push(glua.LString(config.Placeholder(L.CheckString(1))))
		return 1
	}))
	// which(name) says whether a program of that name is on PATH (a Go
	// toolchain, a vendor's CLI): the pass offers what can run here.
	gh.RawSetString("which", L.NewFunction(func(L *glua.LState) int {
		_, err := exec.LookPath(L.CheckString(1))
		L.Push(glua.LBool(err == nil))
		return 1
	}))
	gh.RawSetString("split", L.NewFunction(mcpSplit(func(L *glua.LState) *glua.LTable { return L.NewTable() })))
	gh.RawSetString("json", L.NewFunction(func(L *glua.LState) int {
		var v any
		if err := json.Unmarshal([]byte(L.CheckString(1)), &v); err != nil {
			L.RaiseError("not JSON: %v", err)
		}
		lv, err := ToLua(L, v)
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		L.Push(lv)
		return 1
	}))
	return gh
}

// open builds the state and loads the resolve module through the host's
// loader (user folder first, then the embedded stdlib). The module sees
// the standard library only; everything else comes through gh.
func (r *resolveState) open() error {
	r.L, r.mod, r.err = r.h.loadModule("resolve", nil,
		lib{glua.LoadLibName, glua.OpenPackage},
		lib{glua.BaseLibName, glua.OpenBase},
		lib{glua.TabLibName, glua.OpenTable},
		lib{glua.StringLibName, glua.OpenString},
		lib{glua.MathLibName, glua.OpenMath},
	)
	return r.err
}

// close releases the state (nothing when the resolver never ran).
func (r *resolveState) close() {
	if r != nil {
		r.moduleState.close()
	}
}
