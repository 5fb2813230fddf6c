// Package github reads MCP server recipes out of GitHub repositories for
// the resolver: Parse recognises a pasted repository URL, Client reads
// files through the contents API (base URL configurable, optional token,
// size and time caps, clear errors for a missing repository and the rate
// limit), and ServerJSON maps an official MCP registry server.json, in
// every schema version seen, to candidate entries. Which files are read
// in which order, and which candidate wins, is stdlib/resolve.lua's
// decision, not this package's.
package github
