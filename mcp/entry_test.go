package mcp

import (
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
