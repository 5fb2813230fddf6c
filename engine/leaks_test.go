package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"tai/engine/builtin"
	"tai/engine/llm"
	"tai/engine/tool"
	"tai/vault"
)

// leakEngine is an engine in Yolo mode whose vault holds secret under name.
func leakEngine(t *testing.T, name, secret string) (*Engine, *Session) {
	t.Helper()
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	if err := e.Store().SecretSet(name, secret, nil); err != nil {
		t.Fatal(err)
	}
	return e, newSession(t, e)
}

func dispatchText(t *testing.T, s *Session, toolName string, args map[string]any) string {
	t.Helper()
	res, err := s.Dispatch(context.Background(), toolName, args)
	if err != nil {
		return "Go error: " + err.Error()
	}
	return res.Text()
}

// grep redacts each line before it clips it to 400 bytes, so no part of a
// secret straddling the clip is shown.
func TestGrepRedactsBeforeClipping(t *testing.T) {
	secret := "clip-secret-0123456789abcdefghij"
	e, s := leakEngine(t, "clipped", secret)
	line := "match " + strings.Repeat("x", 380) + secret + strings.Repeat("y", 100)
	if err := os.WriteFile(filepath.Join(e.Dir(), "long.txt"), []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := dispatchText(t, s, "grep", map[string]any{"pattern": "match", "path": "long.txt"})
	if strings.Contains(out, secret[:8]) || !strings.Contains(out, "long.txt:1:") {
		t.Fatalf("grep shows part of a secret straddling the clip:\n%s", out)
	}
}

// grep matches on the redacted text: a pattern cannot probe a secret's
// characters one at a time.
func TestGrepCannotProbeASecret(t *testing.T) {
	secret := "probe-me-Q7x9Lm2Zk4Wt8Rv"
	e, s := leakEngine(t, "probed", secret)
	if err := os.WriteFile(filepath.Join(e.Dir(), "conf.txt"), []byte("token="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"token=probe-me-Q", "probe-me-Q7", "Q7x9L", "token=p.*v$"} {
		out := dispatchText(t, s, "grep", map[string]any{"pattern": pattern, "path": "conf.txt"})
		if !strings.Contains(out, "no matches") {
			t.Fatalf("grep %q matched inside a secret:\n%s", pattern, out)
		}
	}
	if out := dispatchText(t, s, "grep", map[string]any{"pattern": `token=\[REDACTED:probed\]`, "path": "conf.txt"}); !strings.Contains(out, "conf.txt:1:") {
		t.Fatalf("grep on the redacted text found nothing:\n%s", out)
	}
}

// An error that repeats a path the model gave does not show whether the
// path held a secret: the path is named, not repeated.
func TestErrorsDoNotConfirmAGuessedSecret(t *testing.T) {
	secret := "guess-me-5Hq2Vn8Kc3Tz"
	_, s := leakEngine(t, "guessed", secret)
	for _, guess := range []string{secret, "guess-me-5Hq2Vn8Kc3Ta"} {
		out := dispatchText(t, s, "read_file", map[string]any{"path": "missing/" + guess})
		if strings.Contains(out, "REDACTED") || strings.Contains(out, guess) {
			t.Fatalf("read_file error for the guess %q says %q", guess, out)
		}
	}
}

// record_read redacts the whole record before it pages it: a secret known
// only after the record was stored is not split across two reads.
func TestRecordReadRedactsBeforePaging(t *testing.T) {
	secret := "split-secret-ABCDEFGHIJ0123456789"
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	text := strings.Repeat("a", builtin.RecordReadDefault-10) + secret + strings.Repeat("b", 100)
	id, err := e.Store().RecordPut(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store().SecretSet("later", secret, nil); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, e)
	var all strings.Builder
	for offset := 0; offset < len(text); offset += builtin.RecordReadDefault {
		out := dispatchText(t, s, "record_read", map[string]any{"id": id, "offset": float64(offset), "length": float64(builtin.RecordReadDefault)})
		if strings.Contains(out, secret[:10]) || strings.Contains(out, secret[len(secret)-10:]) {
			t.Fatalf("record_read at %d shows part of the secret:\n%.200s…", offset, out[max(0, len(out)-200):])
		}
		all.WriteString(out)
	}
	if !strings.Contains(all.String(), "[REDACTED:later]") {
		t.Fatal("the secret was not redacted in any page")
	}
}

// A secret of several lines (a PEM key) is redacted also where only some of
// its lines are shown.
func TestMultiLineSecretRedactedLineByLine(t *testing.T) {
	lines := []string{
		"-----BEGIN OPENSSH PRIVATE KEY-----",
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
		"QyNTUxOQAAACDx4oLq9mYwB0m1F0n5TnpJb8s2vF1X8uU0b1Jzq2m2yQAAAJgkq5o1JKua",
		"-----END OPENSSH PRIVATE KEY-----",
	}
	e, s := leakEngine(t, "ssh-key", strings.Join(lines, "\n")+"\n")
	if err := os.WriteFile(filepath.Join(e.Dir(), "part.txt"), []byte("some of it:\n"+lines[2]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := dispatchText(t, s, "read_file", map[string]any{"path": "part.txt"})
	if strings.Contains(out, lines[2][:20]) || !strings.Contains(out, "[REDACTED:ssh-key]") {
		t.Fatalf("one line of a multi-line secret passed:\n%s", out)
	}
}

// secret_set refuses a value over the cap, and stores one too short to be
// redacted with a warning saying so.
func TestSecretSetLimits(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	s := newSession(t, e)
	big := strings.Repeat("z", 64<<10+1)
	if out := dispatchText(t, s, "secret_set", map[string]any{"name": "big", "value": big}); !strings.Contains(out, "64 KiB") {
		t.Fatalf("secret_set of %d bytes = %.300q", len(big), out)
	}
	if _, _, err := e.Store().SecretGet("big"); err == nil {
		t.Fatal("the oversized secret was stored")
	}
	out := dispatchText(t, s, "secret_set", map[string]any{"name": "pin", "value": "123"})
	if !strings.Contains(out, "stored") || !strings.Contains(out, "cannot be redacted") {
		t.Fatalf("secret_set of a 3-byte value = %q", out)
	}
	if v, _, err := e.Store().SecretGet("pin"); err != nil || v != "123" {
		t.Fatalf("short secret: %q, %v", v, err)
	}
}

// A secret set during a turn is redacted from every later result of it.
func TestSecretSetMidTurnIsRedactedAfterwards(t *testing.T) {
	e, s := leakEngine(t, "old", "old-secret-value")
	if err := os.WriteFile(filepath.Join(e.Dir(), "new.txt"), []byte("fresh-secret-value-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := dispatchText(t, s, "secret_set", map[string]any{"name": "fresh", "value": "fresh-secret-value-77"}); !strings.Contains(out, "stored") {
		t.Fatal(out)
	}
	if out := dispatchText(t, s, "read_file", map[string]any{"path": "new.txt"}); strings.Contains(out, "fresh-secret-value-77") {
		t.Fatalf("read_file after secret_set: %q", out)
	}
}

// While another holder keeps the vault locked past the lock timeout after
// a secret changed, read_file of a file holding that secret fails naming
// the lock; it never returns the secret.
func TestReadFileFailsClosedWhileTheVaultIsLocked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vault.db")
	store, err := vault.Open(path, &vault.Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err := New(store, &Options{Dir: dir, Getenv: noEnv, Mode: tool.Yolo, NewClient: func(llm.Profile) (llm.ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, e)
	secret := "locked-out-secret-31337"
	if err := os.WriteFile(filepath.Join(dir, "creds.txt"), []byte("key="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := dispatchText(t, s, "read_file", map[string]any{"path": "creds.txt"}); !strings.Contains(out, secret) {
		t.Fatalf("before the secret is known: %q", out)
	}
	// Another writer stores the secret, then holds the lock (bbolt's own
	// flock on a separate open of the file, as another process would).
	other, err := vault.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.SecretSet("creds", secret, nil); err != nil {
		t.Fatal(err)
	}
	other.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := dispatchText(t, s, "read_file", map[string]any{"path": "creds.txt"})
	if strings.Contains(out, secret) || !strings.Contains(out, "locked") {
		t.Fatalf("read_file while the vault is locked = %q, want a refusal naming the lock", out)
	}
	db.Close()
	if out := dispatchText(t, s, "read_file", map[string]any{"path": "creds.txt"}); strings.Contains(out, secret) || !strings.Contains(out, "[REDACTED:creds]") {
		t.Fatalf("after the lock is released: %q", out)
	}
}

// http_fetch output is redacted before it is cut to its limit: the cut
// cannot leave the first bytes of a secret (the shell's is checked in
// engine/builtin).
func TestCutsComeAfterRedaction(t *testing.T) {
	secret := "cut-secret-Zq8Wm3Xv7Pk2"
	_, s := leakEngine(t, "cut", secret)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", 95)+secret+strings.Repeat("y", 100))
	}))
	defer srv.Close()
	out := dispatchText(t, s, "http_fetch", map[string]any{"url": srv.URL, "max_bytes": float64(100)})
	if strings.Contains(out, secret[:5]) || !strings.Contains(out, "cut there") {
		t.Fatalf("http_fetch cut at 100 bytes:\n%s", out)
	}
}
