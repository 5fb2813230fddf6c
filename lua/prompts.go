package lua

import (
	"context"
	"fmt"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
)

// openPrompts installs what a front end needs of the servers' prompts and
// instructions in tai.mcp:
//
//	tai.mcp.prompts{server=} -> {{server=, name=, title=, description=,
//	        arguments={{name=, title=, description=, required=}, …},
//	        state=, offered=, reason=}, …} | nil, err
//	        (the cached listing of the servers enabled for the profile;
//	        never a spawn)
//	tai.mcp.prompt{server=, name=, args={name=value, …}} ->
//	        {server=, name=, description=, messages={{role=, content=,
//	        parts={{type=, mime=, data=}, …}}, …}} | nil, err
//	        (prompts/get: messages ready for tai.chat's messages option)
//	tai.mcp.complete_argument{server=, prompt=, argument=, value=, context={…}, quiet=}
//	        -> {value, …} | nil, err   (completion/complete; {} when the
//	        server offers no completion; quiet = true never asks anything
//	        and gives up after a few seconds, as Tab completion wants)
//	tai.mcp.instructions{profile=} -> {{server=, text=, state=, reason=}, …} | nil, err
//	        (the servers enabled for profile, default the current one)
//	tai.mcp.MAX_PROMPTS   how many prompts of one server are offered (the
//	        first by name)
func (h *Host) openPrompts(mod *glua.LTable, L *glua.LState) {
	for name, fn := range map[string]glua.LGFunction{
		"prompts":           h.mcpPrompts,
		"prompt":            h.mcpPrompt,
		"complete_argument": h.mcpCompleteArgument,
		"instructions":      h.mcpInstructions,
	} {
		mod.RawSetString(name, L.NewFunction(fn))
	}
	mod.RawSetString("MAX_PROMPTS", glua.LNumber(bridge.MaxPrompts))
}

func (h *Host) mcpPrompts(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server")
	server := fieldString(L, args, "server", false)
	var list []bridge.PromptInfo
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		list, err = b.Prompts(ctx, server)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	if list == nil {
		list = []bridge.PromptInfo{}
	}
	return pushJSON(L, list)
}

// stringMap reads args[key], a table of strings by name (absent: nil).
func stringMap(L *glua.LState, args map[string]any, key string) map[string]string {
	switch v := args[key].(type) {
	case nil:
		return nil
	case []any:
		if len(v) == 0 {
			return nil
		}
	case map[string]any:
		out := make(map[string]string, len(v))
		for k, x := range v {
			s, ok := x.(string)
			if !ok {
				L.ArgError(1, fmt.Sprintf("%s.%s must be a string", key, k))
			}
			out[k] = s
		}
		return out
	}
	L.ArgError(1, key+" must be a table of strings by name")
	return nil
}

func (h *Host) mcpPrompt(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "name", "args")
	server := fieldString(L, args, "server", true)
	name := fieldString(L, args, "name", true)
	pargs := stringMap(L, args, "args")
	var turn bridge.PromptTurn
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		turn, err = b.GetPrompt(ctx, server, name, pargs)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	msgs, err := messagesTable(L, turn.Messages)
	if err != nil {
		return fail(L, err.Error())
	}
	t := L.NewTable()
	t.RawSetString("server", glua.LString(turn.Server))
	t.RawSetString("name", glua.LString(turn.Name))
	t.RawSetString("description", glua.LString(turn.Description))
	t.RawSetString("messages", msgs)
	L.Push(t)
	return 1
}

func (h *Host) mcpCompleteArgument(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "prompt", "argument", "value", "context", "quiet")
	server := fieldString(L, args, "server", true)
	prompt := fieldString(L, args, "prompt", true)
	arg := fieldString(L, args, "argument", true)
	value := fieldString(L, args, "value", false)
	chosen := stringMap(L, args, "context")
	quiet, _ := args["quiet"].(bool)
	var vals []string
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		if quiet {
			vals, err = b.CompletePromptArgumentQuietly(ctx, server, prompt, arg, value, chosen)
		} else {
			vals, err = b.CompletePromptArgument(ctx, server, prompt, arg, value, chosen)
		}
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	if vals == nil {
		vals = []string{}
	}
	return pushJSON(L, vals)
}

func (h *Host) mcpInstructions(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "profile")
	profile := fieldString(L, args, "profile", false)
	var list []bridge.ServerInstructions
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		list, err = b.Instructions(profile)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	if list == nil {
		list = []bridge.ServerInstructions{}
	}
	return pushJSON(L, list)
}
