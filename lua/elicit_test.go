package lua

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// elicitorMode makes the test binary a go-sdk stdio server (see
// TestMain) whose tool form elicits a form with defaults and answers with
// the action and the content it got back.
const elicitorMode = "elicitor"

func serveElicitor() {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-elicitor", Version: "1.8.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "form", Description: "asks for a form"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "tell me", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
				"name":{"type":"string","title":"Your name"},"age":{"type":"integer","minimum":0,"maximum":150,"default":30},
				"color":{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#00f","title":"Blue"}],"default":"#f00"},
				"api_key":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(b)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "url", Description: "asks to open a URL"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "url", Message: "log in", URL: "https://bücher.example/go", ElicitationID: "u1"})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "elicitor:", err)
	}
}

// TestConnectOnElicit: tai.mcp.connect's on_elicit answers the server's
// form: it gets the fields as the schema says (titles, choices, defaults,
// the secret mark) with a check function, and what it returns goes back
// with the defaults of what it left out. Without on_elicit the session
// declares no elicitation, and the server says so. A URL request reaches
// it with its host in punycode, and its answer goes back as it is.
func TestConnectOnElicit(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, fmt.Sprintf(`
		local entry = {name = "el", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = "elicitor"}}
		local seen
		local c = assert(tai.mcp.connect(entry, {on_elicit = function(req)
			local f = {}
			for _, x in ipairs(req.fields) do f[x.name] = x end
			local bad, why = f.age.check("200")
			seen = {req.server, req.message, req.mode, #req.fields, f.name.title, tostring(f.name.required),
				f.color.options[2].title, f.color.default, tostring(f.api_key.secret), f.age.check(""), bad == nil and why}
			return {action = "accept", content = {name = "Ada", color = f.color.check("blue")}}
		end}))
		local r = assert(c:call("form"))
		c:close()
		local link
		local u = assert(tai.mcp.connect(entry, {on_elicit = function(req)
			link = {req.mode, req.url, req.host, req.unicode, req.id, #req.warnings}
			return "decline"
		end}))
		local ur = assert(u:call("url"))
		u:close()
		local plain = assert(tai.mcp.connect(entry))
		local refused = plain:call("form")
		plain:close()
		return ur.content[1].text .. " " .. table.concat(link, " ", 1, 5) .. " " .. link[6], r.content[1].text, seen[1], seen[2], seen[3], seen[4], seen[5], seen[6], seen[7], seen[8], seen[9], seen[10], seen[11],
			refused.isError, refused.content[1].text`, exe))
	want := []any{"decline url https://xn--bcher-kva.example/go xn--bcher-kva.example bücher.example u1 1",
		`accept {"age":30,"color":"#00f","name":"Ada"}`, "el", "tell me", "form", int64(4), "Your name", "true",
		"Blue", "#f00", "true", int64(30), "age wants a number from 0 to 150, not 200",
		true, "client does not support elicitation"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if s, ok := want[i].(string); ok && i == len(want)-1 {
			if g, _ := got[i].(string); !strings.Contains(g, s) {
				t.Fatalf("refusal %q, want %q", g, s)
			}
			continue
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("value %d: got %#v, want %#v (all: %v)", i, got[i], want[i], got)
		}
	}
}

// elicitorHost is a host in mode whose model is the fake, asked to call
// the form tool of the elicitor, registered as server "el" and enabled.
func elicitorHost(t *testing.T, mode tool.Mode) (*testHost, *llmtest.Server) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, srv, _ := modelHost(t, mode)
	cfg, _ := json.Marshal(map[string]any{"el": map[string]any{
		"transport": "stdio", "command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": elicitorMode},
	}})
	srv.Push(llmtest.Calls(llmtest.Call("mcp_el_form", `{}`)), llmtest.Say("done"))
	mustRun(t, h, fmt.Sprintf(`
		tai.prompter{confirm = function() return true end, ask = function() return "y" end}
		assert(tai.mcp.add{source = %q})
		assert(tai.mcp.enable{server = "el"})`, string(cfg)))
	return h, srv
}

// TestOnElicitAnswersForRegisteredServers: tai.mcp.on_elicit answers a
// registered server's form in the middle of the model's call, in the
// default mode; under --auto it is not asked, the form is declined at
// once, and the call's line says why.
func TestOnElicitAnswersForRegisteredServers(t *testing.T) {
	for _, mode := range []tool.Mode{tool.Interactive, tool.Auto} {
		t.Run(mode.String(), func(t *testing.T) {
			h, srv := elicitorHost(t, mode)
			got := mustRun(t, h, `
				local asked = 0
				tai.mcp.on_elicit = function(req) asked = asked + 1 return {action = "accept", content = {name = "Bo"}} end
				local notes = {}
				local answer = assert(tai.chat("fill it", {on_tool_end = function(ev)
					for _, n in ipairs(ev.notes or {}) do notes[#notes + 1] = n end end}))
				return answer, asked, table.concat(notes, "|")`)
			reqs := srv.Requests()
			results := reqs[len(reqs)-1].ToolResults()
			if mode == tool.Interactive {
				if got[1] != int64(1) || got[2] != "" || len(results) != 1 || results[0].Text != `accept {"age":30,"color":"#f00","name":"Bo"}` {
					t.Fatalf("got %v, the server answered %+v", got, results)
				}
				return
			}
			if got[1] != int64(0) || got[2] != "el asked for a form, declined: --auto answers no server's questions" || len(results) != 1 || results[0].Text != "decline null" {
				t.Fatalf("got %v, the server answered %+v", got, results)
			}
		})
	}
}

// TestREPLAsksTheForm: the REPL's prompter (chatview.prompter) puts a
// registered server's form to the person field by field, with the
// field's own check: Enter takes the default, a wrong answer is said and
// asked again, a choice is taken by its title, e asks again with the
// answers as defaults, y sends. The person's keys come from a scripted
// line editor; Esc at the first question cancels.
func TestREPLAsksTheForm(t *testing.T) {
	for _, tc := range []struct {
		name, keys, lines, want string
		said                    []string
	}{
		{name: "answered", keys: `"y", "e", "y"`, lines: `"Ada", "200", "", "blue", "", "", "", "", ""`,
			want: `accept {"age":30,"color":"#00f","name":"Ada"}`,
			said: []string{"? el asks you to fill in a form:", "tell me", "Your name (name)", "2) Blue", "age wants a number from 0 to 150, not 200",
				"this looks like a secret", "color = #00f"}},
		{name: "Esc cancels", keys: `""`, want: "cancel null", said: []string{"? el asks you to fill in a form:"}},
		{name: "declined at the end", keys: `"y", "d"`, lines: `"Bo", "", "", ""`, want: "decline null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := elicitorHost(t, tool.Interactive)
			got := mustRun(t, h, fmt.Sprintf(`
				local keys, lines, said = {%s}, {%s}, {}
				local rl = {
					key = function(_, prompt) return table.remove(keys, 1) or "" end,
					read = function(_, prompt) return table.remove(lines, 1) end,
				}
				local p = require("tai.chatview").prompter(function() return rl end, function(s) said[#said + 1] = s end)
				p.confirm = function() return true end
				tai.prompter(p)
				assert(tai.chat("fill it"))
				return table.concat(said, "\n")`, tc.keys, tc.lines))
			reqs := srv.Requests()
			results := reqs[len(reqs)-1].ToolResults()
			if len(results) != 1 || results[0].Text != tc.want {
				t.Fatalf("the server got %+v, want %q; the screen:\n%s", results, tc.want, got[0])
			}
			for _, s := range tc.said {
				if !strings.Contains(got[0].(string), s) {
					t.Fatalf("the screen lacks %q:\n%s", s, got[0])
				}
			}
		})
	}
}

// TestREPLFormSecretHidden: a field named like a secret is read without
// echo through the line editor (rl:read_hidden, which pauses the turn's
// escape watch as rl:read does, where tai.term.read_hidden raced it for
// the keys) and shown masked in the answers before they are sent; the
// server still gets what was typed.
func TestREPLFormSecretHidden(t *testing.T) {
	h, srv := elicitorHost(t, tool.Interactive)
	got := mustRun(t, h, `
		local keys, lines, said, hidden = {"y", "y"}, {"Ada", "", ""}, {}, {}
		tai.term.read_hidden = function() error("read around the turn's escape watch") end
		local rl = {
			key = function(_, prompt) return table.remove(keys, 1) or "" end,
			read = function(_, prompt) return table.remove(lines, 1) end,
			read_hidden = function(_, prompt) hidden[#hidden + 1] = prompt return "hunter2-xyz" end,
		}
		local p = require("tai.chatview").prompter(function() return rl end, function(s) said[#said + 1] = s end)
		p.confirm = function() return true end
		tai.prompter(p)
		assert(tai.chat("fill it"))
		return table.concat(said, "\n"), table.concat(hidden, "|")`)
	reqs := srv.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || !strings.Contains(results[0].Text, `"api_key":"hunter2-xyz"`) {
		t.Fatalf("the server got %+v", results)
	}
	screen := got[0].(string)
	if strings.Contains(screen, "hunter2") || !strings.Contains(screen, "api_key = (hidden)") || !strings.Contains(screen, "this looks like a secret") {
		t.Fatalf("the screen:\n%s", screen)
	}
	if !strings.Contains(got[1].(string), "api_key") {
		t.Fatalf("read without echo: %q", got[1])
	}
}

// TestElicitNobodyToAsk: with no script answering and a prompter that
// cannot put a form (no terminal, as under tai -p piped), the form is
// declined and the call's line says why.
func TestElicitNobodyToAsk(t *testing.T) {
	h, srv := elicitorHost(t, tool.Interactive)
	got := mustRun(t, h, `
		local notes = {}
		local answer = assert(tai.chat("fill it", {on_tool_end = function(ev)
			for _, n in ipairs(ev.notes or {}) do notes[#notes + 1] = n end end}))
		return answer, table.concat(notes, "|")`)
	reqs := srv.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if got[1] != "el asked for a form, declined: "+tool.RefusedNoTerminal || len(results) != 1 || results[0].Text != "decline null" {
		t.Fatalf("got %v, the server answered %+v", got, results)
	}
}
