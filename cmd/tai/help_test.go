package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"tai/stdlib"
)

// TestHelpTopicOutsideTheREPL: tai --help lists the topics after the
// usage, tai --help TOPIC prints one whole, tai --help search WORD the
// lines holding the word, and a topic of the user's config folder
// replaces the shipped one except under --clean.
func TestHelpTopicOutsideTheREPL(t *testing.T) {
	e := newEnv(t)
	topics, err := stdlib.Topics("")
	if err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "--help")
	if r.status != 0 || !strings.HasPrefix(r.stdout, usage) {
		t.Fatalf("--help: status %d, stdout %q", r.status, r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("--help prints a line of %d columns, over 80: %q", n, l)
		}
	}
	for _, tp := range topics {
		if !strings.Contains(r.stdout, "\n  "+tp.Name+" ") {
			t.Errorf("--help does not list the topic %s", tp.Name)
		}
	}
	var vault stdlib.Topic
	for _, tp := range topics {
		if tp.Name == "vault" {
			vault = tp
		}
	}
	if r := e.run(t, "--help", "vault"); r.status != 0 || r.stdout != vault.Text {
		t.Errorf("--help vault: status %d, stdout %q", r.status, r.stdout)
	}
	r = e.run(t, "--help", "search", "passphrase")
	if r.status != 0 || !strings.Contains(r.stdout, "vault:") {
		t.Errorf("--help search: status %d, stdout %q", r.status, r.stdout)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !strings.Contains(strings.ToLower(l), "passphrase") {
			t.Errorf("--help search passphrase shows a line without the word: %q", l)
		}
	}
	r = e.run(t, "--help", "nosuch")
	if r.status != 2 || !strings.Contains(r.stderr, `no help topic "nosuch"; the topics are`) || !strings.Contains(r.stderr, "vault") {
		t.Errorf("--help nosuch: status %d, stderr %q", r.status, r.stderr)
	}
	if r := e.run(t, "--help", "search", "zqxjkv"); r.status != 1 || !strings.Contains(r.stderr, "no help topic says") {
		t.Errorf("--help search zqxjkv: status %d, stderr %q", r.status, r.stderr)
	}
	mine := filepath.Join(e.config, "tai", "help")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "vault.txt"), []byte("our vault\n\nit lives on the NAS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "--help", "vault"); !strings.Contains(r.stdout, "on the NAS") {
		t.Errorf("the user's vault.txt is not read: %q", r.stdout)
	}
	if r := e.run(t, "--clean", "--help", "vault"); r.stdout != vault.Text {
		t.Errorf("--clean reads the user's topic: %q", r.stdout)
	}
}
