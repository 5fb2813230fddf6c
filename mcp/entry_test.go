package mcp

import (
	"fmt"
	"strings"
	"testing"
)

func TestEntryValidate(t *testing.T) {
	tests := []struct {
		name    string
		entry   Entry
		wantErr string // empty: valid
	}{
		{name: "stdio", entry: Entry{Name: "fs", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "pkg"}}},
		{name: "http", entry: Entry{Name: "gh", Transport: TransportHTTP, URL: "https://api.example.com/mcp"}},
		{name: "stdio without command", entry: Entry{Name: "x", Transport: TransportStdio}, wantErr: "needs a command"},
		{name: "stdio with url", entry: Entry{Name: "x", Transport: TransportStdio, Command: "a", URL: "http://h/"}, wantErr: "both a command and a url"},
		{name: "http without url", entry: Entry{Name: "x", Transport: TransportHTTP}, wantErr: "needs a url"},
		{name: "http bad scheme", entry: Entry{Name: "x", Transport: TransportHTTP, URL: "ftp://h/mcp"}, wantErr: "not an http:// or https:// URL"},
		{name: "legacy sse", entry: Entry{Name: "x", Transport: "sse", URL: "http://h/sse"}, wantErr: `transport "sse" is not supported`},
		{name: "no transport", entry: Entry{Name: "x", Command: "a"}, wantErr: "no transport"},
		{name: "unknown transport", entry: Entry{Name: "x", Transport: "pigeon"}, wantErr: `unknown transport "pigeon"`},
		{name: "as many words as a screen shows", entry: Entry{Name: "x", Transport: TransportStdio, Command: "a", Args: make([]string, MaxEntryLines-1)}},
		{name: "more words than a screen shows", entry: Entry{Name: "x", Transport: TransportStdio, Command: "a", Args: make([]string, 20000)}, wantErr: "20001 words"},
		{name: "env names past the screen", entry: Entry{Name: "x", Transport: TransportStdio, Command: "a", Env: manyNames(MaxEntryLines)}, wantErr: "more than the 256 words"},
		{name: "header names past the screen", entry: Entry{Name: "x", Transport: TransportHTTP, URL: "https://h/mcp", Headers: manyNames(MaxEntryLines)}, wantErr: "more than the 256 words"},
		{name: "a 100 KB word", entry: Entry{Name: "x", Transport: TransportStdio, Command: "sh", Args: []string{"-c", strings.Repeat(" ", 100000) + "npx x"}}, wantErr: "(100009 bytes)"},
		{name: "a URL past the bytes a screen shows", entry: Entry{Name: "x", Transport: TransportHTTP, URL: "https://h/mcp?" + strings.Repeat("a", MaxEntryBytes)}, wantErr: "KiB) a consent screen shows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.entry.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// manyNames returns a map of n distinct names.
func manyNames(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("N%d", i)] = "v"
	}
	return m
}

// A URL may carry a key in its query or user part; messages about an entry
// must not repeat it.
func TestEntryMessagesHideURLCredentials(t *testing.T) {
	const secret = "sk-live-0123456789"
	for _, raw := range []string{
		"ftp://api.example.com/mcp?api_key=" + secret,
		"ftp://user:" + secret + "@api.example.com/mcp",
	} {
		e := Entry{Transport: TransportHTTP, URL: raw}
		err := e.Validate()
		if err == nil {
			t.Fatalf("%s: Validate succeeded", raw)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(e.Label(), secret) {
			t.Fatalf("credential leaked: label %q, error %v", e.Label(), err)
		}
		if !strings.Contains(err.Error(), "api.example.com") {
			t.Fatalf("error should still name the host: %v", err)
		}
	}
}

func TestEntryOffers(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		tool        string
		want        string // "" when offered, else a fragment of the refusal
	}{
		{name: "no lists", tool: "echo"},
		{name: "allowed", allow: []string{"echo"}, tool: "echo"},
		{name: "not on allow", allow: []string{"add"}, tool: "echo", want: "not on the entry's allow list (add)"},
		{name: "denied", deny: []string{"echo"}, tool: "echo", want: "deny list"},
		{name: "deny wins over allow", allow: []string{"echo"}, deny: []string{"echo"}, tool: "echo", want: "deny list"},
		{name: "other denied", deny: []string{"add"}, tool: "echo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Entry{Name: "srv", Allow: tt.allow, Deny: tt.deny}
			err := e.Offers(tt.tool)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Offers(%q) = %v, want offered", tt.tool, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Offers(%q) = %v, want an error with %q", tt.tool, err, tt.want)
			}
		})
	}
}
