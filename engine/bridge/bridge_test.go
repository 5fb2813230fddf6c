package bridge

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tai/engine"
	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp"
	"tai/vault"
)

func TestAddVerifyEnableCall(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	f.p.answer = "d" // add it disabled
	out := f.add(t, "srv", nil)
	if out.Enabled || out.Profile != "work" || !slices.Contains(out.Tools, "echo") {
		t.Fatalf("outcome = %+v", out)
	}
	// Consent came first, once, and showed the exact argv and the choices.
	qs := f.p.questions()
	if len(qs) != 1 {
		t.Fatalf("questions = %q", qs)
	}
	exe, _ := os.Executable()
	mustContain(t, "consent", qs[0], "srv", exe, "-test.run=^$", "env:     "+serverEnv,
		"y: add it and enable it for profile work", "d: add it disabled", "N: no")

	states, err := f.store.ServerStates()
	if err != nil || len(states) != 1 {
		t.Fatalf("states = %+v, %v", states, err)
	}
	st := states[0]
	if on, ok := st.Profiles["work"]; !ok || on {
		t.Fatalf("profile rows = %v, want work stored disabled", st.Profiles)
	}
	if len(st.Pins) != len(st.Tools) || len(st.Tools) != len(out.Tools) || st.Server.Source != "config-json" || st.Server.Consented == "" {
		t.Fatalf("stored = %+v", st)
	}
	if got := f.reg.Specs(); slices.ContainsFunc(got, func(s llm.ToolSpec) bool { return strings.HasPrefix(s.Name, "mcp_srv_") }) {
		t.Fatalf("a disabled server's tools are offered: %v", specNames(got))
	}
	// Calling a disabled server's tool says why.
	res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "hi"})
	if err != nil || !res.IsError {
		t.Fatalf("disabled call = %+v, %v", res, err)
	}
	mustContain(t, "disabled call", text(res), "not enabled for profile", "mcp_enable")

	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	names := specNames(f.reg.Specs())
	for _, want := range []string{"mcp_srv_echo", "mcp_srv_big", "mcp_srv_fail"} {
		if !slices.Contains(names, want) {
			t.Fatalf("specs %v lack %s", names, want)
		}
	}
	sel := f.reg.SelectTools([]llm.Message{{Role: "user", Content: "please echoes text"}}, tool.SelectOptions{})
	if !slices.Contains(specNames(sel), "mcp_srv_echo") {
		t.Fatalf("select_tools did not pick the bridged echo: %v", specNames(sel))
	}

	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{name: "echo", tool: "mcp_srv_echo", args: map[string]any{"text": "héllo"}, want: "héllo"},
		{name: "tool error stays isError", tool: "mcp_srv_fail", want: "the tool ran and failed", isError: true},
		{name: "big result spills", tool: "mcp_srv_big", args: map[string]any{"bytes": 100000}, want: "record_read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.reg.Dispatch(ctxT(t), tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Fatalf("isError = %v: %s", res.IsError, text(res))
			}
			mustContain(t, tt.tool, text(res), tt.want)
		})
	}
	// Every call asked approval, naming the server and tool.
	for _, c := range f.p.consents {
		if !strings.HasPrefix(c.Origin, "srv/") {
			t.Fatalf("consent %+v does not name the server", c)
		}
	}
	calls := auditKinds(t, f.store, "mcp-call")
	if len(calls) < 4 {
		t.Fatalf("mcp-call audit = %+v", calls)
	}
	last := calls[len(calls)-1]
	if last.Subject != "srv/big" || last.Outcome != "ok" || last.Size < 100000 || last.Digest == "" {
		t.Fatalf("last audit = %+v", last)
	}
	// A JSON-RPC error stays an error, through mcp_call too.
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"mcp_srv_protocol", nil}, {"mcp_call", map[string]any{"server": "srv", "tool": "protocol"}}} {
		res, err := f.reg.Dispatch(ctxT(t), call.name, call.args)
		var me *mcp.WireError
		if !errors.As(err, &me) || me.Code != -32603 {
			t.Fatalf("%s: %+v, %v; want a JSON-RPC error -32603", call.name, res, err)
		}
	}
	if got := auditKinds(t, f.store, "mcp-call"); got[len(got)-1].Outcome != "error" {
		t.Fatalf("audit of the protocol error: %+v", got[len(got)-1])
	}
}

func TestSpilledResultReadsBack(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.add(t, "srv", nil)
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_big", map[string]any{"bytes": 70000})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := f.store.RecordList(1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records = %v, %v", recs, err)
	}
	mustContain(t, "spill note", text(res), recs[0].ID)
	text, _, err := f.store.RecordGet(recs[0].ID, 0, 0)
	if err != nil || len(text) != 70000 {
		t.Fatalf("record = %d bytes, %v", len(text), err)
	}
}

func TestVerificationFailureStoresNothing(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.b.opts.Clean = func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "broken", map[string]string{serverEnv: "fail"})})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Outcome != Refused {
		t.Fatalf("report = %+v", rep)
	}
	reason := rep.Servers[0].Reason
	mustContain(t, "reason", reason, "verification failed, nothing stored", "cannot open the database", `\x1b[31m`)
	if strings.Contains(reason, "\x1b") {
		t.Fatalf("reason holds a raw escape: %q", reason)
	}
	if list, _ := f.store.ServerList(); len(list) != 0 {
		t.Fatalf("a failed verification stored %+v", list)
	}
}

func TestCrashRestartsOnNextCall(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	state := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(state, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.add(t, "srv", map[string]string{serverStateEnv: state})
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "one"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.reg.Dispatch(ctxT(t), "mcp_srv_crash", nil)
	if err == nil {
		t.Fatal("a crash mid-call was not an error")
	}
	mustContain(t, "crash error", err.Error(), "crash: the server is going down", "starts it again on the next call")
	res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "two"})
	if err != nil || text(res) != "two" {
		t.Fatalf("after the crash: %+v, %v", res, err)
	}
	// When the restart fails too, the error carries the stderr tail.
	if _, err := f.reg.Dispatch(ctxT(t), "mcp_srv_crash", nil); err == nil {
		t.Fatal("second crash was not an error")
	}
	if err := os.WriteFile(state, []byte("fail"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "three"})
	if err == nil {
		t.Fatal("a failed restart was not an error")
	}
	mustContain(t, "failed restart", err.Error(), "cannot open the database")
}

func TestRugPull(t *testing.T) {
	// The state lies outside the vault's folder, which no server reaches.
	state := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(t.TempDir(), "vault.db")
	if err := os.WriteFile(state, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{serverStateEnv: state}
	first := newFixture(t, tool.Auto, path)
	if out := first.add(t, "srv", env); out.Consent != "auto" || !strings.Contains(render(t, *out.Spawn), "-test.run=^$") {
		t.Fatalf("--auto start not reported: %+v", out)
	}
	if _, err := first.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	if res, err := first.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "v1"}); err != nil || res.IsError {
		t.Fatalf("v1 echo: %+v, %v", res, err)
	}
	first.b.Close()
	first.store.Close()

	// Between runs the server redefines echo, drops gone and adds extra.
	if err := os.WriteFile(state, []byte("v2"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []tool.Mode{tool.Auto, tool.Yolo} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode, path)
			res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "v2"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError {
				t.Fatalf("a redefined tool ran under --%s: %s", mode, text(res))
			}
			mustContain(t, "withheld echo", text(res), "withheld", "description changed", "/mcp grant srv echo")
			if strings.Contains(text(res), "IMPORTANT") {
				t.Fatalf("the model was handed the new description: %s", text(res))
			}
			names := specNames(f.reg.Specs())
			if slices.Contains(names, "mcp_srv_echo") || slices.Contains(names, "mcp_srv_extra") || slices.Contains(names, "mcp_srv_gone") {
				t.Fatalf("offered after the drift: %v", names)
			}
			if !slices.Contains(names, "mcp_srv_fail") {
				t.Fatalf("an unchanged tool is no longer offered: %v", names)
			}
			tools, err := f.b.Tools(ctxT(t), "srv")
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]string{}
			for _, ti := range tools {
				states[ti.Tool] = ti.State
				if strings.Contains(ti.Description+ti.Reason, "IMPORTANT") {
					t.Fatalf("mcp_tools shows the new description: %+v", ti)
				}
			}
			if states["echo"] != StateWithheld || states["extra"] != StateWithheld || states["gone"] != StateRemoved || states["fail"] != StateGranted {
				t.Fatalf("states = %v", states)
			}
			if len(f.p.questions()) != 0 {
				t.Fatalf("--%s asked: %q", mode, f.p.questions())
			}
			f.b.Close()
			f.store.Close()
		})
	}

	// A person grants echo after seeing the diff; extra stays withheld.
	f := newFixture(t, tool.Interactive, path)
	f.p.answer = "n"
	if _, err := f.b.Grant(ctxT(t), "srv", ""); err != nil {
		t.Fatal(err)
	}
	f.p.answer = "y"
	granted, err := f.b.Grant(ctxT(t), "srv", "echo")
	if err != nil || !slices.Equal(granted, []string{"echo"}) {
		t.Fatalf("granted %v, %v", granted, err)
	}
	qs := f.p.questions()
	if len(qs) != 3 { // echo and extra refused, then echo granted
		t.Fatalf("questions = %q", qs)
	}
	mustContain(t, "grant question", strings.Join(qs, "\n"), "redefined tool echo", "- echoes text", "+ echoes text. IMPORTANT")
	res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "granted"})
	if err != nil || res.IsError || text(res) != "granted" {
		t.Fatalf("after the grant: %+v, %v", res, err)
	}
	if res, _ := f.reg.Dispatch(ctxT(t), "mcp_srv_extra", nil); !res.IsError {
		t.Fatalf("extra ran without a grant: %s", text(res))
	}
}

func TestListChangedRelists(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.add(t, "srv", nil)
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	if res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_grow", nil); err != nil || text(res) != "grown" {
		t.Fatalf("grow: %+v, %v", res, err)
	}
	// The server announced the new tool; the next call lists again, and
	// the new tool is withheld.
	for range 50 {
		if _, err := f.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		tools, _ := f.b.Tools(ctxT(t), "srv")
		for _, ti := range tools {
			if ti.Tool == "late" {
				if ti.State != StateWithheld || ti.Offered {
					t.Fatalf("late = %+v", ti)
				}
				return
			}
		}
	}
	t.Fatal("tools/list_changed was never acted on")
}

func TestModelInServedTurnCannotAdd(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.reg.Approver().SetPrompter(nil) // a served session: nobody to ask
	src := serverJSON(t, "srv", nil)
	args, _ := jsonString(map[string]any{"source": src})
	model := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("mcp_add", args)), llmtest.Say("done"))
	client, err := llm.NewChatClient(llm.Profile{Name: "t", Provider: "openai", BaseURL: model.BaseURL, Model: "fake"}, f.store, &llm.ClientOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	agent := engine.NewAgent(f.reg, engine.StaticModel(client, ""), nil)
	if _, err := agent.RunTurn(ctxT(t), "add it", nil); err != nil {
		t.Fatal(err)
	}
	results := model.Requests()[1].ToolResults()
	if len(results) != 1 {
		t.Fatalf("tool results = %+v", results)
	}
	mustContain(t, "model's mcp_add", results[0].Text, "nobody is present to consent")
	if list, _ := f.store.ServerList(); len(list) != 0 {
		t.Fatalf("the model registered %+v", list)
	}
	// The key holder's own call runs.
	res, err := f.reg.Dispatch(ctxT(t), "mcp_add", map[string]any{"source": src})
	if err != nil || res.IsError {
		t.Fatalf("direct mcp_add: %+v, %v", res, err)
	}
}

func TestSecretsRedacted(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	if err := f.store.SecretSet("sv", "s3cr3t-value-42", nil); err != nil {
		t.Fatal(err)
	}
	f.add(t, "srv", map[string]string{"SECRET_VALUE": "${sv}"})
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Dispatch(ctxT(t), "mcp_srv_env", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); got != "value=[REDACTED:sv]" {
		t.Fatalf("result = %q", got)
	}
	row, _ := f.store.ServerGet("srv")
	if row.Env["SECRET_VALUE"] != "${sv}" {
		t.Fatalf("stored env = %v, want the reference kept", row.Env)
	}
	// A missing variable refuses the spawn, naming it.
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "other", map[string]string{"X": "${NOPE_NOT_SET}"})})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Servers[0].Outcome != Refused {
		t.Fatalf("report = %+v", rep)
	}
	mustContain(t, "missing var", rep.Servers[0].Reason, "NOPE_NOT_SET")
}

func TestCaps(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.b.opts.MaxServers, f.b.opts.MaxTools = 2, 3
	f.add(t, "one", nil)
	f.add(t, "two", nil)
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "three", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Servers[0].Outcome != Refused {
		t.Fatalf("the third server: %+v", rep)
	}
	mustContain(t, "cap", rep.Servers[0].Reason, "MCP_MAX_SERVERS")
	// Already there: skipped.
	rep, _ = f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "one", nil)})
	if rep.Servers[0].Outcome != Skipped {
		t.Fatalf("again: %+v", rep)
	}
	f.b.opts.MaxServers = 0
	if _, err := f.b.SetEnabled(ctxT(t), "one", "", true); err != nil {
		t.Fatal(err)
	}
	f.b.reload()
	var offered []string
	for _, n := range specNames(f.reg.Specs()) {
		if strings.HasPrefix(n, "mcp_one_") {
			offered = append(offered, n)
		}
	}
	if len(offered) != 3 {
		t.Fatalf("offered %v, want MCP_MAX_TOOLS = 3", offered)
	}
	tools, _ := f.b.Tools(ctxT(t), "one")
	notes := 0
	for _, ti := range tools {
		if strings.Contains(ti.Reason, "MCP_MAX_TOOLS") {
			notes++
		}
	}
	if notes != len(tools)-3 {
		t.Fatalf("%d of %d tools noted as over the cap", notes, len(tools))
	}
}

func TestRemoveAsksFirst(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	f.add(t, "srv", nil)
	f.p.answer = "n"
	if err := f.b.Remove(ctxT(t), "srv"); err == nil {
		t.Fatal("removed without a yes")
	}
	if _, err := f.store.ServerGet("srv"); err != nil {
		t.Fatal(err)
	}
	f.p.answer = "y"
	if err := f.b.Remove(ctxT(t), "srv"); err != nil {
		t.Fatal(err)
	}
	qs := f.p.questions()
	mustContain(t, "question", qs[len(qs)-1], "Remove MCP server srv")
	if _, err := f.store.ServerGet("srv"); err == nil {
		t.Fatal("still stored")
	}
	if pins, _ := f.store.Pins("srv"); len(pins) != 0 {
		t.Fatalf("pins left: %v", pins)
	}
}

func TestBridgedNames(t *testing.T) {
	long := strings.Repeat("a", 80)
	tests := []struct {
		name, server, tool, want string
	}{
		{name: "plain", server: "memory", tool: "read_graph", want: "mcp_memory_read_graph"},
		{name: "sanitized", server: "My-Server", tool: "get.Sum", want: "mcp_my_server_get_sum"},
		{name: "unicode", server: "srv", tool: "日本", want: "mcp_srv___"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BridgedName(tt.server, tt.tool); got != tt.want {
				t.Fatalf("BridgedName = %q, want %q", got, tt.want)
			}
		})
	}
	a, b := BridgedName("srv", long+"x"), BridgedName("srv", long+"y")
	if len(a) != MaxNameLen || len(b) != MaxNameLen || a == b {
		t.Fatalf("long names %q %q", a, b)
	}
	n := newNamer()
	first, second := n.name("srv", "get-sum"), n.name("srv", "get_sum")
	if first != "mcp_srv_get_sum" || second != "mcp_srv_get_sum_2" {
		t.Fatalf("collision: %q %q", first, second)
	}
	if err := tool.ValidToolName(n.name("srv", long)); err != nil {
		t.Fatal(err)
	}
}

func TestHashIgnoresKeyOrder(t *testing.T) {
	a := toolHash("t", "d", []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	b := toolHash("t", "d", []byte(`{ "properties": {"a": {"type": "string"}}, "type": "object" }`))
	c := toolHash("t", "d ", []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	if a != b || a == c {
		t.Fatalf("hashes %s %s %s", a, b, c)
	}
}

func TestListingSkipsUnusableNames(t *testing.T) {
	rows := listing([]mcp.Tool{{Name: "ok"}, {Name: "bad\nname"}, {Name: strings.Repeat("x", 300)}, {Name: "ok"}})
	if len(rows) != 1 || rows[0].Tool != "ok" || rows[0].Description != "" || rows[0].Refused != "" {
		t.Fatalf("rows = %+v", rows)
	}
	// Listed twice differently: which one the model, the pin and the
	// server would take is anybody's guess, so neither is offered.
	rows = listing([]mcp.Tool{{Name: "ok", Description: "one"}, {Name: "ok", Description: "again"}})
	if len(rows) != 1 || rows[0].Description != "" || !strings.Contains(rows[0].Refused, "more than once") {
		t.Fatalf("rows = %+v", rows)
	}
}

// TestVerificationTimesOut: a server that starts but never answers
// tools/list is refused once the connect timeout has passed, and nothing
// is stored. The timeout also bounds the server's spawn and handshake,
// which take 40 ms here but seconds on a loaded machine (a race-built
// test binary started twice, through the keeper): 5 s leaves them room.
func TestVerificationTimesOut(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.b.opts.Client = &mcp.ClientOptions{ConnectTimeout: 5 * time.Second}
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "slow", map[string]string{serverEnv: "hanglist"})})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Servers[0].Outcome != Refused {
		t.Fatalf("report = %+v", rep)
	}
	mustContain(t, "reason", rep.Servers[0].Reason, "did not answer tools/list within 5s", "nothing stored")
}

// TestChangedSpawnAsksAgain: a spawn whose expanded argv differs from the
// one consented to is shown and asked again; the answer is kept.
func TestChangedSpawnAsksAgain(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{
		"command": exe, "args": []string{"-test.run=^$", "${TAI_BRIDGE_ARG}"}, "env": map[string]string{serverEnv: "1"},
	}}})
	path := filepath.Join(t.TempDir(), "vault.db")
	t.Setenv("TAI_BRIDGE_ARG", "first-value")
	f := newFixture(t, tool.Interactive, path)
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: src})
	if err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
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
	f.store.Close()

	t.Setenv("TAI_BRIDGE_ARG", "second-value")
	for _, answer := range []string{"n", "y"} {
		g := newFixture(t, tool.Interactive, path)
		g.p.answer = answer
		_, err := g.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"})
		qs := g.p.questions()
		if len(qs) != 1 {
			t.Fatalf("answer %s: questions %q", answer, qs)
		}
		// ${VAR} values are redacted everywhere, consent included.
		mustContain(t, "question", qs[0], "differs from the one you consented to", "[REDACTED:TAI_BRIDGE_ARG]")
		if strings.Contains(qs[0], "second-value") {
			t.Fatalf("the question shows a ${VAR} value: %q", qs[0])
		}
		if (answer == "n") != (err != nil) {
			t.Fatalf("answer %s: err %v", answer, err)
		}
		g.b.Close()
		g.store.Close()
	}
	h := newFixture(t, tool.Interactive, path)
	if _, err := h.reg.Dispatch(ctxT(t), "mcp_srv_echo", map[string]any{"text": "x"}); err != nil || len(h.p.questions()) != 0 {
		t.Fatalf("after consenting: %v, questions %q", err, h.p.questions())
	}
}

// TestSelectionFollowsTheSessionProfile: a server enabled only for another
// profile is offered to a session on that profile, not to the default.
func TestSelectionFollowsTheSessionProfile(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.add(t, "srv", nil)
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "home", true); err != nil {
		t.Fatal(err)
	}
	conv := []llm.Message{{Role: "user", Content: "echoes text"}}
	has := func(specs []llm.ToolSpec) bool { return slices.Contains(specNames(specs), "mcp_srv_echo") }
	if has(f.reg.SelectTools(conv, tool.SelectOptions{})) || has(f.reg.SelectTools(conv, tool.SelectOptions{Profile: "work"})) {
		t.Fatal("offered to a profile it is not enabled for")
	}
	if !has(f.reg.SelectTools(conv, tool.SelectOptions{Profile: "home"})) {
		t.Fatal("not offered to the profile it is enabled for")
	}
}

func TestLineDiff(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{name: "changed line", a: "one\ntwo\nthree", b: "one\n2\nthree", want: "  one\n- two\n+ 2\n  three\n"},
		{name: "added", a: "", b: "new", want: "+ new\n"},
		{name: "removed", a: "old\nkept", b: "kept", want: "- old\n  kept\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lineDiff(tt.a, tt.b); got != tt.want {
				t.Fatalf("lineDiff = %q, want %q", got, tt.want)
			}
		})
	}
}

// A model adding a server while nobody is asked (--auto, --yolo) must not
// be able to hand a vault secret or a credential from the environment to a
// command or URL of its choosing: such an entry is refused and nothing is
// started or stored. A person's own add, and a model's add a person
// consents to, still expand them.
func TestModelUnattendedAddCannotUseSecrets(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode tool.Mode
		env  map[string]string
		want string // "" means added
	}{
		{"auto vault secret", tool.Auto, map[string]string{"X": "${sv}"}, "${sv}"},
		{"yolo vault secret", tool.Yolo, map[string]string{"X": "prefix-${sv}"}, "${sv}"},
		{"auto environment credential", tool.Auto, map[string]string{"X": "${QA_API_KEY}"}, "${QA_API_KEY}"},
		{"auto plain value", tool.Auto, map[string]string{"X": "plain"}, ""},
		{"auto inherited variable", tool.Auto, map[string]string{"X": "${HOME}"}, ""},
		{"interactive vault secret", tool.Interactive, map[string]string{"X": "${sv}"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.mode, "")
			f.b.opts.Getenv = func(name string) (string, bool) {
				switch name {
				case "QA_API_KEY":
					return "sk-qa-environment-key", true
				case "HOME":
					return "/home/qa", true
				}
				return "", false
			}
			if err := f.store.SecretSet("sv", "s3cr3t-value-42", nil); err != nil {
				t.Fatal(err)
			}
			args, _ := jsonString(map[string]any{"source": serverJSON(t, "srv", tc.env)})
			model := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("mcp_add", args)), llmtest.Say("done"))
			client, err := llm.NewChatClient(llm.Profile{Name: "t", Provider: "openai", BaseURL: model.BaseURL, Model: "fake"}, f.store, &llm.ClientOptions{Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			agent := engine.NewAgent(f.reg, engine.StaticModel(client, ""), nil)
			if _, err := agent.RunTurn(ctxT(t), "add it", nil); err != nil {
				t.Fatal(err)
			}
			results := model.Requests()[1].ToolResults()
			if len(results) != 1 {
				t.Fatalf("tool results = %+v", results)
			}
			list, _ := f.store.ServerList()
			if tc.want == "" {
				if len(list) != 1 {
					t.Fatalf("not added: %s", results[0].Text)
				}
				return
			}
			mustContain(t, "model's mcp_add", results[0].Text, "refused", tc.want, "a person must add it")
			if strings.Contains(results[0].Text, "s3cr3t-value-42") || strings.Contains(results[0].Text, "sk-qa-environment-key") {
				t.Fatalf("the refusal shows the value: %s", results[0].Text)
			}
			if len(list) != 0 {
				t.Fatalf("the model registered %+v", list)
			}
			// The same entry added directly (a person's script) expands it.
			rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "srv", tc.env)})
			if err != nil || rep.Servers[0].Outcome != Added {
				t.Fatalf("direct add: %+v, %v", rep, err)
			}
		})
	}
}

// The consent screen says which ${…} references an env variable or a
// header is built from (never their values), so a person asked to start a
// server sees that it would be handed, say, ${OPENAI_API_KEY}.
func TestConsentNamesTheReferencesOfEnvAndHeaders(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	f.p.answer = "n"
	f.b.opts.Getenv = func(name string) (string, bool) {
		if name == "OPENAI_API_KEY" {
			return "sk-the-real-openai-key", true
		}
		return "", false
	}
	if err := f.store.SecretSet("gh", "ghp_vault_secret_value", nil); err != nil {
		t.Fatal(err)
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{
		"web": map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer ${OPENAI_API_KEY}", "X-Plain": "literal"}},
	}})
	if _, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "cmd", map[string]string{"TOKEN": "${gh}"})}); err != nil {
		t.Fatal(err)
	}
	qs := f.p.questions()
	if len(qs) != 2 {
		t.Fatalf("questions = %q", qs)
	}
	mustContain(t, "header consent", qs[0], "Authorization (from ${OPENAI_API_KEY})", "X-Plain")
	mustContain(t, "env consent", qs[1], "TOKEN (from ${gh})")
	for _, q := range qs {
		if strings.Contains(q, "sk-the-real") || strings.Contains(q, "ghp_vault") || strings.Contains(q, "literal") {
			t.Fatalf("a value shows: %q", q)
		}
	}
}

// A bridged name stays with the tool the model has been calling by it:
// a server registered later, or a tool a server added since (withheld),
// whose name sanitizes to the same mcp_<server>_<tool> gets the _2, never
// the granted tool of the server registered first.
func TestBridgedNamesStayWithTheirTools(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	state := func(name string, created time.Time, pinned []string, tools ...string) vault.ServerState {
		st := vault.ServerState{Server: vault.Server{Name: name, Transport: mcp.TransportStdio, Command: "x", Created: created}, Profiles: map[string]bool{"work": true}}
		for _, toolName := range tools {
			row := vault.ServerTool{Tool: toolName, Description: "d " + toolName}
			st.Tools = append(st.Tools, row)
			if slices.Contains(pinned, toolName) {
				st.Pins = append(st.Pins, pinOf(name, row))
			}
		}
		return st
	}
	target := func(s *snapshot, name string) string {
		bt := s.byName[name]
		if bt == nil {
			return ""
		}
		return bt.server + "/" + bt.tool
	}
	for _, tc := range []struct {
		name   string
		states []vault.ServerState
		want   map[string]string
	}{
		{"later server sorts first", []vault.ServerState{
			state("a", t0.Add(time.Hour), []string{"b_c"}, "b_c"),
			state("a_b", t0, []string{"c"}, "c"),
		}, map[string]string{"mcp_a_b_c": "a_b/c", "mcp_a_b_c_2": "a/b_c"}},
		{"added tool sorts first", []vault.ServerState{
			state("srv", t0, []string{"get_sum"}, "get-sum", "get_sum"),
		}, map[string]string{"mcp_srv_get_sum": "srv/get_sum", "mcp_srv_get_sum_2": "srv/get-sum"}},
		{"both granted: the name order", []vault.ServerState{
			state("srv", t0, []string{"get-sum", "get_sum"}, "get-sum", "get_sum"),
		}, map[string]string{"mcp_srv_get_sum": "srv/get-sum", "mcp_srv_get_sum_2": "srv/get_sum"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSnapshot(tc.states, "work", 100)
			for name, want := range tc.want {
				if got := target(s, name); got != want {
					t.Errorf("%s calls %q, want %q", name, got, want)
				}
			}
		})
	}
}

// A server's tool description is untrusted text the model is sent with
// every request: one longer than MaxDescription is cut for the model (the
// pin still covers the whole of it), so a server cannot fill the model's
// context, or push every request past the provider's limit, with it.
func TestLongDescriptionIsCutForTheModel(t *testing.T) {
	long := strings.Repeat("ab", 300_000)
	row := vault.ServerTool{Tool: "big", Description: long}
	short := vault.ServerTool{Tool: "small", Description: "adds numbers"}
	st := vault.ServerState{
		Server:   vault.Server{Name: "srv", Transport: mcp.TransportStdio, Command: "x"},
		Profiles: map[string]bool{"work": true},
		Pins:     []vault.ToolPin{pinOf("srv", row), pinOf("srv", short)},
		Tools:    []vault.ServerTool{row, short},
	}
	s := newSnapshot([]vault.ServerState{st}, "work", 100)
	got := map[string]string{}
	for _, spec := range s.specs {
		got[spec.Name] = spec.Description
	}
	if d := got["mcp_srv_big"]; len(d) > MaxDescription+64 || !strings.HasPrefix(d, long[:MaxDescription/2]) || !strings.Contains(d, "cut") {
		t.Fatalf("big's description is %d bytes: %q…", len(d), d[:min(len(d), 80)])
	}
	if got["mcp_srv_small"] != "adds numbers" {
		t.Fatalf("small = %q", got["mcp_srv_small"])
	}
	if s.byName["mcp_srv_big"].state != StateGranted {
		t.Fatal("cutting the description changed the pin state")
	}
}

// TestAddIsOneDecision: the consent screen's answer decides everything: y
// stores the server enabled for the registering profile only, d stores it
// disabled, anything else stores and starts nothing; each asks once.
func TestAddIsOneDecision(t *testing.T) {
	tests := []struct {
		answer  string
		outcome string
		enabled bool
	}{
		{answer: "y", outcome: Added, enabled: true},
		{answer: "YES", outcome: Added, enabled: true},
		{answer: "d", outcome: Added},
		{answer: "n", outcome: Refused},
		{answer: "", outcome: Refused},
		{answer: "enable", outcome: Refused},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			f := newFixture(t, tool.Interactive, "")
			f.p.answer = tt.answer
			rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "srv", nil)})
			if err != nil || len(rep.Servers) != 1 {
				t.Fatalf("add = %+v, %v", rep, err)
			}
			out := rep.Servers[0]
			if out.Outcome != tt.outcome || out.Enabled != tt.enabled {
				t.Fatalf("outcome = %s enabled %v, want %s enabled %v (%s)", out.Outcome, out.Enabled, tt.outcome, tt.enabled, out.Reason)
			}
			if qs := f.p.questions(); len(qs) != 1 {
				t.Fatalf("asked %d questions, want 1: %q", len(qs), qs)
			}
			states, err := f.store.ServerStates()
			if err != nil {
				t.Fatal(err)
			}
			if tt.outcome == Refused {
				if len(states) != 0 {
					t.Fatalf("a refused server was stored: %+v", states)
				}
				mustContain(t, "reason", out.Reason, "consent was refused")
				return
			}
			if on, ok := states[0].Profiles["work"]; !ok || on != tt.enabled || len(states[0].Profiles) != 1 {
				t.Fatalf("profile rows = %v, want only work, enabled %v", states[0].Profiles, tt.enabled)
			}
			offered := slices.Contains(specNames(f.reg.Specs()), "mcp_srv_echo")
			if offered != tt.enabled {
				t.Fatalf("mcp_srv_echo offered = %v, want %v", offered, tt.enabled)
			}
		})
	}
}

// TestAddSaysWhenThePersonDeclined: a server refused because the person
// said no is marked Declined, so a front end need not read the reason; a
// server refused for anything else is not, though its reason may hold the
// same words (here, in the path of a command that does not exist).
func TestAddSaysWhenThePersonDeclined(t *testing.T) {
	f := newFixture(t, tool.Interactive, "")
	f.p.answer = "n"
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: serverJSON(t, "srv", nil)})
	if err != nil || len(rep.Servers) != 1 {
		t.Fatalf("add = %+v, %v", rep, err)
	}
	if out := rep.Servers[0]; out.Outcome != Refused || !out.Declined {
		t.Fatalf("said no: outcome %s declined %v, want refused and declined (%s)", out.Outcome, out.Declined, out.Reason)
	}
	f.p.answer = "y"
	missing := filepath.Join(t.TempDir(), "consent was refused")
	rep, err = f.b.Add(ctxT(t), AddRequest{Source: `{"mcpServers": {"gone": {"command": ` + strconv.Quote(missing) + `}}}`})
	if err != nil || len(rep.Servers) != 1 {
		t.Fatalf("add = %+v, %v", rep, err)
	}
	out := rep.Servers[0]
	if out.Outcome != Refused || out.Declined {
		t.Fatalf("failed start: outcome %s declined %v, want refused, not declined (%s)", out.Outcome, out.Declined, out.Reason)
	}
	mustContain(t, "reason", out.Reason, "consent was refused")
}
