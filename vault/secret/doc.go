// Package secret holds tai's rules about secrets, each written once: what
// a credential's name looks like (CredentialName), the mark a hidden value
// leaves (Mark) and the shortest value worth hiding (MinLen), and Hide,
// which blanks a few known values out of a text.
//
// It is a leaf: it imports nothing of tai, and every package may import
// it, those under mcp too, which may not import the vault. The vault's
// Redactor, the MCP transports' scrubbing of server errors and the model
// clients' hiding of an API key all write the same mark through it.
package secret
