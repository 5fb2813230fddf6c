package bridge

import (
	"os"
	"reflect"
	"testing"

	"tai/engine"
	"tai/mcp"
)

// sandboxJSON is serverJSON with the entry's sandbox field set to sb.
func sandboxJSON(t testing.TB, name string, sb any) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return entryJSON(t, name, map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{serverEnv: "1"}, "sandbox": sb})
}

// TestSandboxStoredAndConsentedAgain: the entry's sandbox setting is
// stored with the server and read back whole; a stored setting that
// changes afterwards is a different spawn, asked about again like a
// changed argument, and the default leaves the digest of a server
// stored before the field unchanged.
func TestSandboxStoredAndConsentedAgain(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, engine.Interactive, "")
	sb := &mcp.Sandbox{Read: []string{dir}, NoNetwork: true, Required: true}
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: sandboxJSON(t, "srv", map[string]any{"read": []string{dir}, "network": false, "required": true})})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	row, err := f.store.ServerGet("srv")
	if err != nil {
		t.Fatal(err)
	}
	if got := EntryOf(row).Sandbox; !reflect.DeepEqual(got, sb) {
		t.Fatalf("stored sandbox = %+v, want %+v", got, sb)
	}
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if qs := f.p.questions(); len(qs) != 1 {
		t.Fatalf("the same spawn was asked about again: %q", qs)
	}
	f.b.Close()

	// The stored setting changes (the sandbox turned off): the next start
	// asks again.
	row.Sandbox.Off, row.Sandbox.Read, row.Sandbox.NoNetwork, row.Sandbox.Required = true, nil, false, false
	if err := f.store.ServerPut(row); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, engine.Interactive, f.path)
	g.p.answer = "n"
	if _, err := g.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"}); err == nil {
		t.Fatal("a refused spawn started")
	}
	qs := g.p.questions()
	if len(qs) != 1 {
		t.Fatalf("a changed sandbox was not asked about: %q", qs)
	}
	mustContain(t, "question", qs[0], "differs from the one you consented to")

	// The default adds nothing to the digest.
	e := mcp.Entry{Name: "x", Transport: mcp.TransportStdio, Command: "srv"}
	plain := spawnOf(e, e, func(string) string { return "" }).digest()
	e.Sandbox = &mcp.Sandbox{}
	if d := spawnOf(e, e, func(string) string { return "" }).digest(); d != plain {
		t.Fatalf("an empty sandbox setting changed the digest")
	}
	e.Sandbox = &mcp.Sandbox{Off: true}
	if d := spawnOf(e, e, func(string) string { return "" }).digest(); d == plain {
		t.Fatalf("sandbox = false left the digest as it was")
	}
}
