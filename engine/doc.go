// Package engine is tai's agent core: sessions on a model profile, the
// tools that act on them (tool_search, fork, the profile tools), and the
// Agent that loops model → tools → model. The native tools it registers
// are engine/builtin's; the tool runtime it runs them through (the
// registry, approval, audit, redaction, spill, lazy selection) is
// engine/tool's; models, their chat types and profiles are engine/llm's.
// The lua package supplies Lua-side pieces (the lua tool's runner, tools
// written in Lua) through function values and tool.Tool values.
//
// It imports the layers below it (engine/builtin, engine/tool, engine/llm,
// engine/sandbox, mcp, vault), never lua or cmd; engine/builtin,
// engine/tool and engine/bridge must not import it.
//
//	store, _ := vault.Open(vault.DefaultPath(), nil)
//	eng, err := engine.New(store, &engine.Options{Mode: tool.Auto})
//	if err != nil { ... }
//	sess, err := eng.NewSession(nil) // its own profile, approver, history
//	if err != nil { ... }
//	turn, err := sess.RunTurn(ctx, "list the Go files here", &engine.TurnOptions{
//		Events: engine.Events{OnText: func(d string) { fmt.Print(d) }},
//	})
//
// Every conversation is a Session of one Engine (the REPL, tai -p,
// tai.chat, each served MCP session): it owns its profile, model client,
// approver (with its mode) and history, and nothing it does reaches another
// session except through the vault. A session puts a Caller in the
// context of its calls (its audit name, approver and profile; an agent's
// turn adds ByModel): the registry and the bridge read that, never the
// session.
//
// Every tool call, from the model, a script or the MCP server, goes through
// tool.Registry.Dispatch: approval for non-safe tools (asked in Interactive
// mode, automatic in Auto, silent in Yolo), the run, an audit entry,
// redaction of known secrets, and a spill to a vault record when the result
// exceeds tool.ResultMax. Native tools refuse argument names their schema does
// not declare. The profile tools are the exception to the modes: a profile
// change the model asks for decides where an API key is sent, so the person
// is asked (Approver.Decide) in every mode and nobody answering refuses it;
// a switch the model makes lasts for its session only. While the vault holds sealed secrets it cannot decrypt,
// redaction could not catch them, so tool calls, agent turns and
// completions are refused until the passphrase is given. Commands the shell
// tool runs never see TAI_VAULT_PASSPHRASE, *_API_KEY or a profile's
// key_env.
package engine
