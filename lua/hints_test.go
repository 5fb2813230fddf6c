package lua

import (
	"strings"
	"testing"

	"tai/engine/tool"
)

// TestHintsNameREPLCommands: what the vault and the config reader refuse
// comes to Lua with the REPL command that helps, which those packages no
// longer name themselves.
func TestHintsNameREPLCommands(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	got := mustRun(t, h, `
		local _, bad = tai.conversations.get("x7")
		local _, huge = tai.conversations.save{messages = {{role = "user", content = string.rep("x", 8 * 1024 * 1024)}}}
		local _, gh = tai.mcp.normalize("https://github.com/modelcontextprotocol/servers")
		local _, notes = tai.mcp.normalize("claude mcp add --transport http notes https://mcp.example.com/mcp --client-secret")
		local said = {}
		for _, n in ipairs(notes or {}) do said[#said + 1] = n.text end
		return bad, huge, gh, table.concat(said, "\n")`)
	for i, want := range []string{
		`"x7" is not a conversation id (c and a number, as /resume lists them)`,
		": compact it (/compact) or start a new one (/new)",
		"names a repository, which the resolver reads: /mcp add https://github.com/modelcontextprotocol/servers (or tai.mcp.resolve) finds its server entry",
		`store it with tai.vault.secret_set("NAME", "…") and log in with /mcp login SERVER --client-secret ${NAME}`,
	} {
		if s, _ := got[i].(string); !strings.Contains(s, want) {
			t.Errorf("error %d = %q, want it to hold %q", i+1, got[i], want)
		}
	}
}
