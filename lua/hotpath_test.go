package lua

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"tai/engine"
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
