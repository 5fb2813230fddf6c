package oauth

import (
	"fmt"
	"net/url"
	"strings"

	"tai/mcp"
	"tai/mcp/httppolicy"
)

// checkURL parses raw and refuses anything tai will not talk OAuth to:
// not http(s), no host, a fragment, or plain http to a host that is not a
// loopback address. what names the URL's role in the error.
func checkURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("the %s %q is not an http(s) URL with a host", what, httppolicy.RedactURL(raw))
	}
	if u.Scheme == "http" && !mcp.IsLoopback(u.Hostname()) {
		return nil, fmt.Errorf("the %s %s uses plain http to %s, which is not a loopback address; "+
			"tai sends credentials over https only (plain http is allowed to 127.0.0.1, ::1 and localhost)",
			what, httppolicy.RedactURL(raw), u.Hostname())
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("the %s %s has a fragment (#...), which OAuth does not allow", what, httppolicy.RedactURL(raw))
	}
	return u, nil
}

// CanonicalResource returns the canonical form of an MCP server's URL as
// the RFC 8707 resource indicator: lower-case scheme and host, no
// fragment, no default port, and no trailing slash on the path.
func CanonicalResource(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", httppolicy.RedactURL(raw))
	}
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	if p := c.Port(); (c.Scheme == "https" && p == "443") || (c.Scheme == "http" && p == "80") {
		c.Host = c.Hostname()
		if strings.Contains(c.Host, ":") {
			c.Host = "[" + c.Host + "]"
		}
	}
	c.Fragment, c.RawFragment, c.User = "", "", nil
	c.Path = strings.TrimSuffix(c.Path, "/")
	c.RawPath = strings.TrimSuffix(c.RawPath, "/")
	return c.String(), nil
}

// resourceCovers reports whether the protected resource identifier
// resource (from a PRM document) names the server at serverURL: the same
// origin, and a path that is the server's path or a whole-segment prefix
// of it (RFC 9728 §3.3; a root document may name the origin).
func resourceCovers(resource, serverURL string) bool {
	r, err1 := CanonicalResource(resource)
	s, err2 := CanonicalResource(serverURL)
	if err1 != nil || err2 != nil {
		return false
	}
	ru, _ := url.Parse(r)
	su, _ := url.Parse(s)
	if !httppolicy.SameOrigin(ru, su) || ru.RawQuery != "" && ru.RawQuery != su.RawQuery {
		return false
	}
	if ru.Path == su.Path || ru.Path == "" {
		return true
	}
	return strings.HasPrefix(su.Path, ru.Path+"/")
}

// wellKnown inserts the well-known suffix between u's origin and its path:
// https://h/p + oauth-protected-resource = https://h/.well-known/oauth-protected-resource/p.
func wellKnown(u *url.URL, suffix string) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	c.Path = "/.well-known/" + suffix + p
	return c.String()
}

// asMetadataURLs lists where an issuer's metadata is looked for, in the
// order of the 2025-11-25 specification: for an issuer with a path the
// RFC 8414 path-inserted URL, then the two OpenID Connect forms; without
// one, the RFC 8414 URL then the OpenID Connect one.
func asMetadataURLs(issuer *url.URL) []string {
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	origin := url.URL{Scheme: issuer.Scheme, Host: issuer.Host}
	if p == "" {
		return []string{
			origin.String() + "/.well-known/oauth-authorization-server",
			origin.String() + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin.String() + "/.well-known/oauth-authorization-server" + p,
		origin.String() + "/.well-known/openid-configuration" + p,
		origin.String() + p + "/.well-known/openid-configuration",
	}
}
