package server

import (
	"strings"
	"testing"
)

// TestBannerEndsWithWhereAndTheWarning: the client snippets take more than
// a screen, so the banner's last lines say again where the server listens
// and that it runs every call without asking (and, when it listens beyond
// this machine, that too), and never the key; the first line stays the
// only one a script reading "tai: serving MCP on URL" finds.
func TestBannerEndsWithWhereAndTheWarning(t *testing.T) {
	const url = "http://127.0.0.1:8765/mcp"
	const key = "k3y-0123456789abcdef0123456789abcdef"
	for _, exposed := range []bool{false, true} {
		b := Banner("tai", url, key, exposed, "/mcp add")
		if strings.Contains(b, key) {
			t.Fatalf("the banner shows the key:\n%s", b)
		}
		lines := strings.Split(strings.TrimRight(b, "\n"), "\n")
		tail := strings.Join(lines[len(lines)-3:], "\n")
		if !strings.Contains(tail, " "+url+" ") || !strings.Contains(tail, "without asking") {
			t.Fatalf("exposed=%v: the last lines do not say where and how it serves:\n%s", exposed, tail)
		}
		// Scripts read the URL from the one line that starts so.
		if n := strings.Count(b, "tai: serving MCP on "); n != 1 || !strings.HasPrefix(b, "tai: serving MCP on "+url+"\n") {
			t.Fatalf("the banner has %d lines saying where it serves, or not first:\n%s", n, b)
		}
		if got := strings.Contains(tail, "beyond this machine"); got != exposed {
			t.Fatalf("exposed=%v: the last lines say it is reachable from elsewhere: %v\n%s", exposed, got, tail)
		}
		if !strings.HasPrefix(lines[len(lines)-1], "Stop with Ctrl-C") {
			t.Fatalf("the banner does not end with how to stop it:\n%s", tail)
		}
	}
}
