package mcp

import (
	"fmt"
	"unicode/utf8"

	"tai/mcp/screen"
)

// ToolNameMax is the longest tool name MCP allows (2025-11-25,
// server/tools: 1–128 characters).
const ToolNameMax = 128

// ClipMax is how many bytes of a name or word Clip keeps.
const ClipMax = 40

// CheckToolName reports whether name is a tool name as MCP defines it:
// 1–ToolNameMax of A-Z, a-z, 0-9, '_', '-' and '.'. tai refuses any other
// name a model or a client calls before looking it up, so a name of
// megabytes, or one holding line breaks, is never looked up, audited whole
// or repeated back. The error quotes the name clipped (see Clip).
func CheckToolName(name string) error {
	if name == "" {
		return fmt.Errorf("the tool name is empty: a tool name is 1-%d characters, each a letter, a digit, or one of _ - . only", ToolNameMax)
	}
	if len(name) > ToolNameMax {
		return fmt.Errorf("tool name %s is not valid: it is longer than %d characters (a tool name is 1-%d characters, each a letter, a digit, or one of _ - . only)", Clip(name), ToolNameMax, ToolNameMax)
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return fmt.Errorf("tool name %s is not valid: at byte %d it holds a character that is not a letter, a digit or one of _ - . (allowed: A-Z a-z 0-9 _ - . only)", Clip(name), i)
		}
	}
	return nil
}

func toolNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// Clip returns s quoted for an error message or a screen, on one line and
// short whatever s holds: its first ClipMax bytes (never a character cut
// in two) rendered with VisibleLine, then, when more was dropped, "…" and
// the length of the whole: "ZZZZ…" (5242880 bytes).
func Clip(s string) string {
	if len(s) <= ClipMax {
		return `"` + screen.VisibleLine(s) + `"`
	}
	n := ClipMax
	for n > ClipMax-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf(`"%s…" (%d bytes)`, screen.VisibleLine(s[:n]), len(s))
}
