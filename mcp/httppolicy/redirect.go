package httppolicy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrCrossOriginRedirect reports a redirect to another origin (scheme, host
// or port), which tai never follows: the request would carry its headers,
// keys and body to a host nobody configured.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// maxRedirects bounds a chain of same-origin redirects.
const maxRedirects = 10

// SameOriginRedirects is an http.Client CheckRedirect policy: a redirect
// within the origin of the first request is followed (up to 10); one to
// another origin fails with an error wrapping ErrCrossOriginRedirect that
// names both URLs (userinfo and query hidden), so no configured header, API
// key or request body is ever sent to another host. A relative Location
// is resolved first, so one pointing at another port is refused too.
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	from := via[len(via)-1].URL
	if !SameOrigin(via[0].URL, req.URL) {
		return fmt.Errorf("%w: %s redirected to %s; tai sends headers, keys and request bodies only to the origin "+
			"it was given: if the new address is right, configure it instead", ErrCrossOriginRedirect,
			RedactURL(from.String()), RedactURL(req.URL.String()))
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects (the last to %s)", maxRedirects, RedactURL(req.URL.String()))
	}
	return nil
}

// FollowSameOrigin returns a copy of c (http.DefaultClient when nil) whose
// redirects follow SameOriginRedirects, whatever c's own policy was.
func FollowSameOrigin(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cp := *c
	cp.CheckRedirect = SameOriginRedirects
	return &cp
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (a missing port is the scheme's default).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
