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
// What a server asks in the middle of a call (elicitation/create,
// sampling/createMessage) reaches the person of that call in one place:
// the handler takes the context the request arrived with (the call's,
// see mcp.RequestHandler) to Registry.Answerer, which names who answers.
// The person answers in Interactive mode, through the caller's Prompter
// (the REPL's questions, or a script's own Lua function the prompter
// calls instead); nobody answers under --auto and --yolo, in a served
// session, with no prompter or terminal (tai -p piped), or for a request
// that belongs to no call, and Answerer.Refusal says which. A request
// tied to no one call while several ran goes to AnswererOf, which asks
// their person when they share one. Answerer.Ask
// puts the question one at a time with consent and ask_user. Whatever
// happened is said on the call's line with Note (Caller.Note, which the
// agent turns into ToolEvent.Notes):
//
//	who := reg.Answerer(ctx)
//	if who.Prompter == nil {
//		tool.Note(ctx, "elicitation declined: "+who.Refusal)
//		return decline
//	}
//	err := who.Ask(ctx, func(p tool.Prompter) error { … })
//
// It imports engine/llm for the chat types, vault and mcp; it must not
// import engine, engine/bridge, engine/builtin or lua, which build on it.
package tool
