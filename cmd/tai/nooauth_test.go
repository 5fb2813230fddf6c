package main

import (
	"strings"
	"testing"
)

// TestREPLAddOfAKeyedServerSaysItWantsAHeader: a server that answers 401
// but offers no OAuth (tai's own --serve-mcp, without its key) is not
// stored waiting for a browser login that cannot work: tai says it wants
// a key or token in a header, and how to give one.
func TestREPLAddOfAKeyedServerSaysItWantsAHeader(t *testing.T) {
	other := newEnv(t)
	served := startServe(t, other, other.vars())
	e := newEnv(t)
	s := startREPLWith(t, e, e.vars(), "--clean")
	s.expect("> ")
	s.typeKeys("/mcp add " + served.url + "\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	s.typeKeys("y")
	s.expect("asks for credentials (HTTP 401) but offers no OAuth login")
	s.expect(`"headers": {"Authorization": "Bearer ${NAME}"}`)
	s.expect("> ")
	out := s.seen.String()
	for _, bad := range []string{"in your browser?", "client registration", "refused (HTTP 404)"} {
		if strings.Contains(out, bad) {
			t.Errorf("the screen shows %q:\n%s", bad, out)
		}
	}
	s.typeKeys("/mcp\r")
	s.expect("> ")
	if strings.Contains(s.seen.String(), "enabled for: none") {
		t.Errorf("the server was stored:\n%s", s.seen.String())
	}
	s.typeKeys("\x04")
	s.wait()
	served.stop(t)
}

// TestREPLMissingReferenceIsNamed: an entry whose credential-named env
// var references an unset variable is refused with the reference named,
// not redacted as if the reference were the secret.
func TestREPLMissingReferenceIsNamed(t *testing.T) {
	e := newEnv(t)
	s := startREPL(t, e, "--clean")
	s.expect("> ")
	s.typeKeys(`{"mcpServers": {"fs": {"command": "npx", "args": ["x"], "env": {"API_KEY": "${MY_UNSET_KEY}"}}}}` + "\r")
	s.expect(`needs ${MY_UNSET_KEY}, which is not set`)
	s.expect("> ")
	if strings.Contains(s.seen.String(), "[REDACTED") {
		t.Fatalf("a reference was redacted:\n%s", s.seen.String())
	}
	s.typeKeys("\x04")
	s.wait()
}
