package lua

import (
	"context"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
	"tai/engine/tool"
)

// The resources of the servers the bridge reaches, for a person:
//
//	tai.mcp.resources{server=, quiet=} -> {server=, resources={{uri=, name=, title=,
//	        description=, mimeType=, size=}, …}, templates={{uriTemplate=, name=, …}, …},
//	        more=bool} | nil, err
//	tai.mcp.read{server=, uri=} -> {text=, isError=bool} | nil, err
//
// resources lists a server enabled for the profile (from the connection's
// cache until the server says its list changed); quiet = true never asks
// anything (a server whose start needs consent gives an error). read goes
// through mcp_read_resource's path (audit, redaction, spill), made by the
// person, so not asked about again; its text holds blobs as their labels.
func (h *Host) openResources(mod *glua.LTable, L *glua.LState) {
	mod.RawSetString("resources", L.NewFunction(h.mcpResources))
	mod.RawSetString("read", L.NewFunction(h.mcpRead))
}

func (h *Host) mcpResources(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "quiet")
	server := fieldString(L, args, "server", true)
	quiet, _ := args["quiet"].(bool)
	var list bridge.ResourceList
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		list, err = b.Resources(ctx, server, quiet)
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	return pushJSON(L, list)
}

func (h *Host) mcpRead(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "uri")
	server := fieldString(L, args, "server", true)
	uri := fieldString(L, args, "uri", true)
	var res tool.Result
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		res, err = h.engine.sess.Dispatch(tool.ByPerson(ctx), bridge.ReadResourceTool, map[string]any{"server": server, "uri": uri})
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	t := L.CreateTable(0, 2)
	t.RawSetString("text", glua.LString(res.Text()))
	t.RawSetString("isError", glua.LBool(res.IsError))
	L.Push(t)
	return 1
}
