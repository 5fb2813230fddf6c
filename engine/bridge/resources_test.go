package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/tool"
	"tai/mcp"
	"tai/vault"
)

// textResource answers a read with text.
func textResource(text string) sdk.ResourceHandler {
	return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
	}
}

// addResources gives the test server resources: a note, one holding
// $SECRET_VALUE, a PNG blob, 70,000 bytes of text, one whose name and
// description hold terminal escapes, and a template test://item/{id}.
func addResources(s *sdk.Server) {
	s.AddResource(&sdk.Resource{URI: "test://note", Name: "note", MIMEType: "text/plain", Size: 6}, textResource("a note"))
	s.AddResource(&sdk.Resource{URI: "test://secret", Name: "secret"}, textResource("token="+os.Getenv("SECRET_VALUE")))
	s.AddResource(&sdk.Resource{URI: "test://logo", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte("\x89PNG\r\n\x1a\n")}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://big", Name: "big"}, textResource(strings.Repeat("y", 70000)))
	s.AddResource(&sdk.Resource{URI: "test://esc", Name: "\x1b[2Jclear", Description: "wipes\x1b]0;owned\x07 the screen"}, textResource("escaped"))
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "item " + strings.TrimPrefix(req.Params.URI, "test://item/")}}}, nil
		})
}

// resFixture is a fixture in mode with the test server added as srv
// (SECRET_VALUE set to a vault secret) and enabled for the profile.
func resFixture(t *testing.T, mode tool.Mode) *fixture {
	t.Helper()
	f := newFixture(t, mode, "")
	if err := f.store.SecretSet("sv", "hunter2-resource-secret", nil); err != nil {
		t.Fatal(err)
	}
	f.add(t, "srv", map[string]string{"SECRET_VALUE": "${sv}"})
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestResourceTools: mcp_resources lists a server's resources and
// templates, shown safely; mcp_read_resource reads text, a blob, a URI
// only a template names, is asked about as a call of that server (origin
// srv/resources/read), audited as an mcp-call, redacted and spilled like
// any result.
func TestResourceTools(t *testing.T) {
	f := resFixture(t, tool.Interactive)
	res, err := f.reg.Dispatch(ctxT(t), ResourcesTool, map[string]any{"server": "srv"})
	if err != nil || res.IsError {
		t.Fatalf("mcp_resources: %+v, %v", res, err)
	}
	list := text(res)
	mustContain(t, "listing", list, `srv "test://note" "note" (text/plain) 6 bytes`, `srv "test://logo" "logo" (image/png)`, `srv template "test://item/{id}" "item"`)
	if strings.ContainsAny(list, "\x1b\x07") {
		t.Fatalf("the listing holds a raw escape: %q", list)
	}
	// Listing asked nobody; every server call below is asked about.
	if len(f.p.consents) != 0 {
		t.Fatalf("listing asked %+v", f.p.consents)
	}

	read := func(uri string) tool.Result {
		t.Helper()
		res, err := f.reg.Dispatch(ctxT(t), ReadResourceTool, map[string]any{"server": "srv", "uri": uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		return res
	}
	mustContain(t, "note", text(read("test://note")), "[resource \"test://note\" (text/plain)]\na note")
	if c := f.p.consents; len(c) != 1 || c[0].Origin != "srv/resources/read" || c[0].Tool != ReadResourceTool {
		t.Fatalf("consents = %+v", c)
	}
	mustContain(t, "template read", text(read("test://item/7")), "item 7")
	secret := text(read("test://secret"))
	if strings.Contains(secret, "hunter2-resource-secret") {
		t.Fatalf("the secret reached the result: %q", secret)
	}
	logo := read("test://logo")
	if len(logo.Content) != 1 || string(logo.Content[0].Data) != "\x89PNG\r\n\x1a\n" && !strings.Contains(text(logo), "record") {
		t.Fatalf("logo = %+v", logo)
	}
	big := read("test://big")
	if len(text(big)) > 40000 {
		t.Fatalf("a 70,000-byte resource reached the result whole (%d bytes)", len(text(big)))
	}
	recs, err := f.store.RecordList(10)
	if err != nil || len(recs) == 0 {
		t.Fatalf("no record for the spilled read: %v", err)
	}
	mustContain(t, "spill note", text(big), recs[0].ID)
	var calls []string
	for _, e := range auditKinds(t, f.store, "mcp-call") {
		calls = append(calls, e.Subject+" "+e.Outcome)
	}
	mustContain(t, "audit", strings.Join(calls, "\n"), "srv/resources/read ok")

	// An unknown URI is an error result naming it, not a crash.
	if res := read("nothing://here"); !res.IsError {
		t.Fatalf("reading an unknown URI: %+v", res)
	}
	// A server the model names that is not there is refused before
	// anyone is asked.
	before := len(f.p.consents)
	res, err = f.reg.Dispatch(ctxT(t), ReadResourceTool, map[string]any{"server": "nosuch", "uri": "test://note"})
	if err != nil || !res.IsError || len(f.p.consents) != before {
		t.Fatalf("read from an unknown server: %+v, %v (asked %d)", res, err, len(f.p.consents)-before)
	}
	mustContain(t, "unknown server", text(res), "not registered")
}

// TestResourcesFollowTheProfile: a server not enabled for the caller's
// profile is neither listed nor read, and nobody is asked.
func TestResourcesFollowTheProfile(t *testing.T) {
	f := resFixture(t, tool.Interactive)
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", false); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{{ResourcesTool, map[string]any{"server": "srv"}}, {ReadResourceTool, map[string]any{"server": "srv", "uri": "test://note"}}} {
		res, err := f.reg.Dispatch(ctxT(t), call.name, call.args)
		if err != nil || !res.IsError {
			t.Fatalf("%s on a disabled server: %+v, %v", call.name, res, err)
		}
		mustContain(t, call.name, text(res), "not enabled for profile")
	}
	res, err := f.reg.Dispatch(ctxT(t), ResourcesTool, nil)
	if err != nil || text(res) != "No MCP server is enabled for this profile." {
		t.Fatalf("mcp_resources with none enabled: %q, %v", text(res), err)
	}
	if len(f.p.consents) != 0 {
		t.Fatalf("asked %+v", f.p.consents)
	}
}

// TestResourcesListChanged: the cached listing is used until the server
// sends notifications/resources/list_changed, then listed again.
func TestResourcesListChanged(t *testing.T) {
	f := resFixture(t, tool.Yolo)
	changed := make(chan struct{}, 4)
	f.b.opts.Client.Notifications = map[string]mcp.NotificationHandler{
		mcp.MethodResourcesListChanged: func(context.Context, json.RawMessage) { changed <- struct{}{} },
	}
	list, err := f.b.Resources(ctxT(t), "srv", false)
	if err != nil {
		t.Fatal(err)
	}
	n := len(list.Resources)
	cn, _ := f.b.connFor("srv")
	if again, _ := f.b.Resources(ctxT(t), "srv", false); len(again.Resources) != n || cn.resStale.Load() {
		t.Fatalf("second listing: %d resources", len(again.Resources))
	}
	if _, err := f.reg.Dispatch(ctxT(t), "mcp_srv_grow", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctxT(t).Done():
		t.Fatal("no resources/list_changed")
	}
	if !cn.resStale.Load() {
		t.Fatal("resources/list_changed did not mark the listing stale")
	}
	list, err = f.b.Resources(ctxT(t), "srv", false)
	if err != nil || len(list.Resources) != n+1 {
		t.Fatalf("after list_changed: %d resources (want %d), %v", len(list.Resources), n+1, err)
	}
}

// TestResourceLinkNamesTheServer: a resource link in a tool result names
// the server, so mcp_read_resource can be called on it; a URI with
// terminal escapes is shown made visible.
func TestResourceLinkNamesTheServer(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"resource_link","uri":"test://note\u001b[2J","name":"note"}]}`)
	var r mcp.CallResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	out := convert("srv", &r, nil).Text()
	mustContain(t, "link", out, `of server "srv"]`, "test://note")
	if strings.Contains(out, "\x1b") {
		t.Fatalf("raw escape in %q", out)
	}
}

// hostileResources is the serverEnv mode of a hand-written stdio server
// whose resources no encoder would write: a URI holding terminal escapes,
// then pages of 1,000 more without end (a million and more); reading
// "test://huge" answers 100 MB.
const hostileResources = "hostile-resources"

// hangEnv, set, makes the hostile-resources server never answer
// resources/list.
const hangEnv = "TAI_BRIDGE_TEST_HANG"

func runHostileResources() int {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
				URI    string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch m.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, m.ID)
		case "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, m.ID)
		case "resources/list":
			if os.Getenv(hangEnv) != "" {
				continue // never answered
			}
			n := 0
			fmt.Sscanf(m.Params.Cursor, "p%d", &n)
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"resources":[{"uri":"evil://\u001b]0;owned\u0007\u001b[2Jx","name":"\u001b[31mred"}`, m.ID)
			for i := range 1000 {
				fmt.Fprintf(out, `,{"uri":"evil://%d/%d","name":"n"}`, n, i)
			}
			fmt.Fprintf(out, `],"nextCursor":"p%d"}}`, n+1)
		case "resources/templates/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no templates"}}`, m.ID)
		case "resources/read":
			if m.Params.URI == "test://huge" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":"test://huge","text":"`, m.ID)
				chunk := strings.Repeat("z", 1<<20)
				for range 100 {
					if _, err := out.WriteString(chunk); err != nil {
						return 0
					}
				}
				out.WriteString(`"}]}}`)
			} else {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":%q,"text":"ok"}]}}`, m.ID, m.Params.URI)
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
		out.WriteString("\n")
		if out.Flush() != nil {
			return 0
		}
	}
}

// TestResourcesHostileServer: a server listing without end is cut at
// mcp.MaxResources with a note, a URI with terminal escapes is shown made
// visible, and a 100 MB read is refused at the message cap without
// taking tai down: the next read starts the server again.
func TestResourcesHostileServer(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.add(t, "evil", map[string]string{serverEnv: hostileResources})
	if _, err := f.b.SetEnabled(ctxT(t), "evil", "", true); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Dispatch(ctxT(t), ResourcesTool, map[string]any{"server": "evil"})
	if err != nil || res.IsError {
		t.Fatalf("mcp_resources: %+v, %v", res, err)
	}
	out := text(res)
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("raw escape in the listing: %q", out[:200])
	}
	mustContain(t, "listing", out, "evil://", "call mcp_resources again with cursor")
	list, err := f.b.Resources(ctxT(t), "evil", false)
	if err != nil || !list.More || len(list.Resources) != mcp.MaxResources {
		t.Fatalf("listing: %d resources, more %v, %v", len(list.Resources), list.More, err)
	}
	// It lists no templates: Lua gets an empty list, not JSON null.
	if js, _ := jsonString(list); !strings.Contains(js, `"templates":[]`) {
		t.Fatalf("no templates went to JSON as %q", js[len(js)-80:])
	}
	last, err := f.reg.Dispatch(ctxT(t), ResourcesTool, map[string]any{"server": "evil", "cursor": fmt.Sprint(mcp.MaxResources - 10)})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "last page", text(last), "the server lists more than 10000")
	_, err = f.reg.Dispatch(ctxT(t), ReadResourceTool, map[string]any{"server": "evil", "uri": "test://huge"})
	// A stdio server is not told of an HTTP cap.
	if err == nil || !strings.Contains(err.Error(), "over 10485760 bytes") || !strings.Contains(err.Error(), "again") || strings.Contains(err.Error(), "HTTP") {
		t.Fatalf("a 100 MB read: %v", err)
	}
	res, err = f.reg.Dispatch(ctxT(t), ReadResourceTool, map[string]any{"server": "evil", "uri": "test://small"})
	if err != nil || text(res) != "[resource \"test://small\"]\nok" {
		t.Fatalf("the read after: %+v, %v", res, err)
	}
}

// TestQuietListingNeverAsks: a quiet listing (Tab completion) of a server
// whose start would need consent is ErrWouldAsk and asks nobody; one that
// starts as consented lists.
func TestQuietListingNeverAsks(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := jsonString(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{
		"command": exe, "args": []string{"-test.run=^$", "${TAI_BRIDGE_ARG}"}, "env": map[string]string{serverEnv: "1"},
	}}})
	t.Setenv("TAI_BRIDGE_ARG", "first-value")
	f := newFixture(t, tool.Interactive, "")
	if rep, err := f.b.Add(ctxT(t), AddRequest{Source: src}); err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	if _, err := f.b.SetEnabled(ctxT(t), "srv", "", true); err != nil {
		t.Fatal(err)
	}
	asked := len(f.p.questions())
	t.Setenv("TAI_BRIDGE_ARG", "second-value")
	if _, err := f.b.Resources(ctxT(t), "srv", true); err != ErrWouldAsk {
		t.Fatalf("quiet listing of a changed spawn: %v", err)
	}
	if qs := f.p.questions(); len(qs) != asked {
		t.Fatalf("a quiet listing asked %q", qs[asked:])
	}
	t.Setenv("TAI_BRIDGE_ARG", "first-value")
	if list, err := f.b.Resources(ctxT(t), "srv", true); err != nil || len(list.Resources) == 0 {
		t.Fatalf("quiet listing of the consented spawn: %+v, %v", list, err)
	}
	if qs := f.p.questions(); len(qs) != asked {
		t.Fatalf("a quiet listing asked %q", qs[asked:])
	}
}

// BenchmarkResourceRead: a read of a small resource through
// mcp_read_resource (its own dispatch, then the read's, each approved,
// audited and redacted) beside a bridged call of the same server
// answering as much text, its peer.
func BenchmarkResourceRead(b *testing.B) {
	f := newFixture(b, tool.Yolo, "")
	f.add(b, "srv", nil)
	ctx := context.Background()
	if _, err := f.b.SetEnabled(ctx, "srv", "", true); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, name string, args map[string]any) {
		for b.Loop() {
			if res, err := f.reg.Dispatch(ctx, name, args); err != nil || res.IsError {
				b.Fatalf("%+v, %v", res, err)
			}
		}
	}
	b.Run("bridged call", func(b *testing.B) { run(b, "mcp_srv_echo", map[string]any{"text": "a note"}) })
	b.Run("resource read", func(b *testing.B) {
		run(b, ReadResourceTool, map[string]any{"server": "srv", "uri": "test://note"})
	})
}

// TestQuietListingIsBounded: a server that never answers resources/list
// holds a quiet listing (a Tab) for quietWait, not for the call timeout,
// and the error says how to wait for it.
func TestQuietListingIsBounded(t *testing.T) {
	f := newFixture(t, tool.Yolo, "")
	f.add(t, "slow", map[string]string{serverEnv: hostileResources, hangEnv: "1"})
	if _, err := f.b.SetEnabled(ctxT(t), "slow", "", true); err != nil {
		t.Fatal(err)
	}
	_, err := f.b.Resources(ctxT(t), "slow", true)
	if err == nil || !strings.Contains(err.Error(), "within 5s: /mcp resources slow waits for it") {
		t.Fatalf("quiet listing of a server that never answers: %v", err)
	}
}

// TestKeptRuleCoversReads: a rule kept for SERVER/resources/read (the
// consent screen's a or p) lets that server's reads run unasked, as a rule
// for a bridged tool does, and covers no other server.
func TestKeptRuleCoversReads(t *testing.T) {
	f := resFixture(t, tool.Interactive)
	f.add(t, "other", nil)
	if _, err := f.b.SetEnabled(ctxT(t), "other", "", true); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := f.store.PermissionAdd(vault.Permission{Dir: dir, Tool: "srv/resources/read"}); err != nil {
		t.Fatal(err)
	}
	f.reg.Approver().SetRules(tool.KeptRules(f.store, dir))
	for _, server := range []string{"srv", "other"} {
		res, err := f.reg.Dispatch(ctxT(t), ReadResourceTool, map[string]any{"server": server, "uri": "test://note"})
		if err != nil || res.IsError {
			t.Fatalf("read from %s: %+v, %v", server, res, err)
		}
	}
	if c := f.p.consents; len(c) != 1 || c[0].Origin != "other/resources/read" {
		t.Fatalf("asked %+v; want only the read of other", c)
	}
}
