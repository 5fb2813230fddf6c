package lua

import (
	glua "github.com/yuin/gopher-lua"

	"tai/engine"
	"tai/engine/builtin"
	"tai/engine/llm"
)

// openText installs the text measures the REPL shows:
//
//	tai.estimate_tokens(text | messages) -> n   a rough token count
//	tai.diff(old, new [, context]) -> text      unified-diff hunks
func openText(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("estimate_tokens", L.NewFunction(luaEstimateTokens))
	tai.RawSetString("diff", L.NewFunction(luaDiff))
}

func luaEstimateTokens(L *glua.LState) int {
	switch v := L.CheckAny(1).(type) {
	case glua.LString:
		L.Push(glua.LNumber(engine.EstimateTokens([]llm.Message{{Content: string(v)}})))
	case *glua.LTable:
		msgs, err := tableMessages(L, v)
		if err != nil {
			L.ArgError(1, err.Error())
		}
		L.Push(glua.LNumber(engine.EstimateTokens(msgs)))
	default:
		L.ArgError(1, "give a text or a list of messages")
	}
	return 1
}

func luaDiff(L *glua.LState) int {
	L.Push(glua.LString(builtin.UnifiedDiff(L.CheckString(1), L.CheckString(2), L.OptInt(3, 3))))
	return 1
}
