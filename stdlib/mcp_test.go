package stdlib_test

import (
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
