package bridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/sandbox"
	"tai/engine/tool"
)

// TestSandboxRefusalNamesTheGrant: a server the sandbox refuses a file as
// it starts, or a tool of which it refuses one, says so in at most three
// lines, naming the path, the server and the exact line for the entry's
// sandbox field, and /mcp allow when the server is stored; Allow, a
// person's, asks consent again with the new sandbox line, and the server
// then reads the file. A model cannot allow.
func TestSandboxRefusalNamesTheGrant(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	data := filepath.Join(t.TempDir(), "config.json")
	f := newFixture(t, tool.Interactive, "")
	// Stored while the file is missing: the server starts without it.
	f.add(t, "srv", map[string]string{serverNeedsEnv: data})
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	f.b.Close()
	if err := os.WriteFile(data, []byte(`{"ok": true}`), 0o600); err != nil {
		t.Fatal(err)
	}

	g := newFixture(t, tool.Interactive, f.path)
	_, err := g.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"})
	if err == nil {
		t.Fatal("the server read a file its sandbox does not grant")
	}
	msg := err.Error()
	if n := strings.Count(msg, "\n") + 1; n > 3 {
		t.Errorf("the refusal is %d lines:\n%s", n, msg)
	}
	mustContain(t, "refusal", msg, "tai's sandbox refused "+data+" to mcp server srv",
		"/mcp allow srv "+data, `"sandbox": {"read":["`+data+`"]}`)

	if _, err := g.b.Allow(tool.WithCaller(ctxT(t), tool.Caller{ByModel: true}), "srv", []string{data}); err == nil {
		t.Fatal("a model widened a server's sandbox")
	}
	before := len(g.p.questions())
	said, err := g.b.Allow(ctxT(t), "srv", []string{data})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "allow", said, "may now read "+data)
	qs := g.p.questions()
	if len(qs) != before+1 {
		t.Fatalf("allow asked %d questions", len(qs)-before)
	}
	mustContain(t, "question", qs[len(qs)-1], "sandbox: reads: system", data)
	res, err := g.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"})
	if err != nil || text(res) != "x" {
		t.Fatalf("after allow: %v %q", err, text(res))
	}
	if qs := g.p.questions(); len(qs) != before+1 {
		t.Errorf("the allowed spawn was asked about again: %q", qs[before+1:])
	}

	// A tool's result that names a path the sandbox refused says so (the
	// registry writes the path the call gave as <path> in a failure).
	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = g.reg.Dispatch(ctxT(t), "mcp_srv_read", map[string]any{"path": other})
	if err != nil || !res.IsError {
		t.Fatalf("read: %v %+v", err, res)
	}
	mustContain(t, "result", text(res), "tai's sandbox refused <path> to mcp server srv",
		"/mcp allow srv <path>", `"sandbox": {"read":["`+data+`","<path>"]}`)

	// A server refused as it is added is not stored: no /mcp allow.
	rep, err := g.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "srv2", map[string]string{serverNeedsEnv: data})})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome != Refused {
		t.Fatalf("add: %+v %v", rep, err)
	}
	reason := rep.Servers[0].Reason
	mustContain(t, "add", reason, "tai's sandbox refused "+data+" to mcp server srv2", "add it again", `"sandbox": {"read":["`+data+`"]}`)
	if strings.Contains(reason, "/mcp allow") {
		t.Errorf("an unstored server is offered /mcp allow: %s", reason)
	}
}
