package tool

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/vault/vaulttest"
)

func selectRegistry(t testing.TB) *Registry {
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Yolo, nil))
	for _, tool := range []Tool{
		textTool("read_file", "Read a text file", true, ""),
		textTool("shell", "Run a shell command", false, ""),
		textTool("tool_search", "Search tools", true, ""),
		textTool("github_search_issues", "Search issues in a GitHub repository", true, ""),
		textTool("github_create_issue", "Create a new issue in a GitHub repository", false, ""),
		textTool("weather_forecast", "Get the weather forecast for a city", true, ""),
		textTool("postgresQuery", "Run a read-only SQL query against PostgreSQL", true, ""),
		textTool("calendar_list_events", "List calendar events in a date range", true, ""),
	} {
		addTool(t, reg, tool)
	}
	return reg
}

func TestSelectTools(t *testing.T) {
	core := []string{"read_file", "shell", "tool_search"}
	tests := []struct {
		name string
		conv []llm.Message
		opts SelectOptions
		want []string
	}{
		{
			name: "core only when nothing matches",
			conv: []llm.Message{{Role: "user", Content: "hello there"}},
			want: core,
		},
		{
			name: "equal scores break ties by name",
			conv: []llm.Message{{Role: "user", Content: "Find the open issues about login in our GitHub repo"}},
			want: append(slices.Clone(core), "github_create_issue", "github_search_issues"),
		},
		{
			name: "camel case names and plurals match, description words add",
			conv: []llm.Message{{Role: "user", Content: "run a postgres query; also what events are on my calendar"}},
			want: append(slices.Clone(core), "postgresQuery", "calendar_list_events"),
		},
		{
			name: "cap bounds the matches, best first",
			conv: []llm.Message{{Role: "user", Content: "github weather forecast"}},
			opts: SelectOptions{Cap: 1},
			want: append(slices.Clone(core), "weather_forecast"),
		},
		{
			name: "enabled and called tools stay offered",
			conv: []llm.Message{
				{Role: "user", Content: "what is the forecast"},
				{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "1", Name: "weather_forecast", Arguments: []byte(`{}`)}}},
				{Role: "tool", ToolCallID: "1", Content: "sunny"},
				{Role: "user", Content: "thanks"},
			},
			opts: SelectOptions{Enabled: []string{"calendar_list_events"}},
			want: append(slices.Clone(core), "calendar_list_events", "weather_forecast"),
		},
		{
			name: "allow restricts everything",
			conv: []llm.Message{{Role: "user", Content: "github issues"}},
			opts: SelectOptions{Allow: func(n string) bool { return n != "shell" && n != "github_create_issue" }},
			want: []string{"read_file", "tool_search", "github_search_issues"},
		},
		{
			name: "negative cap offers no matches",
			conv: []llm.Message{{Role: "user", Content: "github issues"}},
			opts: SelectOptions{Cap: -1},
			want: core,
		},
	}
	reg := selectRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Budget = -1 // these few tools would all fit: choose anyway
			got := names(reg.SelectTools(tt.conv, tt.opts))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("SelectTools = %v\nwant %v", got, tt.want)
			}
			if again := names(reg.SelectTools(tt.conv, tt.opts)); !reflect.DeepEqual(again, got) {
				t.Fatalf("not deterministic: %v then %v", got, again)
			}
		})
	}
}

func TestSelectToolsSpecSource(t *testing.T) {
	reg := selectRegistry(t)
	calls := 0
	bridged := []llm.ToolSpec{
		{Name: "mcp_jira_find_tickets", Description: "Find Jira tickets by JQL"},
		{Name: "shell", Description: "a bridged tool shadowed by the native shell"},
	}
	reg.SetSpecSource(func(string) []llm.ToolSpec { calls++; return bridged })
	conv := []llm.Message{{Role: "user", Content: "which jira tickets are open?"}}
	got := names(reg.SelectTools(conv, SelectOptions{}))
	if !slices.Contains(got, "mcp_jira_find_tickets") {
		t.Fatalf("bridged spec not selected: %v", got)
	}
	for _, s := range reg.SelectTools([]llm.Message{{Role: "user", Content: "shell"}}, SelectOptions{}) {
		if s.Name == "shell" && s.Description != "Run a shell command" {
			t.Fatalf("a bridged spec shadowed the native tool: %+v", s)
		}
	}
	bridged = append(bridged, llm.ToolSpec{Name: "mcp_jira_close_ticket", Description: "Close a Jira ticket"})
	got = names(reg.SelectTools(conv, SelectOptions{}))
	if !slices.Contains(got, "mcp_jira_close_ticket") {
		t.Fatalf("a changed spec list was not re-indexed: %v", got)
	}
	if calls != 3 {
		t.Fatalf("spec source consulted %d times, want once per selection (3)", calls)
	}
	if found := names(reg.Search("close jira", 1)); !reflect.DeepEqual(found, []string{"mcp_jira_close_ticket"}) {
		t.Fatalf("Search = %v", found)
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"getFileContents", "get file content"},
		{"mcp_github_search_issues", "mcp github search issue"},
		{"The branches, boxes and queries!", "branch box query"},
		{"a an to is HTTPServer", "httpserver"},
		{"status of gpu", "status gpu"},
	}
	for _, tt := range tests {
		var got []string
		tokenize(tt.in, func(w string) { got = append(got, w) })
		if fmt.Sprint(got) != fmt.Sprint(slices.Collect(func(yield func(string) bool) {
			for _, w := range splitFields(tt.want) {
				if !yield(w) {
					return
				}
			}
		})) {
			t.Errorf("tokenize(%q) = %v, want %q", tt.in, got, tt.want)
		}
	}
}

func splitFields(s string) []string {
	var out []string
	w := ""
	for _, c := range s + " " {
		if c == ' ' {
			if w != "" {
				out = append(out, w)
			}
			w = ""
			continue
		}
		w += string(c)
	}
	return out
}

// bridgedCatalogue returns 32 servers × 100 tools with realistic names and
// descriptions.
func bridgedCatalogue() []llm.ToolSpec {
	servers := []string{"github", "gitlab", "jira", "slack", "notion", "linear", "sentry", "postgres",
		"mysql", "redis", "s3", "gcs", "kubernetes", "docker", "terraform", "aws", "azure", "stripe",
		"shopify", "salesforce", "hubspot", "zendesk", "confluence", "figma", "discord", "twilio",
		"sendgrid", "datadog", "grafana", "pagerduty", "airtable", "calendar"}
	verbs := []string{"list", "get", "create", "update", "delete", "search", "archive", "export", "import", "sync"}
	nouns := []string{"issues", "projects", "users", "comments", "files", "records", "events", "alerts", "reports", "invoices"}
	var out []llm.ToolSpec
	for _, s := range servers {
		for i, v := range verbs {
			for j, n := range nouns {
				out = append(out, llm.ToolSpec{
					Name: fmt.Sprintf("mcp_%s_%s_%s", s, v, n),
					Description: fmt.Sprintf("%s the %s of a %s workspace. Supports pagination with a cursor, filters by owner "+
						"and status, and returns JSON with ids, titles and timestamps (variant %d).", v, n, s, i*10+j),
					Parameters: map[string]any{"type": "object", "properties": map[string]any{"cursor": map[string]any{"type": "string"}}},
				})
			}
		}
	}
	return out
}

func benchConversation() []llm.Message {
	return []llm.Message{
		{Role: "user", Content: "Our deploy failed last night. Check the sentry alerts for the api project and open a jira issue."},
		{Role: "assistant", Content: "I'll look at the Sentry alerts first, then create the Jira issue with a summary."},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "1", Name: "mcp_sentry_list_alerts", Arguments: []byte(`{}`)}}},
		{Role: "tool", ToolCallID: "1", Content: "3 alerts: TypeError in handler, timeout on /v1/orders, OOM in worker"},
		{Role: "user", Content: "Also post a summary to the incidents channel on Slack and list the kubernetes events for the worker."},
	}
}

// BenchmarkSelectTools measures one selection over 3,200 tools (32 servers
// × 100 bridged tools) registered in the registry.
func BenchmarkSelectTools(b *testing.B) {
	reg := NewRegistry(vaulttest.Open(b), NewApprover(Yolo, nil))
	for _, s := range bridgedCatalogue() {
		addTool(b, reg, Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters, Run: textTool("x", "", true, "").Run})
	}
	conv := benchConversation()
	got := reg.SelectTools(conv, SelectOptions{})
	if len(got) == 0 {
		b.Fatal("nothing selected")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		reg.SelectTools(conv, SelectOptions{})
	}
}

// BenchmarkSelectToolsSpecSource measures the same selection when the 3,200
// tools come from a spec source (the MCP bridge's cached schemas).
func BenchmarkSelectToolsSpecSource(b *testing.B) {
	reg := NewRegistry(vaulttest.Open(b), NewApprover(Yolo, nil))
	cat := bridgedCatalogue()
	reg.SetSpecSource(func(string) []llm.ToolSpec { return cat })
	conv := benchConversation()
	reg.SelectTools(conv, SelectOptions{})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		reg.SelectTools(conv, SelectOptions{})
	}
}

func TestSelectToolsLargeCatalogue(t *testing.T) {
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Yolo, nil))
	cat := bridgedCatalogue()
	reg.SetSpecSource(func(string) []llm.ToolSpec { return cat })
	got := names(reg.SelectTools(benchConversation(), SelectOptions{}))
	if len(got) != DefaultSelectCap+1 { // the called sentry tool plus the cap
		t.Fatalf("selected %d tools, want %d: %v", len(got), DefaultSelectCap+1, got)
	}
	if got[0] != "mcp_sentry_list_alerts" {
		t.Fatalf("the tool in use is not first: %v", got[:3])
	}
	for _, want := range []string{"mcp_jira_create_issues", "mcp_kubernetes_list_events", "mcp_sentry_list_events"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not selected: %v", want, got)
		}
	}
}

// A SpecSource tool whose schema changed while its name and description
// did not (a person granted a redefinition of the schema alone) is offered
// with the new schema, by selection and by search, not the one indexed
// first.
func TestSelectionOffersTheSpecSourcesCurrentSchema(t *testing.T) {
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Yolo, nil))
	spec := func(prop string) []llm.ToolSpec {
		return []llm.ToolSpec{{Name: "mcp_srv_fetch", Description: "fetches a page",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{prop: map[string]any{"type": "string"}}}}}
	}
	current := spec("url")
	reg.SetSpecSource(func(string) []llm.ToolSpec { return current })
	conv := []llm.Message{{Role: "user", Content: "fetch the page"}}
	props := func(specs []llm.ToolSpec) map[string]any {
		for _, s := range specs {
			if s.Name == "mcp_srv_fetch" {
				return s.Parameters["properties"].(map[string]any)
			}
		}
		t.Fatalf("mcp_srv_fetch not offered: %v", names(specs))
		return nil
	}
	if _, ok := props(reg.SelectTools(conv, SelectOptions{}))["url"]; !ok {
		t.Fatal("the first schema is not offered")
	}
	current = spec("address")
	for what, specs := range map[string][]llm.ToolSpec{"selection": reg.SelectTools(conv, SelectOptions{}), "search": reg.Search("fetch", 5)} {
		if _, ok := props(specs)["address"]; !ok {
			t.Fatalf("%s offers the schema indexed first: %v", what, props(specs))
		}
	}
}

// Thirty matching tools with 60 KB schemas each (a hostile server's, just
// under the bridge's bound) do not make every request carry 1.4 MB of
// schemas: the matched tools' schemas stay within MaxMatchedSchemas.
func TestSelectionBoundsMatchedSchemaBytes(t *testing.T) {
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Yolo, nil))
	var fat []llm.ToolSpec
	for i := range 30 {
		props := map[string]any{}
		for j := range 100 {
			props[fmt.Sprint("p", j)] = map[string]any{"type": "string", "description": strings.Repeat("x", 580)}
		}
		fat = append(fat, llm.ToolSpec{Name: fmt.Sprintf("mcp_fat_fetch%02d", i), Description: "fetch the page",
			Parameters: map[string]any{"type": "object", "properties": props}})
	}
	fat = append(fat, llm.ToolSpec{Name: "mcp_thin_fetch", Description: "fetch the page", Parameters: map[string]any{"type": "object"}})
	reg.SetSpecSource(func(string) []llm.ToolSpec { return fat })
	got := reg.SelectTools([]llm.Message{{Role: "user", Content: "fetch the page"}}, SelectOptions{Core: []string{}})
	b, _ := json.Marshal(got)
	if len(got) == 0 || len(b) > MaxMatchedSchemas+8<<10 {
		t.Fatalf("selected %d tools of %d bytes", len(got), len(b))
	}
	if !slices.Contains(names(got), "mcp_thin_fetch") {
		t.Fatalf("the small match was crowded out: %v", names(got))
	}
}
