// Package bridge brings registered MCP servers into tai's tool registry:
// server rows in the vault and the entries they come from, per-profile
// enablement, tool pins and drift, the pool of client connections, the
// tool.Registry Fallback and SpecSource hooks, and the mcp_* agent tools.
//
//	b := bridge.New(eng.Tools(), store, &bridge.Options{Profile: func() string { return eng.Profile().Name }})
//	defer b.Close()                    // closes every server connection
//	rep, err := b.Add(ctx, bridge.AddRequest{Source: pasted})
//	_ = b.Enable(ctx, "memory", "")    // for the current profile
//	res, err := eng.Dispatch(ctx, "mcp_memory_read_graph", nil)
//
// A bridged tool is offered as mcp_<server>_<tool> (lowercase letters,
// digits and '_', at most 64 characters, unique) once its server is
// enabled for the profile, the entry's allow and deny lists let it through
// (mcp.Entry.Offers) and its definition is the one a person granted (its
// pin). Choosing tools reads only the cached mcp_server_tools rows, so it
// never spawns a server; the first call opens the connection, which later
// calls reuse. Calls go through tool.Registry.Prepare and Call.Run like
// native tools: approval (always asked in interactive mode, automatic under
// --auto, silent under --yolo), the audit trail ("mcp-call",
// "server/tool"), redaction and the spill of large results to a record.
//
// # Trust
//
// Registration hashes every tool's name, description and schema into
// mcp_tool_pins. On the first tools/list of a run, and again after the
// server sends notifications/tools/list_changed, a tool that is new or
// whose hash changed is withheld until a person grants it (Grant, or the
// prompt shown in interactive mode with a diff of the description and
// schema); --auto, --yolo and served sessions never grant. A tool that is
// gone is dropped silently. The model is told a tool is withheld and why,
// never given its new description.
//
// A server's prompts (the listing: name, title, description, arguments)
// and its instructions are cached and pinned beside its tools, under keys
// of their own kind (vault.KindPrompt, vault.KindInstructions), and drift
// the same way: a changed prompt is withheld; changed instructions
// withhold the whole server. Prompts run as a person's commands
// (GetPrompt); granted instructions follow the system prompt, bounded,
// redacted and fenced (SystemPrompt, which the engine calls through
// Engine.SetInstructions).
//
// # What a server asks
//
// Every connection declares elicitation (form and url) and roots, and
// answers them from its method table (ask.go). elicitation/create goes
// to whoever tool.Registry.Answerer names from the context of the call in
// flight (the person through the prompter's Elicit, a script's
// tai.mcp.on_elicit; nobody under --auto, --yolo, in a served session or
// without a terminal, and then it is declined with a tool.Note on the
// call's line); mcp/elicit reads the form and the URL, a URL is opened
// with Options.OpenURL once accepted, and a tools/call refused with
// -32042 is sent once more after the person opened its URLs. roots/list
// answers exactly the folders the server's sandbox grants (rootsOf).
// sampling/createMessage (sample.go) goes through the same Answerer.
//
// # Imports
//
// It builds on engine/tool (the registry, approval, the Caller a call
// carries), engine/llm, mcp and vault, and must not import engine: the
// caller of a call is read from its context (tool.CallerFrom), never from
// a session.
package bridge
