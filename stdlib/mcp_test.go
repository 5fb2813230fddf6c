package stdlib_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestReportReadsDeclined: /mcp's report says "you said no" for a server
// the bridge marks declined, and shows the reason of any other refusal,
// though that reason may hold the same words.
func TestReportReadsDeclined(t *testing.T) {
	got := run(t, `
		local repl, mcp = require("repl"), require("mcp")
		local said, warned = {}, {}
		repl.say = function(s) said[#said + 1] = s end
		repl.warn = function(s) warned[#warned + 1] = s end
		mcp.report({ servers = {
			{ server = "a", outcome = "refused", declined = true, reason = 'mcp server "a" not started: consent was refused' },
			{ server = "b", outcome = "refused", reason = "start /tmp/consent was refused: no such file or directory" },
		} })
		return table.concat(said, "\n"), table.concat(warned, "\n")`)
	want := []any{"not added: a (you said no; nothing was started)", "refused b: start /tmp/consent was refused: no such file or directory"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestGitHubPasteIsReadOnce: a GitHub URL pasted at the prompt is parsed
// once (tai.mcp.github) on its way through the preview, the consent and
// the add.
func TestGitHubPasteIsReadOnce(t *testing.T) {
	got := run(t, `
		local repl = require("repl")
		local said = {}
		repl.say = function(s) said[#said + 1] = s end
		repl.warn = repl.say
		local parse, parsed, added = tai.mcp.github, 0, nil
		tai.mcp.github = function(s) parsed = parsed + 1 return parse(s) end
		tai.mcp.resolve = function(url)
			return { entry = { name = "demo", transport = "stdio", command = "demo-server" }, notes = {}, origin = "found in README.md" }
		end
		tai.mcp.add = function(args) added = args.source return { servers = {} } end
		repl.handle("https://github.com/owner/demo")
		return parsed, added, table.concat(said, "\n")`)
	if want := []any{int64(1), "https://github.com/owner/demo"}; !reflect.DeepEqual(got[:2], want) || !strings.Contains(got[2].(string), "found in README.md") {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAddTakesACommandLine: /mcp add takes a command to run as Claude Code
// does (NAME -- COMMAND ARGS…), and a bare command line named after its
// package; a config, a URL, a stored server's name, a file and a claude
// line stay as they are.
func TestAddTakesACommandLine(t *testing.T) {
	file := t.TempDir() + "/my servers.json"
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ source, want string }{
		{"npx -y @modelcontextprotocol/server-filesystem .", "claude mcp add filesystem -- npx -y @modelcontextprotocol/server-filesystem ."},
		{"uvx mcp-server-fetch", "claude mcp add fetch -- uvx mcp-server-fetch"},
		{"npx -y @upstash/context7-mcp@latest", "claude mcp add context7 -- npx -y @upstash/context7-mcp@latest"},
		{"docker run -i --rm -e A=1 mcp/github", "claude mcp add github -- docker run -i --rm -e A=1 mcp/github"},
		{"fs -e ROOT=/tmp -- npx -y pkg", "claude mcp add fs -e ROOT=/tmp -- npx -y pkg"},
		{"memory", ""},
		{"https://mcp.notion.com/mcp", ""},
		{`{"mcpServers": {"m": {"command": "npx"}}}`, ""},
		{"claude mcp add x -- y", ""},
		{"github.com/upstash/context7", ""},
		{file, ""},
	} {
		got := run(t, fmt.Sprintf(`local line = require("mcp").command_line(%q) return line or ""`, c.source))
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("command_line(%q) = %q, want %q", c.source, got, c.want)
		}
	}
}

// TestMCPLogCommand: /mcp log SERVER [LEVEL] shows the log, one line per
// message with control characters made visible and a cut text marked,
// says when the server was asked for the level or why not, and refuses
// an unknown level, or a server that is not there, before asking
// anything (so does /mcp resources, and for a server that is off).
func TestMCPLogCommand(t *testing.T) {
	got := run(t, `
		local repl, mcp = require("repl"), require("mcp")
		local said, warned, asked = {}, {}, {}
		repl.say = function(s) said[#said + 1] = s end
		repl.warn = function(s) warned[#warned + 1] = s end
		tai.mcp.log = function(args)
			asked[#asked + 1] = args.server .. ":" .. tostring(args.level)
			return { kept = 2, dropped = 7, level = args.level, set = args.server == "loud",
				note = args.server ~= "loud" and args.level and "the server does not declare logging" or nil,
				entries = { { time = "2026-12-05T01:02:03.5Z", level = "error", logger = "db", text = "bad\27[2Jthing", cut = 5000 } } }
		end
		tai.mcp.list = function() return { { name = "loud", enabled = true }, { name = "quiet", enabled = false } } end
		tai.mcp.resources = function(args) asked[#asked + 1] = "resources " .. args.server return { resources = {} } end
		mcp.install()
		repl.handle("/mcp log nosuch")
		repl.handle("/mcp resources nosuch")
		repl.handle("/mcp resources quiet")
		repl.handle("/mcp log loud WARNING")
		repl.handle("/mcp log quiet debug")
		repl.handle("/mcp log loud shouty")
		repl.handle("/mcp log")
		return table.concat(said, "\n"), table.concat(warned, "\n"), table.concat(asked, ",")`)
	said, warned := got[0].(string), got[1].(string)
	for _, want := range []string{"asked loud to log at warning and above", "loud: 2 messages kept, 7 older dropped; shown: warning and above",
		"  01:02:03 error   db bad", "(5000 bytes, cut)"} {
		if !strings.Contains(said, want) {
			t.Errorf("said %q\nlacks %q", said, want)
		}
	}
	if strings.Contains(said, "\x1b") {
		t.Errorf("an escape reached the screen: %q", said)
	}
	// A server that is not there, or off, is the command a person types.
	for _, want := range []string{"does not declare logging", "no log level is named shouty; levels: debug, info", "usage: /mcp log SERVER [LEVEL]",
		"no MCP server is named nosuch: /mcp lists them\nno MCP server is named nosuch: /mcp lists them\n/mcp enable quiet first: quiet is off for this profile"} {
		if !strings.Contains(warned, want) {
			t.Errorf("warned %q\nlacks %q", warned, want)
		}
	}
	if got[2] != "loud:warning,quiet:debug" {
		t.Errorf("asked %v", got[2])
	}
}

// TestSamplePrompter: the REPL shows a server's sampling request in full
// before anything is sent (server, model, system prompt, maxTokens, model
// preferences, tools, each message, control characters made visible), and
// turns the keys into decisions: s shows it whole and asks again, t
// approves with its tools, e edits the prompt, Enter denies; then the
// answer is shown and y returns it.
func TestSamplePrompter(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		local answers = { "s", "t", "e", "shorter please", "", "y", "n" }
		local said = {}
		local rl = { read = function() return table.remove(answers, 1) end }
		local p = chat.prompter(function() return rl end, function(s) said[#said + 1] = s end)
		local q = { server = "everything", model = "fake-model", request = {
			systemPrompt = "You are\27[31m helpful", maxTokens = 100, lowered = 5000,
			modelPreferences = { hints = { "claude-3-sonnet" }, intelligencePriority = 0.8 },
			tools = { { name = "get_weather", inputSchema = {} } }, toolChoice = "auto",
			messages = { { role = "user", content = { { type = "text", text = "what is 2+2?" }, { type = "image", mimeType = "image/png", size = 12 } } } } } }
		local first = p.sample(q)
		local second = p.sample(q)
		local third = p.sample(q)
		local back = p.sample_answer(q, { model = "fake-model", text = "4", stop_reason = "endTurn" })
		local kept = p.sample_answer(q, { model = "fake-model", text = "4", stop_reason = "endTurn" })
		return tai.json.encode(first), tai.json.encode(second), third, back, kept, table.concat(said, "\n")`)
	if got[0] != `{"action":"approve","tools":true}` || got[1] != `{"action":"approve","prompt":"shorter please"}` || got[2] != "deny" || got[3] != true || got[4] != false {
		t.Fatalf("decisions %v", got[:5])
	}
	said := got[5].(string)
	for _, want := range []string{"? everything asks your model (fake-model) for a completion (MCP sampling); nothing is sent yet:",
		`system:     You are\x1b[31m helpful`, "max tokens: 100 (it asked for 5000)", "hints claude-3-sonnet; intelligence 0.8",
		"tools it offers your model (the server runs them): get_weather (toolChoice auto)", "user:       what is 2+2?",
		"[image image/png, 12 bytes of base64; not sent to the model]", "the prompt now: what is 2+2?", "fake-model answered (stop: endTurn):", "    4"} {
		if !strings.Contains(said, want) {
			t.Errorf("screen lacks %q:\n%s", want, said)
		}
	}
	if strings.Contains(said, "\x1b") {
		t.Errorf("an escape reached the screen")
	}
}

// TestResourceLines: /mcp resources shows a line per resource (name, URI,
// type, size), templates after, folded at the width with the rest of a
// line indented, a terminal escape made visible, and no more than
// resources_shown of a long list.
func TestResourceLines(t *testing.T) {
	got := run(t, `
		local mcp = require("mcp")
		mcp.resources_shown = 2
		local list = { server = "s", more = true, resources = {
			{ uri = "a://1", name = "one", mimeType = "text/plain", size = 2048 },
			{ uri = "a://`+strings.Repeat("x", 70)+`", name = "\27[2Jlong" },
			{ uri = "a://3", name = "three" },
		}, templates = { { uriTemplate = "a://{id}", name = "item" } } }
		return table.concat(mcp.resource_lines(list, 40), "\n")`)
	want := strings.Join([]string{
		"  one  a://1  (text/plain, 2 KB)",
		"  \\x1b[2Jlong  a://" + strings.Repeat("x", 21),
		"      " + strings.Repeat("x", 34),
		"      " + strings.Repeat("x", 15),
		"  … and 1 more (the model's mcp_resources pages through them)",
		"templates (read with a URI they make):",
		"  item  a://{id}",
		"(the server lists more; the rest are not shown)",
	}, "\n")
	if got[0] != want {
		t.Fatalf("got\n%s\nwant\n%s", got[0], want)
	}
}

// TestResourceLinesNull: a list JSON gave as null (a server that lists
// resources but no templates, or the reverse) is shown as empty, not a
// Lua error.
func TestResourceLinesNull(t *testing.T) {
	got := run(t, `
		local mcp = require("mcp")
		local a = mcp.resource_lines({ server = "s", resources = { { uri = "a://1", name = "one" } }, templates = tai.json.null }, 80)
		local b = mcp.resource_lines({ server = "s", resources = tai.json.null, templates = tai.json.null }, 80)
		return table.concat(a, "\n") .. "|" .. table.concat(b, "\n")`)
	if want := "  one  a://1|s lists no resources"; got[0] != want {
		t.Fatalf("got %q, want %q", got[0], want)
	}
}

// TestAttachResources: @server:uri of a registered server is read into the
// message (at most the count given) and taken out of the text the @file
// pass reads; a mention of an unknown server that holds :// is a note;
// @file.go:12 and an address like @host:8080 are left to the @file pass.
func TestAttachResources(t *testing.T) {
	got := run(t, `
		local repl, mcp = require("repl"), require("mcp")
		local said, reads = {}, {}
		repl.say = function(s) said[#said + 1] = s end
		tai.mcp.list = function() return { { name = "docs", enabled = true }, { name = "off", enabled = false } } end
		tai.mcp.read = function(a)
			reads[#reads + 1] = a.server .. " " .. a.uri
			if a.uri == "x://dead" then return { text = "mcp_read_resource: mcp server \"<server>\": resources/read: mcp: message larger than the cap: python3 /tmp/srv.py sent a line over 10485760 bytes; the connection is closed (tai starts it again on the next use)", isError = true } end
			if a.uri == "x://bad" then return { text = "mcp_read_resource: mcp server \"<server>\": <uri> not found", isError = true } end
			return { text = "body of " .. a.uri, isError = false }
		end
		local parts = {}
		local rest = mcp.attach_resources("see @docs:x://a, @docs:x://bad @docs:x://b @docs:x://c @nope:y://z @main.go:12 @host:8080", parts, 2)
		local p2 = {}
		mcp.attach_resources("@off:x://secret @docs:x://dead", p2, 5)
		return rest, table.concat(parts, "|"), table.concat(reads, "|"), table.concat(said, "|")`)
	if got[0] != "see      @main.go:12 @host:8080" {
		t.Errorf("text left for @file = %q", got[0])
	}
	if got[1] != "[Resource x://a of MCP server docs:]\nbody of x://a|[Resource x://b of MCP server docs:]\nbody of x://b" {
		t.Errorf("parts = %q", got[1])
	}
	if got[2] != "docs x://a|docs x://bad|docs x://b|docs x://dead" {
		t.Errorf("reads = %q (the third is over the count)", got[2])
	}
	said := got[3].(string)
	for _, want := range []string{"(attached @docs:x://a, ", "(not attached @docs:x://c: a message attaches at most 2)", "(cannot read @docs:x://bad: mcp server \"docs\": x://bad not found; it is sent as text)", "(no MCP server nope here: @nope:y://z is sent as text)",
		// a server off for the profile: the fix first, not the model's wording
		"(/mcp enable off, then send it again, to read @off:x://secret: the server is off for this profile; sent as text)",
		// a long reason is cut between words, no parenthesis left open
		"(cannot read @docs:x://dead: mcp server \"docs\": resources/read: mcp: message larger than the cap: python3 /tmp/srv.py sent a line over 10485760 bytes; the connection is closed …; it is sent as text)"} {
		if !strings.Contains(said, want) {
			t.Errorf("said %q, want %q", said, want)
		}
	}
}

// TestCompleteMention: @ completes the enabled servers as @name:, and
// @name: the URIs it lists quietly (none with a blank).
func TestCompleteMention(t *testing.T) {
	got := run(t, `
		local mcp = require("mcp")
		local quiet
		tai.mcp.list = function() return { { name = "docs", enabled = true }, { name = "dark", enabled = false } } end
		tai.mcp.resources = function(a)
			quiet = a.quiet
			return { server = a.server, resources = { { uri = "x://one" }, { uri = "x://two" }, { uri = "x://o ne" } } }
		end
		return table.concat(mcp.complete_mention("@d"), " "), table.concat(mcp.complete_mention("@docs:x://o"), " "), quiet`)
	if got[0] != "@docs:" || got[1] != "@docs:x://one" || got[2] != true {
		t.Fatalf("got %q", got)
	}
}
