package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/vault"
	"tai/vault/vaulttest"
)

func TestDispatchApprovalModes(t *testing.T) {
	tests := []struct {
		name      string
		mode      Mode
		prompter  *prompter
		safe      bool
		wantRun   bool
		wantAsked int
		wantNote  int
	}{
		{name: "interactive asks and runs on yes", mode: Interactive, prompter: &prompter{allow: true}, wantRun: true, wantAsked: 1},
		{name: "interactive asks and denies on no", mode: Interactive, prompter: &prompter{allow: false}, wantAsked: 1},
		{name: "interactive without prompter denies", mode: Interactive},
		{name: "interactive prompter error denies", mode: Interactive, prompter: &prompter{allow: true, err: ErrNoPrompter}, wantAsked: 1},
		{name: "auto runs without asking and notifies", mode: Auto, prompter: &prompter{}, wantRun: true, wantNote: 1},
		{name: "auto without prompter runs", mode: Auto, wantRun: true, wantNote: 1},
		{name: "yolo runs silently", mode: Yolo, prompter: &prompter{}, wantRun: true},
		{name: "safe tool never asks", mode: Interactive, prompter: &prompter{}, safe: true, wantRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Prompter
			if tt.prompter != nil {
				p = tt.prompter
			}
			ap := NewApprover(tt.mode, p)
			notes := 0
			ap.SetNotify(func(Consent) { notes++ })
			reg := NewRegistry(vaulttest.Open(t), ap)
			ran := false
			addTool(t, reg, Tool{Name: "act", Safe: tt.safe, Run: func(context.Context, map[string]any) (Result, error) {
				ran = true
				return TextResult("done"), nil
			}})
			res, err := reg.Dispatch(context.Background(), "act", map[string]any{"x": 1.0})
			if ran != tt.wantRun {
				t.Fatalf("ran = %v, want %v (err %v)", ran, tt.wantRun, err)
			}
			if tt.wantRun && (err != nil || res.Text() != "done") {
				t.Fatalf("Dispatch = %q, %v; want done", res.Text(), err)
			}
			if !tt.wantRun && !errors.Is(err, ErrDenied) {
				t.Fatalf("err = %v, want ErrDenied", err)
			}
			asked := 0
			if tt.prompter != nil {
				asked = len(tt.prompter.seen())
			}
			if asked != tt.wantAsked {
				t.Errorf("prompted %d times, want %d", asked, tt.wantAsked)
			}
			if notes != tt.wantNote {
				t.Errorf("notified %d times, want %d", notes, tt.wantNote)
			}
			entries, err := reg.store.AuditTail(5, "tool")
			if err != nil || len(entries) != 1 {
				t.Fatalf("audit = %v, %v; want one entry", entries, err)
			}
			wantOutcome := "ok"
			if !tt.wantRun {
				wantOutcome = "denied"
			}
			if e := entries[0]; e.Subject != "act" || e.Outcome != wantOutcome || e.Digest != Digest(map[string]any{"x": 1.0}) {
				t.Errorf("audit entry = %+v; want subject act, outcome %s", e, wantOutcome)
			}
		})
	}
}

func TestConsentCarriesDigestAndFullArgs(t *testing.T) {
	p := &prompter{allow: true}
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Interactive, p))
	addTool(t, reg, textTool("write", "", false, "ok"))
	args := map[string]any{"path": "a.txt", "content": strings.Repeat("z", 500)}
	if _, err := reg.Dispatch(context.Background(), "write", args); err != nil {
		t.Fatal(err)
	}
	c := p.seen()[0]
	if c.Tool != "write" || c.Digest != Digest(args) || len(c.Digest) != 12 || c.Args["content"] != args["content"] {
		t.Fatalf("consent = %+v", c)
	}
}

func TestDigestIsCanonical(t *testing.T) {
	var a, b map[string]any
	_ = json.Unmarshal([]byte(`{"b":1,"a":{"y":2,"x":3}}`), &a)
	_ = json.Unmarshal([]byte(`{"a":{"x":3,"y":2},"b":1}`), &b)
	if Digest(a) != Digest(b) {
		t.Fatalf("key order changed the digest: %s vs %s", Digest(a), Digest(b))
	}
	if Digest(a) == Digest(map[string]any{"b": 2.0}) {
		t.Fatal("different arguments gave the same digest")
	}
	if Digest(nil) != Digest(map[string]any{}) {
		t.Fatal("nil and empty arguments differ")
	}
}

func TestDispatchUnknownAndFallback(t *testing.T) {
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Yolo, nil))
	_, err := reg.Dispatch(context.Background(), "nope", nil)
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown tool: err = %v", err)
	}
	reg.SetFallback(func(name string) (Tool, bool) {
		if !strings.HasPrefix(name, "mcp_") {
			return Tool{}, false
		}
		return Tool{Name: name, Origin: "srv/" + strings.TrimPrefix(name, "mcp_srv_"), Run: func(_ context.Context, args map[string]any) (Result, error) {
			return TextResult("bridged " + args["q"].(string)), nil
		}}, true
	})
	res, err := reg.Dispatch(context.Background(), "mcp_srv_find", map[string]any{"q": "x"})
	if err != nil || res.Text() != "bridged x" {
		t.Fatalf("fallback dispatch = %q, %v", res.Text(), err)
	}
	entries, _ := reg.store.AuditTail(1, "mcp-call")
	if len(entries) != 1 || entries[0].Subject != "srv/find" || entries[0].Outcome != "ok" {
		t.Fatalf("bridged call audit = %+v", entries)
	}
	if _, err := reg.Dispatch(context.Background(), "other", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("fallback declined but err = %v", err)
	}
}

func TestDispatchRedactsResultsAndErrors(t *testing.T) {
	store := vaulttest.Open(t)
	if err := store.SecretSet("api-token", "s3cr3t-VALUE-42", nil); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(store, NewApprover(Yolo, nil))
	addTool(t, reg, textTool("leak", "", true, "token=s3cr3t-VALUE-42 end"))
	addTool(t, reg, Tool{Name: "fail", Run: func(context.Context, map[string]any) (Result, error) {
		return Result{}, errors.New("could not use s3cr3t-VALUE-42")
	}})
	res, err := reg.Dispatch(context.Background(), "leak", nil)
	if err != nil || strings.Contains(res.Text(), "s3cr3t") || !strings.Contains(res.Text(), "REDACTED") {
		t.Fatalf("result not redacted: %q, %v", res.Text(), err)
	}
	_, err = reg.Dispatch(context.Background(), "fail", nil)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error not redacted: %v", err)
	}
}

func TestDispatchSpillsLargeResults(t *testing.T) {
	store := vaulttest.Open(t)
	reg := NewRegistry(store, NewApprover(Yolo, nil))
	big := strings.Repeat("0123456789abcdef", ResultMax/16+100)
	addTool(t, reg, textTool("big", "", true, big))
	addTool(t, reg, textTool("exact", "", true, big[:ResultMax]))
	res, err := reg.Dispatch(context.Background(), "exact", nil)
	if err != nil || res.Text() != big[:ResultMax] {
		t.Fatalf("a result of exactly ResultMax bytes changed (len %d, err %v)", len(res.Text()), err)
	}
	res, err = reg.Dispatch(context.Background(), "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	if len(text) > 4*spillPreview || !strings.Contains(text, "record_read") {
		t.Fatalf("spilled result = %d bytes: %.200q", len(text), text)
	}
	id := text[strings.Index(text, "record ")+len("record "):]
	id = id[:strings.IndexAny(id, ". ")]
	got, rec, err := store.RecordGet(id, 0, len(big))
	if err != nil || got != big || rec.Size != len(big) {
		t.Fatalf("record %q: %d bytes, %v; want the whole result", id, len(got), err)
	}
	entries, _ := store.AuditTail(1, "tool")
	if entries[0].Size != len(big) {
		t.Errorf("audit size = %d, want %d", entries[0].Size, len(big))
	}
}

func TestRegistryRunTimeTools(t *testing.T) {
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Yolo, nil))
	bad := []Tool{
		{Name: "has space", Run: textTool("x", "", true, "").Run},
		{Name: "norun"},
		{Name: "badschema", Parameters: map[string]any{"type": "string"}, Run: textTool("x", "", true, "").Run},
	}
	for _, tool := range bad {
		if err := reg.Add(tool); err == nil {
			t.Errorf("Add(%q) accepted a bad tool", tool.Name)
		}
	}
	addTool(t, reg, Tool{Name: "boom", Safe: true, Run: func(context.Context, map[string]any) (Result, error) { panic("kaput") }})
	res, err := reg.Dispatch(context.Background(), "boom", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "kaput") {
		t.Fatalf("a panicking tool gave %q, %v; want an isError result", res.Text(), err)
	}
	addTool(t, reg, textTool("late", "added later", true, "v1"))
	addTool(t, reg, textTool("late", "added later", true, "v2"))
	if res, _ := reg.Dispatch(context.Background(), "late", nil); res.Text() != "v2" {
		t.Fatalf("replacement not used: %q", res.Text())
	}
	if !reg.Remove("late") || reg.Remove("late") {
		t.Fatal("Remove did not report presence")
	}
	if _, err := reg.Dispatch(context.Background(), "late", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("removed tool still dispatches: %v", err)
	}
}

func TestContentJSONRoundTrip(t *testing.T) {
	in := `{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AAA=","mimeType":"image/png"}],"isError":true}`
	var r Result
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 2 || r.Content[0].Text != "hi" || r.Content[1].Type != "image" || !r.IsError {
		t.Fatalf("decoded %+v", r)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal([]byte(in), &a)
	_ = json.Unmarshal(out, &b)
	if ja, _ := json.Marshal(a); string(ja) != func() string { jb, _ := json.Marshal(b); return string(jb) }() {
		t.Fatalf("round trip changed the result:\n%s\n%s", in, out)
	}
}

func TestResultJSONShape(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		want string
	}{
		{"empty", Result{}, `{"content":[]}`},
		{"text", TextResult("hi"), `{"content":[{"type":"text","text":"hi"}]}`},
		{"error", ErrorResult("bad %d", 1), `{"content":[{"type":"text","text":"bad 1"}],"isError":true}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.res)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, b, err, tt.want)
		}
	}
}

func TestDispatchReportsAuditFailureAndKeepsErrorIdentity(t *testing.T) {
	store := vaulttest.Open(t)
	reg := NewRegistry(store, NewApprover(Yolo, nil))
	addTool(t, reg, textTool("ok", "", true, "fine"))
	addTool(t, reg, Tool{Name: "cancelled", Safe: true, Run: func(context.Context, map[string]any) (Result, error) {
		return Result{}, context.Canceled
	}})
	if _, err := reg.Dispatch(context.Background(), "cancelled", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want it to wrap context.Canceled", err)
	}
	// A sealed vault holding no sealed secret redacts without the key but
	// cannot sign an audit entry: the call's result comes back with the
	// audit failure beside it.
	if err := store.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	keyless, err := vault.Open(store.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer keyless.Close()
	reg = NewRegistry(keyless, NewApprover(Yolo, nil))
	addTool(t, reg, textTool("ok", "", true, "fine"))
	res, err := reg.Dispatch(context.Background(), "ok", nil)
	if err != nil || !strings.HasPrefix(res.Text(), "fine\n[warning: the audit trail could not record this call") {
		t.Fatalf("with an audit that cannot be signed: %q, %v", res.Text(), err)
	}
	// A closed vault cannot redact: nothing runs, and the error says why.
	store.Close()
	if _, err := NewRegistry(store, NewApprover(Yolo, nil)).Dispatch(context.Background(), "ok", nil); err == nil || !strings.Contains(err.Error(), "store is closed") {
		t.Fatalf("with the vault closed: %v, want a refusal naming the cause", err)
	}
}

func TestSpecsIncludeSpecSource(t *testing.T) {
	reg := NewRegistry(vaulttest.Open(t), nil)
	addTool(t, reg, textTool("b_native", "native", true, ""))
	reg.SetSpecSource(func(string) []llm.ToolSpec {
		return []llm.ToolSpec{{Name: "a_bridged", Description: "bridged"}, {Name: "b_native", Description: "shadowed"}}
	})
	specs := reg.Specs()
	if len(specs) != 2 || specs[0].Name != "a_bridged" || specs[1].Description != "native" {
		t.Fatalf("Specs = %+v", specs)
	}
	if specs[1].Parameters["type"] != "object" {
		t.Fatalf("a tool without parameters gets no empty object schema: %+v", specs[1].Parameters)
	}
	if len(reg.NativeTools()) != 1 {
		t.Fatalf("NativeTools = %+v", reg.NativeTools())
	}
}

func TestDispatchRedactsNonTextContent(t *testing.T) {
	store := vaulttest.Open(t)
	const secret = "Tr0ub4dor&3<x>"
	if err := store.SecretSet("pw", secret, nil); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(store, NewApprover(Yolo, nil))
	// One item as Go encodes it (& < > escaped), one written literally, and
	// the secret as an object key and deep in an array.
	escaped, _ := json.Marshal(map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x", "text": "pw=" + secret}})
	literal := `{"type":"resource","resource":{"uri":"file:///y","text":"` + secret + `","n":12345678901234567890,"list":[{"` + secret + `":true}]}}`
	addTool(t, reg, Tool{Name: "res", Safe: true, Run: func(context.Context, map[string]any) (Result, error) {
		return Result{Content: []Content{{Type: "resource", Raw: escaped}, {Type: "resource", Raw: json.RawMessage(literal)}}}, nil
	}})
	res, err := reg.Dispatch(context.Background(), "res", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"Tr0ub4dor", `\u0026`} {
		if strings.Contains(string(out), leak) || strings.Contains(res.Text(), leak) {
			t.Errorf("result still holds %q:\n%s", leak, out)
		}
	}
	if strings.Count(res.Text(), "[REDACTED:pw]") != 3 {
		t.Errorf("want three redactions:\n%s", res.Text())
	}
	if !strings.Contains(res.Text(), "12345678901234567890") || !strings.Contains(res.Text(), `"uri":"file:///y"`) {
		t.Errorf("other values changed:\n%s", res.Text())
	}
	for i, c := range res.Content {
		if !json.Valid(c.Raw) {
			t.Errorf("item %d is no longer JSON: %s", i, c.Raw)
		}
	}
}

func TestShownArgsRedactsEscapedSecrets(t *testing.T) {
	store := vaulttest.Open(t)
	const secret = "Tr0ub4dor&3<x>"
	if err := store.SecretSet("pw", secret, nil); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(store, nil)
	shown := reg.ShownArgs(Tool{Name: "post"}, map[string]any{"body": "pw=" + secret, "list": []any{secret, 3.0}, "n": 7.0})
	b, _ := json.Marshal(shown)
	if strings.Contains(string(b), "Tr0ub4dor") || shown["body"] != "pw=[REDACTED:pw]" || shown["n"] != 7.0 {
		t.Fatalf("shown args = %s", b)
	}
}
