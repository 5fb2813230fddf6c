// Package builtin holds tai's native tools: the file tools (Files), shell
// (Shell, its commands started under engine/sandbox's keeper), http_fetch
// (Fetch), the vault tools (Vault), ask_user (AskUser) and lua (Lua).
// Each is built from a small struct naming what it needs (a directory,
// the vault, an HTTP client, the registry) and returns tool.Tool values
// that engine registers; approval, audit, redaction of results and spill
// are the registry's, not theirs.
//
// To add a native tool: a struct of its dependencies with a Tool (or
// Tools) method here, and one line in engine's nativeTools.
//
// It imports engine/tool, engine/sandbox, vault and mcp (VisibleLine);
// never engine, its sessions or agents: tool_search, fork and the profile
// tools, which act on those, stay in engine.
package builtin
