package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/elicit"
)

// askerServer is the serverEnv value that runs runAsker: a stdio server
// that asks tai things in the middle of its calls.
const askerServer = "asker"

// runAsker serves: form (elicits a form and says the answer), open (a
// URL-mode elicitation), needurl (fails with -32042 once, says the
// browser step is complete, then succeeds), roots (lists tai's roots and
// how many roots/list_changed it was sent).
func runAsker() int {
	var changed atomic.Int32
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, &sdk.ServerOptions{
		//lint:ignore SA1019 roots/list_changed is the client feature this server counts
		RootsListChangedHandler: func(context.Context, *sdk.RootsListChangedRequest) { changed.Add(1) },
	})
	sdk.AddTool(s, &sdk.Tool{Name: "form", Description: "asks for a form"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "who are you? " + os.Getenv("ASKER_SECRET"), RequestedSchema: json.RawMessage(`{"type":"object",
				"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"default":30},
				"color":{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#00f","title":"Blue"}]}},"required":["name"]}`)})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return textResult(res.Action + " " + string(b)), nil, nil
		})
	// hold runs until formheld has had its answer; formheld asks for its
	// form only once hold runs: two calls in flight at the elicitation.
	held, released := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	sdk.AddTool(s, &sdk.Tool{Name: "hold", Description: "runs until formheld is answered"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			holdOnce.Do(func() { close(held) })
			select {
			case <-released:
				return textResult("released"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "formheld", Description: "asks for a form while hold runs"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			defer releaseOnce.Do(func() { close(released) })
			select {
			case <-held:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "who are you?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return textResult(res.Action + " " + string(b)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "open", Description: "asks to open a URL"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "url", Message: "log in to the service", URL: "https://bücher.example/connect", ElicitationID: "e1"})
			if err != nil {
				return nil, nil, err
			}
			return textResult(res.Action), nil, nil
		})
	var needed atomic.Bool
	sdk.AddTool(s, &sdk.Tool{Name: "needurl", Description: "needs a URL opened first"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if needed.CompareAndSwap(false, true) {
				go func() {
					time.Sleep(50 * time.Millisecond) // after the error has gone out
					_ = req.Session.NotifyElicitationComplete(context.Background(), &sdk.ElicitationCompleteParams{ElicitationID: "pre1"})
				}()
				return nil, nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{{Mode: "url", Message: "authorize first", URL: "https://auth.example/start", ElicitationID: "pre1"}})
			}
			return textResult("done after the browser step"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "lists the roots"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			//lint:ignore SA1019 roots/list is the client feature whose answer this test reads
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			uris := []string{}
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return textResult(fmt.Sprintf("%s changed=%d", strings.Join(uris, ","), changed.Load())), nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "asker:", err)
		return 1
	}
	return 0
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// elicitor is a person who answers each elicitation with answer(q).
type elicitor struct {
	prompter
	mu     sync.Mutex
	asked  []elicit.Question
	answer func(elicit.Question) (elicit.Result, error)
}

func (e *elicitor) Elicit(_ context.Context, q elicit.Question) (elicit.Result, error) {
	e.mu.Lock()
	e.asked = append(e.asked, q)
	e.mu.Unlock()
	return e.answer(q)
}

// askerFixture registers the asker in mode with person answering, its
// cwd dir, and returns the fixture and a context with a caller that
// takes notes.
func askerFixture(t *testing.T, mode tool.Mode, person *elicitor, dir string, args ...string) (*fixture, context.Context, *[]string) {
	t.Helper()
	f := newFixture(t, mode, "")
	// The server knows a vault secret, and puts it in its form's message.
	if err := f.store.SecretSet("ASKER_SECRET", "s3cr3t-token-value", nil); err != nil {
		t.Fatal(err)
	}
	src := serverJSON(t, "asker", map[string]string{serverEnv: askerServer, "ASKER_SECRET": "${ASKER_SECRET}"})
	var doc map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	entry := doc["mcpServers"]["asker"]
	entry["cwd"] = dir
	entry["args"] = append(entry["args"].([]any), func() []any {
		out := []any{}
		for _, a := range args {
			out = append(out, a)
		}
		return out
	}()...)
	b, _ := json.Marshal(doc)
	rep, err := f.b.Add(ctxT(t), AddRequest{Source: string(b)})
	if err != nil || rep.Servers[0].Outcome != Added {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	if _, err := f.b.SetEnabled(ctxT(t), "asker", "", true); err != nil {
		t.Fatal(err)
	}
	if person != nil {
		f.reg.Approver().SetPrompter(person)
	}
	var mu sync.Mutex
	notes := &[]string{}
	ctx := tool.WithCaller(ctxT(t), tool.Caller{Note: func(s string) {
		mu.Lock()
		*notes = append(*notes, s)
		mu.Unlock()
	}})
	return f, ctx, notes
}

// TestElicitForm: a server's form reaches the person of the call with
// every field read from the schema and the vault's secrets redacted from
// its message; their answer goes back checked, with the defaults of what
// they left out (SEP-1034).
func TestElicitForm(t *testing.T) {
	person := &elicitor{answer: func(q elicit.Question) (elicit.Result, error) {
		return elicit.Result{Action: elicit.Accept, Content: map[string]any{"name": "Ada", "color": "#00f"}}, nil
	}}
	f, ctx, notes := askerFixture(t, tool.Interactive, person, t.TempDir())
	res, err := f.reg.Dispatch(ctx, "mcp_asker_form", nil)
	if err != nil || res.IsError {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if got := text(res); got != `accept {"age":30,"color":"#00f","name":"Ada"}` {
		t.Fatalf("the server got %q", got)
	}
	if len(person.asked) != 1 {
		t.Fatalf("asked %d times", len(person.asked))
	}
	q := person.asked[0]
	if q.Server != "asker" || q.Message != "who are you? [REDACTED:ASKER_SECRET]" || q.Form == nil || len(q.Form.Fields) != 3 || q.Form.Fields[2].Options[1].Title != "Blue" {
		t.Fatalf("question %+v", q)
	}
	if len(*notes) != 0 {
		t.Fatalf("notes %q for a form the person answered", *notes)
	}
}

// TestElicitDeclinedUnattended: under --auto, --yolo, and with a person
// whose answer does not fit the form, the form is declined at once and
// the call's line says why.
func TestElicitDeclinedUnattended(t *testing.T) {
	tests := []struct {
		name   string
		mode   tool.Mode
		answer map[string]any
		note   string
	}{
		{name: "auto", mode: tool.Auto, note: "asker asked for a form, declined: --auto answers no server's questions"},
		{name: "yolo", mode: tool.Yolo, note: "asker asked for a form, declined: --yolo answers no server's questions"},
		{name: "bad answer", mode: tool.Interactive, answer: map[string]any{"name": "Ada", "age": "old"}, note: "the answer does not fit it: age wants a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			person := &elicitor{answer: func(elicit.Question) (elicit.Result, error) {
				return elicit.Result{Action: elicit.Accept, Content: tc.answer}, nil
			}}
			f, ctx, notes := askerFixture(t, tc.mode, person, t.TempDir())
			res, err := f.reg.Dispatch(ctx, "mcp_asker_form", nil)
			if err != nil || text(res) != "decline null" {
				t.Fatalf("call: %q, %v", text(res), err)
			}
			if len(*notes) != 1 || !strings.Contains((*notes)[0], tc.note) {
				t.Fatalf("notes %q, want %q", *notes, tc.note)
			}
			if tc.mode != tool.Interactive && len(person.asked) != 0 {
				t.Fatalf("the person was asked under --%s", tc.mode)
			}
		})
	}
}

// TestElicitOutsideACall: a form that belongs to no call tai can tell
// (here a call made with no caller) is declined, and as there is no call's
// line to say so on, the person is warned.
func TestElicitOutsideACall(t *testing.T) {
	person := &elicitor{answer: func(elicit.Question) (elicit.Result, error) {
		return elicit.Result{Action: elicit.Accept, Content: map[string]any{"name": "Ada"}}, nil
	}}
	f, _, _ := askerFixture(t, tool.Interactive, person, t.TempDir())
	var warned []string
	f.b.opts.Client.OnWarning = func(s string) { warned = append(warned, s) }
	res, err := f.reg.Dispatch(ctxT(t), "mcp_asker_form", nil)
	if err != nil || text(res) != "decline null" || len(person.asked) != 0 {
		t.Fatalf("call %q, %v; the person was asked %d times", text(res), err, len(person.asked))
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "asker asked for a form, declined: "+tool.RefusedNoCall) {
		t.Fatalf("warnings %q", warned)
	}
}

// TestElicitSeveralCalls: over stdio a form asked while two calls to its
// server run belongs to neither that tai can tell. When both are one
// person's, that person is asked, once; when one is a served session's
// and the other the person's, nobody can be told to answer: it is
// declined, and the person's call's line says why.
func TestElicitSeveralCalls(t *testing.T) {
	for _, served := range []bool{false, true} {
		t.Run(fmt.Sprintf("served=%v", served), func(t *testing.T) {
			person := &elicitor{answer: func(elicit.Question) (elicit.Result, error) {
				return elicit.Result{Action: elicit.Accept, Content: map[string]any{"name": "Ada"}}, nil
			}}
			f, ctx, notes := askerFixture(t, tool.Interactive, person, t.TempDir())
			holdCtx := ctx
			if served {
				holdCtx = tool.WithCaller(ctxT(t), tool.Caller{Name: "mcp:client"})
			}
			held := make(chan string, 1)
			go func() {
				res, err := f.reg.Dispatch(holdCtx, "mcp_asker_hold", nil)
				if err != nil {
					held <- err.Error()
					return
				}
				held <- text(res)
			}()
			res, err := f.reg.Dispatch(ctx, "mcp_asker_formheld", nil)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-held:
				if got != "released" {
					t.Fatalf("hold: %q", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("hold never ended")
			}
			if served {
				if text(res) != "decline null" || len(person.asked) != 0 {
					t.Fatalf("the server got %q; the person was asked %d times", text(res), len(person.asked))
				}
				if len(*notes) != 1 || !strings.Contains((*notes)[0], "asker asked for a form, declined: "+tool.RefusedOthers) {
					t.Fatalf("notes %q", *notes)
				}
				return
			}
			if text(res) != `accept {"name":"Ada"}` || len(person.asked) != 1 {
				t.Fatalf("the server got %q; the person was asked %d times", text(res), len(person.asked))
			}
			if len(*notes) != 0 {
				t.Fatalf("notes %q for a form the person answered", *notes)
			}
		})
	}
}

// TestElicitURL: a URL-mode request shows the URL with its host in
// punycode, and opens it in the browser only once the person accepts.
func TestElicitURL(t *testing.T) {
	for _, action := range []elicit.Action{elicit.Decline, elicit.Accept} {
		person := &elicitor{answer: func(q elicit.Question) (elicit.Result, error) {
			return elicit.Result{Action: action}, nil
		}}
		f, ctx, notes := askerFixture(t, tool.Interactive, person, t.TempDir())
		var opened []string
		f.b.opts.OpenURL = func(u string) error {
			opened = append(opened, u)
			return nil
		}
		res, err := f.reg.Dispatch(ctx, "mcp_asker_open", nil)
		if err != nil || text(res) != string(action) {
			t.Fatalf("%s: call %q, %v", action, text(res), err)
		}
		q := person.asked[0]
		if q.Link == nil || q.Link.URL != "https://xn--bcher-kva.example/connect" || q.Link.Unicode != "bücher.example" || q.ID != "e1" {
			t.Fatalf("%s: question %+v", action, q.Link)
		}
		want := map[elicit.Action]string{elicit.Decline: "", elicit.Accept: "https://xn--bcher-kva.example/connect"}[action]
		if strings.Join(opened, " ") != want {
			t.Fatalf("%s: the browser opened %q, want %q", action, opened, want)
		}
		if action == elicit.Accept && (len(*notes) != 1 || !strings.HasPrefix((*notes)[0], "opened https://xn--bcher-kva.example/connect")) {
			t.Fatalf("notes %q", *notes)
		}
	}
}

// TestURLElicitationRequired: a call refused with -32042 runs the URL
// flow, waits for the server's notifications/elicitation/complete, and is
// sent once more; declined, the error stands and nothing is retried.
func TestURLElicitationRequired(t *testing.T) {
	person := &elicitor{answer: func(elicit.Question) (elicit.Result, error) {
		return elicit.Result{Action: elicit.Accept}, nil
	}}
	f, ctx, _ := askerFixture(t, tool.Interactive, person, t.TempDir())
	f.b.opts.OpenURL = func(string) error { return nil }
	f.b.opts.URLWait = time.Hour // the notification must end the wait, before the test's context does
	res, err := f.reg.Dispatch(ctx, "mcp_asker_needurl", nil)
	if err != nil || text(res) != "done after the browser step" {
		t.Fatalf("call: %q, %v", text(res), err)
	}
	if len(person.asked) != 1 || person.asked[0].Link.Host != "auth.example" {
		t.Fatalf("asked %+v", person.asked)
	}

	no := &elicitor{answer: func(elicit.Question) (elicit.Result, error) { return elicit.Result{Action: elicit.Decline}, nil }}
	f2, ctx2, _ := askerFixture(t, tool.Interactive, no, t.TempDir())
	_, err = f2.reg.Dispatch(ctx2, "mcp_asker_needurl", nil)
	var we *mcp.WireError
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("declined: err %v, want the -32042 error", err)
	}
}

// TestRoots: a server's roots are exactly the folders its sandbox grants
// (its cwd and its folder arguments), as file:// URIs; a grant made while
// it runs with no Landlock to restart it for is sent as
// notifications/roots/list_changed and is among its roots after.
func TestRoots(t *testing.T) {
	t.Setenv("TAI_LANDLOCK_ABI", "0")
	cwd, data, extra := t.TempDir(), t.TempDir(), t.TempDir()
	f, ctx, _ := askerFixture(t, tool.Yolo, nil, cwd, data)
	res, err := f.reg.Dispatch(ctx, "mcp_asker_roots", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := mcp.RootOf(data).URI + "," + mcp.RootOf(cwd).URI + " changed=0"
	if got := text(res); got != want {
		t.Fatalf("roots %q, want %q", got, want)
	}
	if _, err := f.b.Allow(tool.ByPerson(ctxT(t)), "asker", []string{extra}); err != nil {
		t.Fatal(err)
	}
	res, err = f.reg.Dispatch(ctx, "mcp_asker_roots", nil)
	if err != nil {
		t.Fatal(err)
	}
	want = mcp.RootOf(data).URI + "," + mcp.RootOf(cwd).URI + "," + mcp.RootOf(extra).URI + " changed=1"
	if got := text(res); got != want {
		t.Fatalf("after /mcp allow: roots %q, want %q", got, want)
	}
}
