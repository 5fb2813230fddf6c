package main

import (
	"strings"
	"testing"
)

// TestServerEscapesNeverReachTheTerminal: a stdio server writes a title
// change, a screen clear and a clipboard write (OSC 52) to stderr and exits
// during the handshake; the error tai -e shows carries them visibly, not
// raw, whether the chunk raises it or prints it.
func TestServerEscapesNeverReachTheTerminal(t *testing.T) {
	e := newEnv(t)
	server := `{command = "sh", args = {"-c", "printf '\\033]0;pwned\\007\\033[2J\\033]52;c;aGVsbG8=\\007bye\\n' >&2; exit 3"}}`
	for _, chunk := range []string{
		`assert(tai.mcp.connect` + server + `)`,
		`print(select(2, tai.mcp.connect` + server + `))`,
	} {
		r := e.run(t, "-e", chunk)
		out := r.stdout + r.stderr
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s: output carries raw control sequences: %q", chunk, out)
		}
		if !strings.Contains(out, `\x1b]52;c;`) {
			t.Errorf("%s: output does not show what the server sent: %q", chunk, out)
		}
	}
}
