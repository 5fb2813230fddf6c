package mcp

import (
	"strings"
	"testing"
)

func TestHostNote(t *testing.T) {
	for _, c := range []struct {
		url, want, not string
	}{
		{url: "https://mcp.notion.com/mcp"},
		{url: "http://127.0.0.1:8080/mcp"},
		{url: "https://b\u00fccher.de/mcp", want: "host b\u00fccher.de is xn--bcher-kva.de in ASCII", not: "⚠"},
		{url: "https://mcp.n\u043etion.com/mcp", want: "⚠ host mcp.n\u043etion.com is mcp.xn--ntion-", not: "Greek"},
		{url: "https://p\u0430yp\u03b1l.com/", want: "mixes Latin and Cyrillic and Greek letters"},
	} {
		got := HostNote(c.url)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("HostNote(%q) = %q; want %q", c.url, got, c.want)
		}
	}
	if got := HostNote("https://mcp.n\u043etion.com/mcp"); !strings.Contains(got, "mixes Latin and Cyrillic letters") {
		t.Errorf("no warning for a label mixing scripts: %q", got)
	}
}
