package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sealElsewhere seals e's vault from another tai process.
func sealElsewhere(t *testing.T, e env) {
	t.Helper()
	if r := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=open sesame"), "-e", `assert(tai.vault.seal())`); r.status != 0 {
		t.Fatalf("sealing from another process: %+v", r)
	}
}

// TestREPLSealedElsewhereAsksAtItsOwnPrompt: the vault is sealed by
// another process while the REPL runs; the next command that needs the
// key asks at a prompt that says why, and what was typed ahead before
// that prompt showed, or as its reason showed, never goes into it.
func TestREPLSealedElsewhereAsksAtItsOwnPrompt(t *testing.T) {
	e := newEnv(t)
	fifo := filepath.Join(e.root, "hold")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startREPL(t, e, "--clean")
	s.expect("tai:ollama> ")
	s.typeKeys("= tai.vault.secret_set('k', 'the value')\r")
	s.expect("true")
	s.expect("tai:ollama> ")

	// The command says it runs, then waits for the test (on the FIFO)
	// before it reads the secret; meanwhile another process seals the
	// vault, and the line typed is type-ahead, echoed by the terminal
	// once it is queued there.
	s.typeKeys(`= (function() print("hold" .. "ing") io.open("` + fifo + `"):read("*l") return tai.vault.secret_get('k') end)()` + "\r")
	s.expect("holding")
	sealElsewhere(t, e)
	s.typeKeys("typed ahead\r")
	s.expect("typed ahead")
	hold, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	hold.WriteString("go\n")
	hold.Close()

	from := s.mark
	s.expect("type its passphrase to go on")
	// Typed on as the prompt's reason shows: too soon to be an answer.
	s.typeKeys("typed on\r")
	s.expect("vault passphrase: ")
	if why := s.seen.String()[from:s.mark]; !strings.Contains(why, "the vault was sealed by another process since tai opened it; type its passphrase to go on") {
		t.Fatalf("the prompt does not say why it asks:\n%s", why)
	}
	from = s.mark
	s.typeKeys("open sesame\r")
	s.expect(`"the value"`)
	if after := s.seen.String()[from:s.mark]; strings.Contains(after, "wrong passphrase") || strings.Contains(after, "try 2") {
		t.Fatalf("what was typed ahead went into the passphrase prompt:\n%s", after)
	}
	s.expect("tai:ollama> ")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if strings.Contains(s.seen.String(), "open sesame") {
		t.Fatal("the passphrase was echoed")
	}
}

// TestServeSealedElsewhereNeverPrompts: a server started on its own
// terminal with the vault open; another process seals it; a client's call
// that needs the key fails at once saying to restart with
// TAI_VAULT_PASSPHRASE, and nothing is asked on the server's terminal.
func TestServeSealedElsewhereNeverPrompts(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "-e", `assert(tai.vault.secret_set("tok", "sealed-secret-value-9"))`); r.status != 0 {
		t.Fatalf("storing a secret: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(e.root, "notes.txt"), []byte("remember the milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startREPLWith(t, e, append(e.vars(), "TAI_MCP_KEY="+serveKey), "--clean", "--serve-mcp", "--mcp-port", "0")
	s.expect("Stop with Ctrl-C")
	m := urlLine.FindStringSubmatch(s.seen.String())
	if m == nil {
		t.Fatalf("no URL in the banner:\n%s", s.seen.String())
	}
	sess := connectSDK(t, m[1])
	defer sess.Close()
	sealElsewhere(t, e)

	// Bounded: a prompt nobody answers would hold the call until then.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "notes.txt"}})
	if err != nil {
		t.Fatalf("read_file on a vault sealed elsewhere: %v; the server's terminal:\n%s", err, s.seen.String())
	}
	text := textOf(res)
	if !res.IsError || !strings.Contains(text, "sealed by another process") || !strings.Contains(text, "restart it with TAI_VAULT_PASSPHRASE set") || strings.Contains(text, "milk") {
		t.Fatalf("read_file on a vault sealed elsewhere: %q (isError %v)", text, res.IsError)
	}
	if strings.Contains(s.seen.String(), "passphrase: ") {
		t.Fatalf("the server asked on its terminal:\n%s", s.seen.String())
	}
}

// TestPromptWithoutATerminalNamesTheVariable: tai -p with no terminal to
// ask on and a sealed vault fails at once, naming TAI_VAULT_PASSPHRASE
// once.
func TestPromptWithoutATerminalNamesTheVariable(t *testing.T) {
	e := newEnv(t)
	if r := e.runEnv(t, append(e.vars(), "TAI_VAULT_PASSPHRASE=pw"), "-e", `assert(tai.vault.secret_set("tok", "sealed-secret-value-9")) assert(tai.vault.seal())`); r.status != 0 {
		t.Fatalf("sealing: %+v", r)
	}
	// runEnv starts tai in a session of its own: no terminal.
	r := e.run(t, "--clean", "-p", "hello")
	if r.status != 1 || strings.Count(r.stderr, "TAI_VAULT_PASSPHRASE") != 1 {
		t.Fatalf("tai -p, sealed, no terminal: status %d, stderr %q; want 1 and TAI_VAULT_PASSPHRASE named once", r.status, r.stderr)
	}
}
