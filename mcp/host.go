package mcp

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"tai/mcp/screen"
)

// scriptsShown are the scripts a host's letters are told apart by when
// looking for a label that mixes them (Latin with Cyrillic, say).
var scriptsShown = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
	{"Armenian", unicode.Armenian}, {"Cherokee", unicode.Cherokee}, {"Georgian", unicode.Georgian},
	{"Hebrew", unicode.Hebrew}, {"Arabic", unicode.Arabic}, {"Devanagari", unicode.Devanagari},
	{"Thai", unicode.Thai}, {"Han", unicode.Han}, {"Hiragana", unicode.Hiragana},
	{"Katakana", unicode.Katakana}, {"Hangul", unicode.Hangul},
}

// HostScripts returns the scripts the letters of one label of host mix
// (two or more), for the label that mixes most; nil when none does.
func HostScripts(host string) []string {
	var worst []string
	for _, label := range strings.Split(host, ".") {
		var seen []string
		for _, r := range label {
			if !unicode.IsLetter(r) {
				continue
			}
			name := "another script"
			for _, s := range scriptsShown {
				if unicode.Is(s.table, r) {
					name = s.name
					break
				}
			}
			if !slices.Contains(seen, name) {
				seen = append(seen, name)
			}
		}
		if len(seen) > 1 && len(seen) > len(worst) {
			worst = seen
		}
	}
	return worst
}

// ASCIIHost returns host's ASCII (punycode) form, and whether host is
// not plain ASCII; a host that has no ASCII form comes back as it is.
func ASCIIHost(host string) (string, bool) {
	if isASCII(host) {
		return host, false
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		if a, err = idna.Punycode.ToASCII(host); err != nil {
			return host, true
		}
	}
	return a, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// HostNote is what a person is told beside a URL they decide on whose
// host is not plain ASCII: its punycode form, which shows a lookalike
// (mcp.nоtion.com with a Cyrillic о is xn--mcp-ntion-…), and a warning
// when one label mixes scripts. "" for a plain ASCII host.
func HostNote(rawURL string) string {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Hostname()
	}
	a, unusual := ASCIIHost(host)
	if !unusual {
		return ""
	}
	note := "host " + screen.VisibleLine(host) + " is " + a + " in ASCII"
	if mix := HostScripts(host); len(mix) > 0 {
		note = "⚠ " + note + "; it mixes " + strings.Join(mix, " and ") + " letters, as a lookalike of another site's name does: compare it letter by letter"
	}
	return note
}
