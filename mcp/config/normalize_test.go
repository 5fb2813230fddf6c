package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"tai/mcp"
)

func TestNormalizeCanonical(t *testing.T) {
	text := `{
  // canonical entries need no rules
  "mem": {"transport": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],},
  "web": {"transport": "http", "url": "https://mcp.example.net/mcp", "headers": {"Authorization": "Bearer YOUR_API_KEY"}},
  "old": {"transport": "sse", "url": "https://mcp.asana.com/sse"},
}`
	entries, notes, err := Normalize(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name != "mem" || entries[1].Name != "web" {
		t.Fatalf("entries = %+v", entries)
	}
	if entries[0].Source != SourceJSON || entries[0].Enabled || entries[0].Args[1] != "@modelcontextprotocol/server-memory" {
		t.Errorf("mem = %+v", entries[0])
	}
	var refused, placeholder bool
	for _, n := range notes {
		refused = refused || n.Server == "old" && n.Level == LevelRefused && strings.Contains(n.Text, "/mcp instead of /sse")
		placeholder = placeholder || n.Server == "web" && n.Level == LevelWarn && strings.Contains(n.Text, "headers.Authorization") && strings.Contains(n.Text, "YOUR_API_KEY")
	}
	if !refused || !placeholder {
		t.Errorf("notes = %+v", notes)
	}
}

func TestNormalizeTaiCredentials(t *testing.T) {
	text := `{"a": {"transport": "http", "url": "https://x.example.net/mcp?k=${OPENAI_API_KEY}"},
	          "b": {"transport": "stdio", "command": "srv", "env": {"P": "${env:TAI_VAULT_PASSPHRASE}"}}}`
	entries, notes, err := Normalize(text, nil)
	if err != nil || len(entries) != 1 || entries[0].Name != "a" {
		t.Fatalf("entries = %+v, err = %v", entries, err)
	}
	if !slicesContainsText(notes, "hands tai's own credential ${OPENAI_API_KEY}") || !slicesContainsText(notes, "the vault's passphrase") {
		t.Errorf("notes = %+v", notes)
	}
}

func TestNormalizeInputs(t *testing.T) {
	stored := func(name string) (mcp.Entry, bool) {
		if name == "memory" {
			return mcp.Entry{Name: "memory", Transport: "stdio", Command: "npx", Source: "github:o/r"}, true
		}
		return mcp.Entry{}, false
	}
	tests := []struct {
		name, text string
		wantErr    string
		is         error
		want       string // first entry name
	}{
		{name: "empty", text: "  \n", wantErr: "nothing to normalize"},
		{name: "stored word", text: "memory\n", want: "memory"},
		{name: "unknown word", text: "nosuch", wantErr: "no stored server"},
		{name: "github", text: "https://github.com/upstash/context7", is: ErrGitHubURL},
		{name: "no servers", text: `{}`, is: ErrNoServers},
		{name: "smart quotes", text: "{\n  “mcpServers”: {}\n}", wantErr: "line 2, column 3"},
		{name: "toml error", text: "[mcp_servers.x]\ncommand = \n", wantErr: "TOML, line 2"},
		{name: "neither", text: "hello there, world", wantErr: "neither JSON nor TOML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, _, err := Normalize(tt.text, &Options{Stored: stored})
			switch {
			case tt.is != nil:
				if !errors.Is(err, tt.is) {
					t.Errorf("err = %v, want %v", err, tt.is)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			default:
				if err != nil || len(entries) == 0 || entries[0].Name != tt.want {
					t.Errorf("entries = %+v, err = %v", entries, err)
				}
			}
		})
	}
}

func TestSyntaxErrorQuotesLine(t *testing.T) {
	_, _, err := Parse("{\n  \"a\": [\n    \"b\" \"c\"\n  ]\n}")
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if se.Line != 3 || se.Column != 9 || !strings.Contains(se.Error(), "  3 |     \"b\" \"c\"\n    |         ^") || !strings.Contains(se.Hint, "comma is missing") {
		t.Errorf("error = %q (line %d col %d)", se.Error(), se.Line, se.Column)
	}
}

func TestParseRefusesDeepNesting(t *testing.T) {
	for _, s := range []string{strings.Repeat("[", 1<<20), strings.Repeat(`{"a":`, 1<<17), "a = " + strings.Repeat("[", 1<<18), `{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}`} {
		_, _, err := Parse(s)
		var se *SyntaxError
		if strings.HasPrefix(s, `{"a": "`) {
			if err != nil {
				t.Errorf("brackets inside a string counted: %v", err)
			}
			continue
		}
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "nested deeper") {
			t.Errorf("%d bytes: err = %v", len(s), err)
		}
	}
}

func TestParseRepairs(t *testing.T) {
	tests := []struct {
		name, text, note string
		keys             []string
	}{
		{"pairs in a list", "{\"context_servers\": [\n  \"git\": {\"command\": \"uvx\"}\n],}", "read as an object", []string{"context_servers"}},
		{"elision lines", "{\n  ...\n  \"a\": {\"command\": \"x\"},\n  …\n}", "left out", []string{"a"}},
		{"prose after an elision", "{ ...the rest of your settings\n  \"a\": {\"url\": \"https://h/\"}\n}", "left out", []string{"a"}},
		{"markdown fence", "```jsonc\n{\"a\": {\"command\": \"x\"}} // note\n```\n", "", []string{"a"}},
		{"fragment", "\"a\": {\"command\": \"x\"},\n\"b\": {\"command\": \"y\"},", "fragment", []string{"a", "b"}},
		{"non-breaking spaces", "{\u00a0\"a\": {\"command\": \"x\"}}", "non-breaking", []string{"a"}},
		{"toml order", "[mcp_servers.zeta]\ncommand = \"z\"\n[mcp_servers.alpha]\ncommand = \"a\"\n", "", []string{"mcp_servers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, notes, err := Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			o := doc.Value.(*Object)
			if strings.Join(o.Keys, ",") != strings.Join(tt.keys, ",") {
				t.Errorf("keys = %q, want %q", o.Keys, tt.keys)
			}
			if tt.note != "" && !slicesContainsText(notes, tt.note) {
				t.Errorf("notes = %+v, want one saying %q", notes, tt.note)
			}
		})
	}
	doc, _, _ := Parse("[mcp_servers.zeta]\ncommand = \"z\"\n[mcp_servers.alpha]\ncommand = \"a\"\n")
	if keys := doc.Value.(*Object).Values["mcp_servers"].(*Object).Keys; strings.Join(keys, ",") != "zeta,alpha" {
		t.Errorf("TOML tables out of source order: %q", keys)
	}
}

func slicesContainsText(notes []Note, s string) bool {
	for _, n := range notes {
		if strings.Contains(n.Text, s) {
			return true
		}
	}
	return false
}

// When the rules refuse every entry, the paste still held servers: the
// refusals come back as notes (as a refused "sse" entry does), not as
// ErrNoServers, which would hide why each was refused.
func TestNormalizeAllRefusedKeepsTheReasons(t *testing.T) {
	rules := func(*Document) (*Repaired, error) {
		return &Repaired{Notes: []Note{{Server: "x", Level: LevelRefused, Text: "command holds a whole command line"}}}, nil
	}
	entries, notes, err := Normalize(`{"mcpServers": {"x": {"command": "npx -y foo; touch a"}}}`, &Options{Rules: rules})
	if err != nil {
		t.Fatalf("err = %v, want the refusal as a note", err)
	}
	if len(entries) != 0 || !slicesContainsText(notes, "whole command line") {
		t.Fatalf("entries = %+v, notes = %+v", entries, notes)
	}
	// Rules that find nothing at all still say so.
	none := func(*Document) (*Repaired, error) { return &Repaired{}, nil }
	if _, _, err := Normalize(`{"a": 1}`, &Options{Rules: none}); !errors.Is(err, ErrNoServers) {
		t.Fatalf("err = %v, want ErrNoServers", err)
	}
}

// TestURLNameNeverTakesAStoredName: a bare URL named after its host gains
// -2, -3, … when a stored server with another address holds the name, and
// keeps it when the stored server is the same address.
func TestURLNameNeverTakesAStoredName(t *testing.T) {
	rules := func(doc *Document) (*Repaired, error) {
		u, _ := doc.Value.(*Object).Values["url"].(string)
		return &Repaired{Entries: []map[string]any{{"name": "notion", "url": u, "transport": "http"}}}, nil
	}
	stored := map[string]mcp.Entry{
		"notion":   {Name: "notion", Transport: mcp.TransportHTTP, URL: "https://mcp.notion.com/mcp"},
		"notion-2": {Name: "notion-2", Transport: mcp.TransportStdio, Command: "x"},
	}
	lookup := func(name string) (mcp.Entry, bool) { e, ok := stored[name]; return e, ok }
	tests := []struct{ url, want string }{
		{"https://mcp.notion.com/mcp", "notion"},
		{"https://mcp.notion.com/other", "notion-3"},
	}
	for _, tt := range tests {
		entries, notes, err := Normalize(tt.url, &Options{Rules: rules, Stored: lookup})
		if err != nil || len(entries) != 1 || entries[0].Name != tt.want {
			t.Fatalf("%s: entries = %+v, %v; want named %s", tt.url, entries, err, tt.want)
		}
		if tt.want != "notion" && !slices.ContainsFunc(notes, func(n Note) bool { return strings.Contains(n.Text, "another address") }) {
			t.Errorf("%s: no note says why it was renamed: %+v", tt.url, notes)
		}
	}
	entries, _, err := Normalize("https://mcp.notion.com/other", &Options{Rules: rules, Stored: lookup, Name: "mine"})
	if err != nil || entries[0].Name != "notion" {
		t.Fatalf("a name the person gave is not renamed here: %+v, %v", entries, err)
	}
}
