// Package config turns text a person pasted (an MCP server block copied from a
// README or from another client's settings file) into canonical mcp.Entry
// values, and expands the ${…} references those entries hold when they are
// used.
//
// Normalize runs in three steps:
//
//  1. Parse, in Go: JSON with comments and trailing commas (JSONC, through
//     tailscale/hujson), TOML (go-toml/v2), fragments shown without their
//     outer braces ("mcpServers": {…}), a Markdown code fence around either,
//     "..." elisions standing for the rest of a file, a pasted
//     "claude|codex|gemini mcp add …" command line (split as a POSIX shell
//     would, its documented flags read), a bare http(s) URL or a bare word
//     naming a stored server. Syntax errors name the line and
//     column, quote the line and say what to fix.
//  2. Rules: a Rules function value (the lua package builds it from
//     stdlib/normalize.lua, which a user may replace) finds the servers
//     under whatever wrapper the source client uses and maps each key to a
//     canonical field, noting what it ignores and why.
//  3. Validate, in Go: names unique and well formed, a command for stdio,
//     an http(s) URL for http, legacy transports refused, unknown fields and
//     README placeholders (YOUR_API_KEY, <token>, /path/to/…) named in notes.
//
// Nothing is stored or spawned here. At use time Expand resolves ${VAR},
// ${VAR:-default}, ${env:NAME} and ${input:id} in command, args, env, url and
// headers through a lookup the caller composes (process environment first,
// then vault secrets); names it cannot resolve are returned so the caller can
// refuse the spawn with MissingError.
//
//	entries, notes, err := config.Normalize(pasted, &config.Options{Rules: rules})
//	if err != nil { ... } // a *SyntaxError names line and column
//	for _, n := range notes { fmt.Println(n.Server, n.Level, n.Text) }
//	e, missing := config.Expand(entries[0], config.Chain(config.FolderVars(dir), os.LookupEnv))
//	if len(missing) > 0 { return config.MissingError(e.Name, missing) }
package config
