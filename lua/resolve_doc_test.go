package lua

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestResolverDocDrift: mcp/README.md's resolver section names the files
// resolve.lua reads in resolve.lua's order, and every tool the subagent
// can have.
func TestResolverDocDrift(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "mcp", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "### Resolving a GitHub repository")
	if !ok {
		t.Fatal("mcp/README.md has no resolver section")
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	m := regexp.MustCompile("reads, in this order: ([^\n]+(?:\n[^\n]+)?)").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("the resolver section does not say which files are read in which order")
	}
	var named []string
	for _, x := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
		named = append(named, x[1])
	}
	h := newHost(t, Options{Clean: true}, nil)
	got := mustRun(t, h, `
		local r = require("resolve")
		local files, tools = {}, {}
		for _, f in ipairs(r.files_order) do files[#files + 1] = f.name end
		for _, n in ipairs(r.agent_tools) do tools[#tools + 1] = n end
		return table.concat(files, " "), table.concat(tools, " ")`)
	files := strings.Fields(got[0].(string))
	if strings.Join(named, " ") != strings.Join(files, " ") {
		t.Errorf("mcp/README.md reads %v in this order; resolve.lua reads %v", named, files)
	}
	for _, tool := range append(strings.Fields(got[1].(string)), toolRepoFile, toolRepoList, toolRepoReadme) {
		if !strings.Contains(sec, "`"+tool+"`") {
			t.Errorf("the resolver section does not name the subagent tool %s", tool)
		}
	}
}
