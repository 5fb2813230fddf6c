// Package tool is tai's tool runtime: the one path every tool call takes,
// from a model, a script or a served MCP client.
//
//	reg := tool.NewRegistry(store, tool.NewApprover(tool.Interactive, prompter))
//	_ = reg.Add(tool.Tool{Name: "echo", Parameters: tool.Schema([]string{"text"},
//		map[string]any{"text": tool.Prop("string", "what to say")}), Run: echo})
//	ctx = tool.WithCaller(ctx, tool.Caller{Name: "mcp:1a2b", Approver: a})
//	call, err := reg.Prepare(ctx, "echo", args) // resolve, check, approve
//	res, err := call.Run(ctx)                   // run, audit, redact, spill
//
// It holds the Registry (the tools, a Fallback and SpecSource for the ones
// it does not hold, such as bridged MCP tools), Prepare and Call.Run,
// argument checks against a tool's JSON Schema, the lazy selection of the
// tools offered each model step (Select, Search), approval (Approver,
// Mode, Prompter, Consent) and the permission rules kept for a folder
// (Rules, KeptRules), the redaction of results and their spill to a vault
// record past ResultMax, and the result types (Result, Content).
//
// Who makes a call is the Caller in its context (WithCaller, CallerFrom):
// its audit name, its approver, its profile, whether a model or the person
// calls, whether only native tools may resolve. Whoever starts calls (a
// session, an agent's turn, a served session) puts it there; the runtime
// never reaches back into them.
//
// It imports engine/llm for the chat types, vault and mcp; it must not
// import engine, engine/bridge, engine/builtin or lua, which build on it.
package tool
