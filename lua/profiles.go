package lua

import (
	"encoding/json"
	"sort"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/llm"
)

// openProfiles installs the profiles and the model of this session:
//
//	tai.profiles.list() / current() / get(name) / use(name) / save(t) / delete(name)
//	tai.models() -> {name, …} | nil, err   the models the current profile's
//	                                  provider lists
//	tai.model(name) -> profile | nil, err  this session's model (not stored)
//	tai.profile   the current profile's name (a field, see luaProfileField)
func (h *Host) openProfiles(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("profiles", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"list":    h.profilesList,
		"current": h.profilesCurrent,
		"get":     h.profilesGet,
		"use":     h.profilesUse,
		"save":    h.profilesSave,
		"delete":  h.profilesDelete,
	}))
	tai.RawSetString("models", L.NewFunction(h.luaModels))
	tai.RawSetString("model", L.NewFunction(h.luaModel))
}

// luaProfileField answers tai.profile: the engine's profile once it is
// built, else the --profile flag, else the current profile remembered in the
// vault, else "default". It is computed on each read, so a switch made by
// tai.profiles.use or by another process shows at once.
func (h *Host) luaProfileField(L *glua.LState) int {
	if L.CheckString(2) != "profile" {
		L.Push(glua.LNil)
		return 1
	}
	L.Push(glua.LString(h.currentProfileName()))
	return 1
}

func (h *Host) currentProfileName() string {
	if h.engine.sess != nil {
		return h.engine.sess.Profile().Name
	}
	s, err := h.Vault()
	if err == nil {
		var p llm.Profile
		if p, err = llm.ResolveProfile(s, h.engine.profileFlag, h.getenv()); err == nil {
			return p.Name
		}
	}
	if h.engine.profileFlag != "" {
		return h.engine.profileFlag
	}
	return h.opts.Profile
}

// profileTable converts a profile; keys are named by where they live,
// never shown.
func profileTable(L *glua.LState, p llm.Profile) *glua.LTable {
	b, _ := json.Marshal(p)
	v, err := ToLua(L, json.RawMessage(b))
	if t, ok := v.(*glua.LTable); ok && err == nil {
		return t
	}
	t := L.NewTable()
	t.RawSetString("name", glua.LString(p.Name))
	return t
}

func (h *Host) profilesList(L *glua.LState) int {
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	list, err := llm.ListProfiles(s.Engine().Store())
	if err != nil {
		return fail(L, err.Error())
	}
	cur := s.Profile()
	found := false
	stored := map[string]bool{}
	for _, p := range list {
		found = found || p.Name == cur.Name
		stored[p.Name] = true
	}
	if !found {
		list = append(list, cur)
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	out := L.NewTable()
	for _, p := range list {
		t := profileTable(L, p)
		t.RawSetString("current", glua.LBool(p.Name == cur.Name))
		t.RawSetString("stored", glua.LBool(stored[p.Name]))
		out.Append(t)
	}
	L.Push(out)
	return 1
}

func (h *Host) profilesCurrent(L *glua.LState) int {
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, s.Profile()))
	return 1
}

func (h *Host) profilesGet(L *glua.LState) int {
	name := L.CheckString(1)
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	if cur := s.Profile(); name == cur.Name {
		L.Push(profileTable(L, cur))
		return 1
	}
	p, err := llm.ResolveProfile(s.Engine().Store(), name, h.getenv())
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, p))
	return 1
}

func (h *Host) profilesUse(L *glua.LState) int {
	name := L.CheckString(1)
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	p, err := s.UseProfile(name)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, p))
	return 1
}

func (h *Host) profilesSave(L *glua.LState) int {
	fields := argsTable(L, 1, "profile")
	b, err := json.Marshal(fields)
	if err != nil {
		L.ArgError(1, err.Error())
	}
	var p llm.Profile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		L.ArgError(1, "profile fields are name, provider, base_url, model, key_secret, key_env, system, tools, max_tokens, pass_env, sandbox: "+err.Error())
	}
	if err := p.Validate(); err != nil {
		return fail(L, err.Error())
	}
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	if err := e.SaveProfile(p); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func (h *Host) profilesDelete(L *glua.LState) int {
	name := L.CheckString(1)
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	if err := e.DeleteProfile(name); err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func (h *Host) luaModels(L *glua.LState) int {
	e, err := h.Engine()
	if err != nil {
		return fail(L, err.Error())
	}
	sess, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	p := sess.Profile()
	copts := h.clientOptions()
	copts.Getenv = h.getenv()
	var names []string
	var lerr error
	ctx := luaContext(L)
	h.Await(func() { names, lerr = llm.ListModels(ctx, p, e.Store(), copts) })
	if lerr != nil {
		return fail(L, lerr.Error())
	}
	out := NewArray(L)
	for _, n := range names {
		out.Append(glua.LString(n))
	}
	L.Push(out)
	return 1
}

func (h *Host) luaModel(L *glua.LState) int {
	name := strings.TrimSpace(L.CheckString(1))
	if name == "" {
		L.ArgError(1, "name the model")
	}
	sess, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	p, err := sess.UseModel(name)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(profileTable(L, p))
	return 1
}
