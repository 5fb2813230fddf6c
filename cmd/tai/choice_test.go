package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestAddAnswersAtAKeypress: the one question of adding a pasted server
// answers at a keypress: d alone, without Enter, adds it disabled. A line
// typed before the question appeared does not answer it.
func TestAddAnswersAtAKeypress(t *testing.T) {
	e := newEnv(t)
	marker := fmt.Sprintf("%d-%s", os.Getpid(), t.TempDir())
	s := startREPL(t, e, "--clean")
	s.expect("> ")
	cfg := serverConfig(t, "echoer", map[string]string{mcpServerEnv: marker})
	// "y" and Enter typed with the paste, before the question shows.
	s.typeKeys("\x1b[200~" + cfg + "\x1b[201~\ry\r")
	s.expect("Add it? [y/d/N]")
	s.expect("answer> ")
	if strings.Contains(s.seen.String(), "added echoer") {
		t.Fatalf("a line typed before the question answered it:\n%s", s.seen.String())
	}
	s.typeKeys("d")
	s.expect("added echoer (stdio), stored disabled")
	s.expect("> ")
	if out := s.seen.String(); strings.Contains(out, "enabled for profile") {
		t.Fatalf("d added the server enabled:\n%s", out)
	}
	s.typeKeys("\x04")
	s.wait()
}
