package lua

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docTool is a tool as mcp/README.md must describe it: its name and its
// arguments, read from its JSON Schema.
type docTool struct {
	name   string
	args   map[string]bool // argument → required
	arrays map[string]bool // arguments that are arrays
}

// docToolOf reads a tool's arguments from its input schema.
func docToolOf(name string, schema []byte) (docTool, error) {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			return docTool{}, fmt.Errorf("%s's schema: %v", name, err)
		}
	}
	d := docTool{name: name, args: map[string]bool{}, arrays: map[string]bool{}}
	for arg, p := range s.Properties {
		d.args[arg] = false
		d.arrays[arg] = p.Type == "array"
	}
	for _, r := range s.Required {
		d.args[r] = true
	}
	return d, nil
}

// freshTools builds a fresh tai (a new vault, no init.lua, no servers)
// and returns the tools its registry holds (tai.tools(), with their
// schemas) and the tools it serves.
func freshTools(t *testing.T) (registry map[string]docTool, served []docTool) {
	t.Helper()
	h := newHost(t, Options{Vault: openTestVault(t, "")}, nil)
	got, err := h.DoString(ctxT(t), `
		local out = {}
		for _, tool in ipairs(tai.tools()) do
			out[#out + 1] = {name = tool.name, parameters = tool.parameters}
		end
		return tai.json.encode(out)`, "tools")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(got[0].(string)), &list); err != nil {
		t.Fatal(err)
	}
	registry = map[string]docTool{}
	for _, tool := range list {
		d, err := docToolOf(tool.Name, tool.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		registry[tool.Name] = d
	}
	e, err := h.Engine()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range e.Served(nil).Tools() {
		d, err := docToolOf(tool.Name, tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, d)
	}
	return registry, served
}

// toolRowDrift checks the doc's table row for tool: a row whose first cell
// is the backquoted name, whose second cell names every argument as
// `arg` (required) or `arg?` (optional; `arg[]` for an array), and no
// argument the tool lacks.
func toolRowDrift(doc string, tool docTool) []string {
	row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(tool.name) + "` \\|([^|]*)\\|.*\\|\\s*$").FindStringSubmatch(doc)
	if row == nil {
		return []string{fmt.Sprintf("mcp/README.md has no table row for the tool `%s`", tool.name)}
	}
	cell := row[1]
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_][a-z0-9_]*)(\\[\\])?(\\?)?`").FindAllStringSubmatch(cell, -1) {
		named[m[1]] = true
	}
	var problems []string
	args := make([]string, 0, len(tool.args))
	for a := range tool.args {
		args = append(args, a)
	}
	sort.Strings(args)
	for _, a := range args {
		want := a
		if tool.arrays[a] {
			want += "[]"
		}
		if !tool.args[a] {
			want += "?"
		}
		if !strings.Contains(cell, "`"+want+"`") {
			problems = append(problems, fmt.Sprintf("mcp/README.md's row for `%s` does not name its argument as `%s`: |%s|", tool.name, want, cell))
		}
	}
	for a := range named {
		if _, ok := tool.args[a]; !ok {
			problems = append(problems, fmt.Sprintf("mcp/README.md's row for `%s` names the argument `%s`, which the tool does not take", tool.name, a))
		}
	}
	sort.Strings(problems)
	return problems
}

// mcpDocDrift lists what mcp/README.md fails to say about a fresh tai's
// tools: each mcp_* agent tool and each served extra (a served tool that
// is not a registry tool) with its arguments, and the number served.
func mcpDocDrift(doc string, registry map[string]docTool, served []docTool) []string {
	var problems []string
	var agent []string
	for name := range registry {
		if strings.HasPrefix(name, "mcp_") {
			agent = append(agent, name)
		}
	}
	sort.Strings(agent)
	if len(agent) == 0 {
		problems = append(problems, "a fresh tai's registry holds no mcp_* tools")
	}
	for _, name := range agent {
		problems = append(problems, toolRowDrift(doc, registry[name])...)
	}
	var extras []docTool
	for _, tool := range served {
		if _, ok := registry[tool.name]; !ok {
			extras = append(extras, tool)
		}
	}
	if len(extras) == 0 {
		problems = append(problems, "a fresh tai serves no extras (tools that are not registry tools)")
	}
	for _, tool := range extras {
		problems = append(problems, toolRowDrift(doc, tool)...)
	}
	words := []string{"zero", "one", "two", "three", "four", "five"}
	n := fmt.Sprint(len(extras))
	if len(extras) < len(words) {
		n = words[len(extras)]
	}
	want := fmt.Sprintf("serves %d tools: %d native ones and the %s extras", len(served), len(served)-len(extras), n)
	if !strings.Contains(strings.Join(strings.Fields(doc), " "), want) {
		problems = append(problems, fmt.Sprintf("mcp/README.md does not say %q (counted in a fresh tai)", want))
	}
	return problems
}

func readMCPDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "mcp", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCPDocAgentToolsAndServedTools: mcp/README.md has a row for every
// mcp_* tool of a fresh tai's registry and for each served extra, naming
// exactly their arguments as their schemas give them, and states the
// number of tools served as a fresh tai serves them.
func TestMCPDocAgentToolsAndServedTools(t *testing.T) {
	registry, served := freshTools(t)
	for _, p := range mcpDocDrift(readMCPDoc(t), registry, served) {
		t.Error(p)
	}
}

// TestMCPDocToolDriftIsCaught: an argument added to a tool, an argument
// documented but gone, a tool without a row, a served tool more, and a
// required argument documented as optional are each reported by name.
func TestMCPDocToolDriftIsCaught(t *testing.T) {
	registry, served := freshTools(t)
	doc := readMCPDoc(t)
	clone := func() map[string]docTool {
		out := map[string]docTool{}
		for k, v := range registry {
			c := docTool{name: v.name, args: map[string]bool{}, arrays: v.arrays}
			for a, r := range v.args {
				c.args[a] = r
			}
			out[k] = c
		}
		return out
	}
	tests := []struct {
		name     string
		doc      string
		registry func() map[string]docTool
		served   []docTool
		want     string
	}{
		{"an argument added", doc, func() map[string]docTool { r := clone(); r["mcp_add"].args["timeout"] = false; return r }, served,
			"`mcp_add` does not name its argument as `timeout?`"},
		{"an argument gone", doc, func() map[string]docTool { r := clone(); delete(r["mcp_call"].args, "args"); return r }, served,
			"`mcp_call` names the argument `args`, which the tool does not take"},
		{"a required argument shown optional", doc, func() map[string]docTool { r := clone(); r["mcp_tools"].args["server"] = true; return r }, served,
			"`mcp_tools` does not name its argument as `server`"},
		{"a tool without a row", doc, func() map[string]docTool {
			r := clone()
			r["mcp_export"] = docTool{name: "mcp_export", args: map[string]bool{}}
			return r
		}, served,
			"no table row for the tool `mcp_export`"},
		{"a row gone", regexp.MustCompile("(?m)^\\| `mcp_login` \\|.*\n").ReplaceAllString(doc, ""), clone, served,
			"no table row for the tool `mcp_login`"},
		{"an extra's argument gone from the doc", strings.Replace(doc, "`session?`, ", "", 1), clone, served,
			"`chat` does not name its argument as `session?`"},
		{"one more served tool", doc, clone, append(served[:len(served):len(served)], docTool{name: "new_extra", args: map[string]bool{}}),
			fmt.Sprintf("serves %d tools", len(served)+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(mcpDocDrift(tc.doc, tc.registry(), tc.served), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("want a problem naming %q, got:\n%s", tc.want, got)
			}
		})
	}
}
