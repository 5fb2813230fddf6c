package bridge

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"tai/engine/sandbox"
	"tai/engine/tool"
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
	f := newFixture(t, tool.Interactive, "")
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
	g := newFixture(t, tool.Interactive, f.path)
	g.p.answer = "n"
	if _, err := g.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"}); err == nil {
		t.Fatal("a refused spawn started")
	}
	qs := g.p.questions()
	if len(qs) != 1 {
		t.Fatalf("a changed sandbox was not asked about: %q", qs)
	}
	mustContain(t, "question", qs[0], "would start with a command or sandbox that differs from the one you consented to", "⚠ sandbox off")

	// The default adds nothing to the digest.
	e := mcp.Entry{Name: "x", Transport: mcp.TransportStdio, Command: "srv"}
	plain := spawnOf(e, e, func(string) string { return "" }, func(string) bool { return false }).digest()
	e.Sandbox = &mcp.Sandbox{}
	if d := spawnOf(e, e, func(string) string { return "" }, func(string) bool { return false }).digest(); d != plain {
		t.Fatalf("an empty sandbox setting changed the digest")
	}
	e.Sandbox = &mcp.Sandbox{Off: true}
	if d := spawnOf(e, e, func(string) string { return "" }, func(string) bool { return false }).digest(); d == plain {
		t.Fatalf("sandbox = false left the digest as it was")
	}
}

// TestSandboxListed: mcp_list and tai.mcp.list show each stdio server's
// sandbox in one line, and one whose entry turns it off as a warning.
func TestSandboxListed(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, tool.Interactive, "")
	for name, sb := range map[string]any{"boxed": map[string]any{"read": []string{dir}, "network": false}, "open": false} {
		rep, err := f.b.Add(ctxT(t), AddRequest{Source: sandboxJSON(t, name, sb)})
		if err != nil || rep.Servers[0].Outcome != Added {
			t.Fatalf("add %s: %+v, %v", name, rep, err)
		}
	}
	list, err := f.b.List(ctxT(t))
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	boxed, open := list[0], list[1]
	if _, err := sandbox.Available(); err != nil {
		if !strings.HasPrefix(boxed.Sandbox, "none on this system") {
			t.Errorf("boxed, without Landlock: %q", boxed.Sandbox)
		}
	} else if boxed.SandboxOff || !strings.HasPrefix(boxed.Sandbox, "reads: system") || !strings.Contains(boxed.Sandbox, dir) || !strings.HasSuffix(boxed.Sandbox, "network: closed") {
		t.Errorf("boxed: %q (off %v)", boxed.Sandbox, boxed.SandboxOff)
	}
	if !open.SandboxOff || !strings.HasPrefix(open.Sandbox, "off") {
		t.Errorf("open: %q (off %v)", open.Sandbox, open.SandboxOff)
	}
	text := listText(list, "work")
	mustContain(t, "mcp_list", text, "  ⚠ sandbox off: it runs with all of your rights (sandbox = false in its entry)")
}

// TestSandboxRequiredRefused: where no sandbox can run (simulated), an
// entry that requires it is refused before anyone is asked, saying why
// and what to do, and nothing is stored; one that does not is asked
// about with a warning that it runs with all of the person's rights.
func TestSandboxRequiredRefused(t *testing.T) {
	t.Setenv(sandbox.ABIEnv, "0")
	f := newFixture(t, tool.Interactive, "")
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: sandboxJSON(t, "strict", "required")})
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome == Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	mustContain(t, "refusal", rep.Servers[0].Reason, `mcp server "strict" not started: its entry says sandbox = "required" and this system has no Landlock`,
		"$TAI_LANDLOCK_ABI=0 turns it off", "run tai where Landlock works", `take "required" out of the entry's sandbox`)
	if qs := f.p.questions(); len(qs) != 0 {
		t.Fatalf("a person was asked about a server that cannot start: %q", qs)
	}
	if _, err := f.store.ServerGet("strict"); err == nil {
		t.Fatal("the refused server was stored")
	}
	q := asked(t, f, sandboxJSON(t, "loose", map[string]any{"read": []string{t.TempDir()}}))
	mustContain(t, "question", q, "  ⚠ sandbox: none on this system (this system has no Landlock: $TAI_LANDLOCK_ABI=0 turns it off): it runs with all of your rights\n")
	f.p.answer = "y"
	if rep, err := f.b.Add(ctxT(t), AddRequest{Source: sandboxJSON(t, "loose", map[string]any{"read": []string{t.TempDir()}})}); err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("add loose: %+v, %v", rep, err)
	}
	list, err := f.b.List(ctxT(t))
	if err != nil || len(list) != 1 || !list[0].Unsandboxed || list[0].SandboxOff {
		t.Fatalf("list: %+v, %v", list, err)
	}
	mustContain(t, "mcp_list", listText(list, "work"), "  ⚠ sandbox: none on this system (")
}

// TestUnattendedSandboxOff: a model that adds an entry turning the
// sandbox off while nobody is asked (--yolo, --auto) is refused, and
// nothing starts or is stored; a person adding it, or a model asking in
// interactive mode (where the person sees the warning), is not.
func TestUnattendedSandboxOff(t *testing.T) {
	for _, mode := range []tool.Mode{tool.Yolo, tool.Auto} {
		f := newFixture(t, mode, "")
		byModel := tool.WithCaller(ctxT(t), tool.Caller{ByModel: true})
		rep, err := f.b.Add(byModel, AddRequest{Source: sandboxJSON(t, "loose", false)})
		if err != nil || len(rep.Servers) != 1 || rep.Servers[0].Outcome == Added {
			t.Fatalf("%s: a model added an unsandboxed server: %+v, %v", mode, rep, err)
		}
		mustContain(t, "refusal", rep.Servers[0].Reason, "a person must add it at tai's prompt without --"+mode.String(), "it asks for the sandbox off (sandbox = false)")
		if _, err := f.store.ServerGet("loose"); err == nil {
			t.Fatalf("%s: the refused server was stored", mode)
		}
		if rep, err := f.b.Add(byModel, AddRequest{Source: sandboxJSON(t, "boxed", map[string]any{"network": false})}); err != nil || rep.Servers[0].Outcome != Added {
			t.Fatalf("%s: a sandboxed server: %+v, %v", mode, rep, err)
		}
		if rep, err := f.b.Add(ctxT(t), AddRequest{Source: sandboxJSON(t, "loose", false)}); err != nil || rep.Servers[0].Outcome != Added {
			t.Fatalf("%s: a person's own add: %+v, %v", mode, rep, err)
		}
	}
	f := newFixture(t, tool.Interactive, "")
	byModel := tool.WithCaller(ctxT(t), tool.Caller{ByModel: true})
	if rep, err := f.b.Add(byModel, AddRequest{Source: sandboxJSON(t, "loose", false)}); err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("interactive: %+v, %v", rep, err)
	}
	mustContain(t, "question", f.p.questions()[0], "⚠ sandbox off")
}
