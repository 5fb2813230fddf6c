// Package httppolicy holds what every HTTP client of tai does the same way:
// redirects followed only within the origin first asked (so headers, keys
// and bodies never reach a host nobody configured), URLs redacted before
// they are shown, and the media type read from a Content-Type.
//
// It is a leaf: it imports nothing of tai, so the MCP transports, OAuth
// and the model providers in engine/llm share it without importing each
// other.
package httppolicy
