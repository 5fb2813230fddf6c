package httppolicy

import (
	"net/url"
	"strings"
)

// RedactURL returns raw fit to show: without userinfo (user:password@),
// query string or fragment, which may hold credentials. Anything that does
// not parse as a URL is cut at its first '?' or '@'.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?@"); i >= 0 {
			return raw[:i] + "…"
		}
		return raw
	}
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = "", false
		u.Fragment = ""
		return u.String() + "?…"
	}
	u.Fragment = ""
	return u.String()
}
