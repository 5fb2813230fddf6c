package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"tai/engine/tool"
	"tai/mcp"
)

func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func argString(args map[string]any, key string) (string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", key)
	}
	return s, nil
}

// agentTools are the mcp_* tools the model (and tai.call) can use.
func (b *Bridge) agentTools() []tool.Tool {
	return []tool.Tool{
		{
			Name: "mcp_add",
			Description: "Register MCP servers from a pasted config (Claude Desktop / VS Code / Cursor JSON, Codex TOML, a fragment or " +
				"one entry, a claude/codex/gemini mcp add line), a config file path, a server's http(s) URL, a stored server name, or a GitHub repository URL (its files are read for the server's recommended entry). The person sees the exact command (or URL) and " +
				"consents before it starts, choosing there whether to enable it for this profile; each server is verified live (handshake and tools/list) before it is stored " +
				"(under --auto and --yolo, disabled unless the config enables it). Returns the tools listed.",
			Parameters: obj([]string{"source"}, map[string]any{
				"source":  str("the config text (JSON, TOML, or a claude/codex/gemini mcp add command line), a file path, a stored server name, a server's http(s) URL (named after its host), or a GitHub repository URL (github.com/<owner>/<repo>[/tree/<ref>/<folder>]), which is resolved into one server entry"),
				"name":    str("name for a bare entry that has none"),
				"profile": str("registering profile (default: the current one)"),
			}),
			Decides: true,
			Run:     b.runAdd,
		},
		{
			Name:        "mcp_list",
			Description: "List the registered MCP servers: transport, command or URL, the profiles they are enabled for, tool counts and pin state (granted, withheld, removed).",
			Parameters:  obj(nil, map[string]any{}),
			Safe:        true,
			Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
				list, err := b.List(ctx)
				if err != nil {
					return tool.ErrorResult("mcp_list: %v", err), nil
				}
				return tool.TextResult(listText(list, b.profileFor(ctx))), nil
			},
		},
		{
			Name:        "mcp_enable",
			Description: "Enable a registered MCP server for a profile (default: the current one), so its tools are offered there.",
			Parameters: obj([]string{"server"}, map[string]any{
				"server": str("server name"), "profile": str("profile (default: the current one)"),
			}),
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				return b.runEnable(ctx, args, true)
			},
		},
		{
			Name:        "mcp_disable",
			Description: "Disable a registered MCP server for a profile (default: the current one); its tools are no longer offered there.",
			Parameters: obj([]string{"server"}, map[string]any{
				"server": str("server name"), "profile": str("profile (default: the current one)"),
			}),
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				return b.runEnable(ctx, args, false)
			},
		},
		{
			Name:        "mcp_remove",
			Description: "Remove a registered MCP server with its profile rows, pins and cached tools. The person is asked first.",
			Parameters:  obj([]string{"server"}, map[string]any{"server": str("server name")}),
			Decides:     true,
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				server, err := argString(args, "server")
				if err != nil || server == "" {
					return tool.ErrorResult("mcp_remove: give server (a name from mcp_list)"), nil
				}
				if err := b.Remove(ctx, server); err != nil {
					return tool.ErrorResult("mcp_remove: %v", err), nil
				}
				return tool.TextResult("removed MCP server " + server), nil
			},
		},
		{
			Name: "mcp_login",
			Description: "Log in to a registered http MCP server with OAuth: tai opens the person's browser (or they paste the final redirect URL), " +
				"stores the tokens sealed in the vault, verifies with a live tools/list and enables the server for the profile. The person is asked first.",
			Parameters: obj([]string{"server"}, map[string]any{
				"server": str("server name"), "profile": str("profile to enable it for (default: the current one)"),
			}),
			Decides: true,
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				server, err := argString(args, "server")
				if err != nil || server == "" {
					return tool.ErrorResult("mcp_login: give server (a name from mcp_list)"), nil
				}
				profile, err := argString(args, "profile")
				if err != nil {
					return tool.ErrorResult("mcp_login: %v", err), nil
				}
				msg, err := b.Login(ctx, server, LoginOptions{Profile: profile})
				if err != nil {
					return tool.ErrorResult("mcp_login: %v", err), nil
				}
				return tool.TextResult(msg), nil
			},
		},
		{
			Name:        "mcp_tools",
			Description: "List the tools of one registered MCP server (default: all) with their bridged names, descriptions and pin state; a withheld tool shows why.",
			Parameters:  obj(nil, map[string]any{"server": str("server name (default: every server)")}),
			Safe:        true,
			Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
				server, err := argString(args, "server")
				if err != nil {
					return tool.ErrorResult("mcp_tools: %v", err), nil
				}
				list, err := b.Tools(ctx, server)
				if err != nil {
					return tool.ErrorResult("mcp_tools: %v", err), nil
				}
				return tool.TextResult(toolsText(list)), nil
			},
		},
		{
			Name:        "mcp_call",
			Description: "Call one tool of a registered MCP server explicitly (the same path as a bridged mcp_<server>_<tool> call: approval, audit, spill).",
			Parameters: obj([]string{"server", "tool"}, map[string]any{
				"server": str("server name"), "tool": str("the server's own tool name"),
				"args": map[string]any{"type": "object", "description": "the tool's arguments"},
			}),
			// The bridged call it makes asks for approval and is audited.
			Safe: true,
			Run:  b.runCall,
		},
	}
}

func (b *Bridge) runAdd(ctx context.Context, args map[string]any) (tool.Result, error) {
	var req AddRequest
	var err error
	for k, p := range map[string]*string{"source": &req.Source, "name": &req.Name, "profile": &req.Profile} {
		if *p, err = argString(args, k); err != nil {
			return tool.ErrorResult("mcp_add: %v", err), nil
		}
	}
	rep, err := b.Add(ctx, req)
	if err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	res := tool.TextResult(addText(rep))
	res.IsError = rep.Count(Added)+rep.Count(Skipped) == 0
	return res, nil
}

func (b *Bridge) runEnable(ctx context.Context, args map[string]any, on bool) (tool.Result, error) {
	verb := map[bool]string{true: "enable", false: "disable"}[on]
	server, err := argString(args, "server")
	if err != nil || server == "" {
		return tool.ErrorResult("mcp_%s: give server (a name from mcp_list)", verb), nil
	}
	profile, err := argString(args, "profile")
	if err != nil {
		return tool.ErrorResult("mcp_%s: %v", verb, err), nil
	}
	profile, err = b.SetEnabled(ctx, server, profile, on)
	if err != nil {
		return tool.ErrorResult("mcp_%s: %v", verb, err), nil
	}
	return tool.TextResult(fmt.Sprintf("MCP server %s %sd for profile %s", server, verb, profile)), nil
}

func (b *Bridge) runCall(ctx context.Context, args map[string]any) (tool.Result, error) {
	server, err := argString(args, "server")
	if err != nil || server == "" {
		return tool.ErrorResult("mcp_call: give server (a name from mcp_list)"), nil
	}
	toolName, err := argString(args, "tool")
	if err != nil || toolName == "" {
		return tool.ErrorResult("mcp_call: give tool (a name from mcp_tools)"), nil
	}
	var targs map[string]any
	switch a := args["args"].(type) {
	case nil:
	case map[string]any:
		targs = a
	default:
		return tool.ErrorResult("mcp_call: args must be an object of the tool's arguments"), nil
	}
	name, err := b.Callable(ctx, server, toolName)
	if err != nil {
		return tool.ErrorResult("mcp_call: %v", err), nil
	}
	res, err := b.reg.Dispatch(ctx, name, targs)
	if errors.Is(err, tool.ErrUnknownTool) {
		// Only where bridged tools do not resolve: over --serve-mcp.
		return tool.ErrorResult("mcp_call: %s/%s cannot be called here: tai never serves the tools of the MCP servers it uses", server, toolName), nil
	}
	return res, err
}

// Callable returns the bridged name of server's tool when the session
// calling in ctx may call it (the server is enabled for its profile), so
// nobody is asked to approve a call that would be refused.
func (b *Bridge) Callable(ctx context.Context, server, toolName string) (string, error) {
	name, err := b.NameOf(server, toolName)
	if err != nil {
		return "", err
	}
	s, err := b.current()
	if err != nil {
		return "", err
	}
	if profile := b.profileFor(ctx); !s.servers[server].profiles[profile] {
		return "", errors.New(s.servers[server].disabledFor(profile))
	}
	return name, nil
}

// NameOf returns the bridged name of server's tool.
func (b *Bridge) NameOf(server, toolName string) (string, error) {
	s, err := b.current()
	if err != nil {
		return "", err
	}
	st := s.servers[server]
	if st == nil {
		return "", fmt.Errorf("mcp server %s is not registered: mcp_list shows the servers", mcp.Clip(server))
	}
	for _, bt := range st.tools {
		if bt.tool == toolName {
			return bt.name, nil
		}
	}
	if err := mcp.CheckToolName(toolName); err != nil {
		// Not a name the server lists, nor one it could: say why without
		// repeating it whole.
		return "", fmt.Errorf("mcp server %q lists no such tool: %v", server, err)
	}
	var names []string
	for _, bt := range st.tools {
		names = append(names, bt.tool)
	}
	return "", fmt.Errorf("mcp server %q lists no tool %q (it lists: %s)", server, toolName, strings.Join(names, ", "))
}
