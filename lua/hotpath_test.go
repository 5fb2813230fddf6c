package lua

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"tai/engine"
	"tai/engine/tool"
	"tai/vault"
)

// countingVault is openTestVault with a counter of the store's bbolt opens.
func countingVault(t testing.TB, passphrase string) (func() (*vault.Store, error), *atomic.Int64) {
	path := filepath.Join(t.TempDir(), "vault.db")
	n := new(atomic.Int64)
	return func() (*vault.Store, error) {
		return vault.Open(path, &vault.Options{
			Passphrase: func() (string, error) { return passphrase, nil },
			OnOpen:     func() { n.Add(1) },
		})
	}, n
}

// c:call opens the vault for nothing while no secret changes, however
// many strings the result holds, and still redacts a secret set between
// two calls.
func TestMCPCallOpensNoVault(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	open, opens := countingVault(t, "pw")
	h := newHost(t, Options{Vault: open}, nil)
	ctx := ctxT(t)
	if _, err := h.DoString(ctx, fmt.Sprintf(`
		assert(tai.vault.secret_set("tok", "s3cr3t-token-value"))
		c = assert(tai.mcp.connect{name = "fake", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = "1"}})
		assert(c:call("echo", {text = "warm up"}))`, exe), "setup"); err != nil {
		t.Fatal(err)
	}
	before := opens.Load()
	got, err := h.DoString(ctx, `
		local last
		for i = 1, 50 do last = assert(c:call("echo", {text = "s3cr3t-token-value " .. i})) end
		return last.content[1].text`, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if n := opens.Load() - before; n != 0 {
		t.Fatalf("50 c:call opened the vault %d times, want 0", n)
	}
	if got[0] != "echo: [REDACTED:tok] 50" {
		t.Fatalf("result = %v", got[0])
	}
	got, err = h.DoString(ctx, `
		assert(tai.vault.secret_set("late", "another-secret-value"))
		return assert(c:call("echo", {text = "another-secret-value"})).content[1].text`, "late")
	if err != nil || got[0] != "echo: [REDACTED:late]" {
		t.Fatalf("after a new secret: %v, %v", got, err)
	}
}

// A safe tai.call of a Lua tool (dispatch, redaction, audit) opens the
// vault for nothing while no secret changes, and its audit entries are all
// in the trail.
func TestSafeCallOpensNoVault(t *testing.T) {
	open, opens := countingVault(t, "pw")
	h := newHost(t, Options{Vault: open, Engine: &engine.Options{Dir: t.TempDir(), Getenv: func(string) string { return "" }}}, nil)
	ctx := ctxT(t)
	if _, err := h.DoString(ctx, `
		assert(tai.vault.secret_set("tok", "s3cr3t-token-value"))
		tai.tool{name = "echo", description = "echoes", safe = true, run = function(a) return a.message end}
		assert(tai.call("echo", {message = "warm up"}))`, "setup"); err != nil {
		t.Fatal(err)
	}
	before := opens.Load()
	got, err := h.DoString(ctx, `
		local last
		for i = 1, 50 do last = assert(tai.call("echo", {message = "s3cr3t-token-value " .. i})) end
		return last.content[1].text`, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if n := opens.Load() - before; n != 0 {
		t.Fatalf("50 safe tai.call opened the vault %d times, want 0", n)
	}
	if got[0] != "[REDACTED:tok] 50" {
		t.Fatalf("result = %v", got[0])
	}
	got, err = h.DoString(ctx, `return tai.vault.audit_verify()`, "verify")
	if err != nil || len(got) == 0 || got[0].(int64) < 51 {
		t.Fatalf("audit_verify = %v, %v; want every call in the trail", got, err)
	}
}

// A Lua tool's table and the lua tool's returned values are redacted as
// values, before JSON encoding could escape a secret's & < > out of
// redaction's sight.
func TestStructuredValuesAreRedactedBeforeEncoding(t *testing.T) {
	open, _ := countingVault(t, "pw")
	h := newHost(t, Options{Vault: open, Engine: &engine.Options{Dir: t.TempDir(), Getenv: func(string) string { return "" }}, Mode: tool.Yolo}, nil)
	got, err := h.DoString(ctxT(t), `
		assert(tai.vault.secret_set("pw", "Tr0ub4dor&3<x>"))
		tai.tool{name = "conf", description = "returns a table", safe = true, run = function()
			return {user = "me", password = "Tr0ub4dor" .. "&3<x>", list = {"a", "Tr0ub4dor&3<x>"}}
		end}
		local a = assert(tai.call("conf", {})).content[1].text
		local b = assert(tai.call("lua", {chunk = 'return "Tr0ub4dor" .. "&3<x>", {k = "Tr0ub4dor" .. "&3<x>"}'})).content[1].text
		return a, b`, "t")
	if err != nil {
		t.Fatal(err)
	}
	for i, out := range got {
		s := out.(string)
		if strings.Contains(s, "Tr0ub4dor") || !strings.Contains(s, "[REDACTED:pw]") {
			t.Errorf("result %d = %s", i+1, s)
		}
	}
}

// The stream redactor follows the vault: a secret set while a stream is
// under way is redacted from the rest of it, split across pieces or not.
func TestStreamRedactorSeesASecretSetMidStream(t *testing.T) {
	open, _ := countingVault(t, "")
	store, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, err := NewStreamRedactor(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	push := func(s string) {
		t.Helper()
		got, err := r.Push(s)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(got)
	}
	push("before the secret, ")
	if err := store.SecretSet("mid", "mid-stream-secret-42", nil); err != nil {
		t.Fatal(err)
	}
	push("it is mid-str")
	push("eam-secret-42 and again mid-stream-secret-42.")
	rest, err := r.Flush()
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString(rest)
	if got := out.String(); strings.Contains(got, "mid-stream-secret") || strings.Count(got, "[REDACTED:mid]") != 2 {
		t.Fatalf("stream = %q", got)
	}
}
