package lua

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/llm"
)

// openProfiles installs the profiles and the model of this session:
//
//	tai.profiles.list() / current() / get(name) / use(name) / save(t) / delete(name)
//	tai.profiles.providers() -> {{name, base_url, takes, picks_by_family}, …}
//	    the providers a profile may name (llm.Providers)
//	tai.models() -> {name, …} | nil, err   the models the current profile's
//	                                  provider lists
//	tai.model(name) -> profile | nil, err  this session's model (not stored)
//	tai.model_families(provider[, families]) -> families
//	    the model families a profile of provider that names no model
//	    picks from, in order (llm.PickModel); with a list, replaces them
//	tai.profile   the current profile's name (a field, see luaProfileField)
func (h *Host) openProfiles(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("profiles", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"list":      h.profilesList,
		"current":   h.profilesCurrent,
		"get":       h.profilesGet,
		"use":       h.profilesUse,
		"save":      h.profilesSave,
		"delete":    h.profilesDelete,
		"providers": luaProviders,
	}))
	tai.RawSetString("models", L.NewFunction(h.luaModels))
	tai.RawSetString("model", L.NewFunction(h.luaModel))
	tai.RawSetString("model_families", L.NewFunction(h.luaModelFamilies))
}

// luaProviders answers tai.profiles.providers from engine/llm's table.
func luaProviders(L *glua.LState) int {
	v, err := ToLua(L, llm.Providers())
	if err != nil {
		L.RaiseError("tai.profiles.providers: %v", err)
	}
	L.Push(v)
	return 1
}

// modelFamilies is tai.model_families, by provider. Model clients read it
// from any goroutine, so it is guarded.
type modelFamilies struct {
	mu  sync.Mutex
	set map[string][]string
}

// get returns provider's families (llm.DefaultModelFamilies until set).
func (f *modelFamilies) get(provider string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.set[provider]; ok {
		return slices.Clone(l)
	}
	return llm.DefaultModelFamilies(provider)
}

func (f *modelFamilies) put(provider string, families []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.set == nil {
		f.set = map[string][]string{}
	}
	f.set[provider] = slices.Clone(families)
}

func (h *Host) luaModelFamilies(L *glua.LState) int {
	provider := L.CheckString(1)
	if by := llm.FamilyProviders(); !slices.Contains(by, provider) {
		L.ArgError(1, fmt.Sprintf("provider %q picks no model by family: use %s", provider, llm.OneOf(by)))
	}
	if L.GetTop() >= 2 && L.Get(2) != glua.LNil {
		t := L.CheckTable(2)
		n := 0
		t.ForEach(func(glua.LValue, glua.LValue) { n++ })
		if n != t.Len() || n == 0 {
			L.ArgError(2, "tai.model_families takes a list of one or more family names, such as {\"sonnet\", \"opus\"}")
		}
		families := make([]string, 0, n)
		for i := 1; i <= n; i++ {
			s, ok := t.RawGetInt(i).(glua.LString)
			if !ok || strings.TrimSpace(string(s)) == "" || strings.ContainsAny(string(s), "-_:./ ") {
				L.ArgError(2, fmt.Sprintf("family %d is not one word of a model's name (such as sonnet or mini)", i))
			}
			families = append(families, strings.ToLower(string(s)))
		}
		h.families.put(provider, families)
	}
	out := NewArray(L)
	for _, f := range h.families.get(provider) {
		out.Append(glua.LString(f))
	}
	L.Push(out)
	return 1
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

// profilesCurrent answers tai.profiles.current(): the session's profile,
// with model_chosen, the model picked for it, when it names none and one
// was picked (llm.ChosenModel).
func (h *Host) profilesCurrent(L *glua.LState) int {
	s, err := h.Session()
	if err != nil {
		return fail(L, err.Error())
	}
	p := s.Profile()
	t := profileTable(L, p)
	if m := llm.ChosenModel(s.Engine().Store(), p); m != "" {
		t.RawSetString("model_chosen", glua.LString(m))
	}
	L.Push(t)
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
		L.ArgError(1, "profile fields are name, provider, base_url, model, key_secret, key_env, system, tools, max_tokens, max_tokens_field, pass_env, sandbox, images: "+err.Error())
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
