package lua

import (
	"context"
	"errors"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/bridge"
	"tai/mcp"
)

// logResult is what tai.mcp.log and client:log return: the view, the
// level asked for, whether the server was asked to log at it, and why
// not when it was not.
type logResult struct {
	mcp.LogView
	Level mcp.LogLevel `json:"level,omitempty"`
	Set   bool         `json:"set"`
	Note  string       `json:"note,omitempty"`
}

// logLevelArg reads an optional level: "" when absent, else a level MCP
// names (an argument error otherwise).
func logLevelArg(L *glua.LState, n int, s string) mcp.LogLevel {
	if s == "" {
		return ""
	}
	level, err := mcp.ParseLogLevel(s)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	return level
}

// logWith returns the view of a log at level after asking the server for
// it with set; a server without logging gives a note, not a failure.
func logWith(level mcp.LogLevel, set func() error, view func(mcp.LogLevel) (mcp.LogView, error)) (logResult, error) {
	res := logResult{Level: level}
	if level != "" {
		switch err := set(); {
		case err == nil:
			res.Set = true
		case errors.Is(err, mcp.ErrNoLogging):
			res.Note = err.Error()
		default:
			return res, err
		}
	}
	v, err := view(level)
	res.LogView = v
	return res, err
}

// mcpLog is tai.mcp.log{server=, level=}: a registered server's log.
//
//	tai.mcp.log{server=, level=} -> {entries={{time=, level=, logger=, text=, cut=}, …},
//	        kept=, dropped=, level=, set=bool, note=} | nil, err
//
// With level, the server is first asked to log at level and above
// (logging/setLevel; set says it was, note why not) and only entries at
// or above it are returned.
func (h *Host) mcpLog(L *glua.LState) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "server", "level")
	server := fieldString(L, args, "server", true)
	level := logLevelArg(L, 1, fieldString(L, args, "level", false))
	var res logResult
	if err := h.onBridge(L, func(ctx context.Context, b *bridge.Bridge) (err error) {
		res, err = logWith(level, func() error { return b.SetLogLevel(ctx, server, level) },
			func(min mcp.LogLevel) (mcp.LogView, error) { return b.Log(server, min) })
		return err
	}); err != nil {
		return fail(L, err.Error())
	}
	return pushJSON(L, res)
}

// mcpClientLog is client:log([level]), the same for a tai.mcp.connect
// session.
func mcpClientLog(L *glua.LState) int {
	c := checkClient(L)
	level := logLevelArg(L, 2, L.OptString(2, ""))
	res, err := logWith(level, func() error { return c.c.SetLogLevel(luaContext(L), level) },
		func(min mcp.LogLevel) (mcp.LogView, error) { return c.log.View(min), nil })
	if err != nil {
		return c.fail(L, err.Error())
	}
	return pushJSON(L, res)
}
