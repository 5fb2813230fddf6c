package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"tai/mcp/screen"
	"tai/stdlib"
)

// luaScreen lays out consent screens with stdlib/consent.lua, the one the
// REPL runs, in a Lua state of its own, so these tests read the screen a
// person reads. The few tai.term functions it calls are bound to the
// screen rules package lua binds them to.
func luaScreen(t testing.TB) ScreenFunc {
	t.Helper()
	src, err := fs.ReadFile(stdlib.Files(), "consent.lua")
	if err != nil {
		t.Fatal(err)
	}
	L := glua.NewState()
	t.Cleanup(L.Close)
	term := L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"clean": func(L *glua.LState) int {
			s := L.CheckString(1)
			if glua.LVAsBool(L.Get(2)) {
				L.Push(glua.LString(screen.VisibleLine(s)))
			} else {
				L.Push(glua.LString(screen.Visible(s)))
			}
			return 1
		},
		"words": func(L *glua.LState) int {
			list := L.CheckTable(1)
			var words []string
			for i := 1; i <= list.Len(); i++ {
				words = append(words, list.RawGetInt(i).String())
			}
			out := L.NewTable()
			for _, l := range screen.ShowWords(words, L.OptInt(2, 0)) {
				out.Append(glua.LString(l))
			}
			L.Push(out)
			return 1
		},
		"fold": func(L *glua.LState) int {
			shown, note := screen.Fold(L.CheckString(1), L.CheckInt(2), L.CheckInt(3))
			L.Push(glua.LString(shown))
			L.Push(glua.LString(note))
			return 2
		},
	})
	tai := L.NewTable()
	tai.RawSetString("term", term)
	L.SetField(L.GetField(L.GetGlobal("package"), "loaded"), "tai", tai)
	if err := L.DoString(string(src)); err != nil {
		t.Fatal(err)
	}
	mod, ok := L.Get(-1).(*glua.LTable)
	if !ok {
		t.Fatal("consent.lua returned no module")
	}
	L.Pop(1)
	var mu sync.Mutex
	return func(_ context.Context, s ConsentScreen) (string, string, error) {
		mu.Lock()
		defer mu.Unlock()
		raw, err := json.Marshal(s)
		if err != nil {
			return "", "", err
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", "", err
		}
		if err := L.CallByParam(glua.P{Fn: mod.RawGetString("screen"), NRet: 2, Protect: true}, jsonLua(L, v)); err != nil {
			return "", "", err
		}
		body, question := L.Get(-2), L.Get(-1)
		L.Pop(2)
		if body.Type() != glua.LTString || question.Type() != glua.LTString {
			return "", "", errors.New("consent.screen returned no strings")
		}
		return body.String(), question.String(), nil
	}
}

// jsonLua is a value decoded from JSON as a Lua value.
func jsonLua(L *glua.LState, v any) glua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, jsonLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(jsonLua(L, e))
		}
		return t
	case string:
		return glua.LString(x)
	case float64:
		return glua.LNumber(x)
	case bool:
		return glua.LBool(x)
	case nil:
		return glua.LNil
	}
	panic(fmt.Sprintf("jsonLua: %T", v))
}

// render is the body of the consent screen s, laid out by consent.lua.
func render(t testing.TB, s ConsentScreen) string {
	t.Helper()
	body, _, err := luaScreen(t)(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
