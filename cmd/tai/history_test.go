package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREPLHistoryKeepsNoSecret pastes lines that hold secrets the way
// people paste them (an /mcp add with an OAuth client secret written out,
// a config with a token in env, a vault secret's value) and checks the
// history file holds none of them, says so on screen, and still keeps and
// recalls ordinary lines in the next session.
func TestREPLHistoryKeepsNoSecret(t *testing.T) {
	e := newEnv(t)
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("= tai.vault.secret_set('deploy_key', 'zq9Vv7Lm2Kp4wX')\r")
	s.expect("true")
	s.expect("tai:ollama> ")

	s.typeKeys(`/mcp add {"url":"https://127.0.0.1:9/mcp","oauth":{"clientId":"abc","clientSecret":"s3cr3tClient42"}}` + "\r")
	s.expect("not kept in history: it holds a secret")
	s.expect("tai:ollama> ")
	s.typeKeys(`= #'{"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "abcd1234efgh"}}'` + "\r")
	s.expect("not kept in history: it holds a secret")
	s.expect("tai:ollama> ")
	s.typeKeys(`= #'{"headers": {"X-Custom-Token": "qwerty987654"}}'` + "\r")
	s.expect("not kept in history: it holds a secret")
	s.expect("tai:ollama> ")
	// a line holding a vault secret's value is kept with the value redacted
	s.typeKeys("= #'zq9Vv7Lm2Kp4wX'\r")
	s.expect("14")
	s.expect("tai:ollama> ")
	// a reference to a secret is no secret
	s.typeKeys(`= #'{"clientSecret": "${CLIENT_SECRET}"}'` + "\r")
	s.expect("36")
	s.expect("tai:ollama> ")
	s.typeKeys("= 6 * 7\r")
	s.expect("42")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0", status)
	}

	hist, err := os.ReadFile(filepath.Join(e.state, "tai", "history"))
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	for _, banned := range []string{"s3cr3tClient42", "abcd1234efgh", "qwerty987654", "zq9Vv7Lm2Kp4wX"} {
		if strings.Contains(string(hist), banned) {
			t.Errorf("history holds %q:\n%s", banned, hist)
		}
	}
	for _, want := range []string{"= #'[REDACTED:deploy_key]'\n", `= #'{"clientSecret": "${CLIENT_SECRET}"}'` + "\n", "= 6 * 7\n"} {
		if !strings.Contains(string(hist), want) {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}

	// the next session recalls the last line with the up arrow
	s = startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("\x1b[A\r")
	s.expect("42")
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	s.wait()
}
