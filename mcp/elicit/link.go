package elicit

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"

	"tai/mcp/screen"
)

// MaxURLBytes bounds the URL of a URL-mode request.
const MaxURLBytes = 8 << 10

// Link is the URL a URL-mode request points at, as a person must see it
// before agreeing to open it.
type Link struct {
	// URL is the URL to open, with its host in punycode (ASCII): what the
	// browser is given and the person is shown.
	URL string
	// Host is the host alone, in punycode, for the person to check.
	Host string
	// Unicode is the host as its Unicode form reads, when it differs
	// from Host (an internationalized name); empty otherwise.
	Unicode string
	// Warnings say what about the URL should make a person look twice:
	// plain http to a host not on loopback, a host in punycode, user
	// information before the host.
	Warnings []string
}

// ParseLink reads a URL-mode request's URL. Only http and https URLs with
// a host are opened; anything else (javascript:, file:, data:, a URL
// with control characters or over MaxURLBytes) is an error naming it.
func ParseLink(raw string) (Link, error) {
	if len(raw) > MaxURLBytes {
		return Link{}, fmt.Errorf("the URL is %d bytes, more than %d", len(raw), MaxURLBytes)
	}
	if screen.VisibleLine(raw) != raw || strings.ContainsAny(raw, " \t") {
		return Link{}, fmt.Errorf("the URL %s holds spaces or control characters", screen.VisibleLine(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Link{}, fmt.Errorf("the URL does not parse: %v", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return Link{}, fmt.Errorf("tai opens only http and https URLs, not %s", screen.VisibleLine(raw))
	}
	host := u.Hostname()
	if host == "" {
		return Link{}, fmt.Errorf("the URL %s names no host", screen.VisibleLine(raw))
	}
	var l Link
	ascii := host
	if net.ParseIP(host) == nil {
		ascii, err = idna.Lookup.ToASCII(host)
		if err != nil {
			return Link{}, fmt.Errorf("the URL's host %s is not a valid name: %v", screen.VisibleLine(host), err)
		}
		if uni, err := idna.Display.ToUnicode(ascii); err == nil && uni != ascii {
			l.Unicode = uni
		}
		if strings.Contains(ascii, "xn--") {
			l.Warnings = append(l.Warnings, "its host is an internationalized name, shown in punycode: check it is the site you expect")
		}
	}
	if u.User != nil {
		l.Warnings = append(l.Warnings, "it carries a user name before the host; the host is "+ascii)
	}
	if port := u.Port(); port != "" {
		u.Host = net.JoinHostPort(ascii, port)
	} else if strings.Contains(ascii, ":") {
		u.Host = "[" + ascii + "]"
	} else {
		u.Host = ascii
	}
	if u.Scheme == "http" && !loopback(ascii) {
		l.Warnings = append(l.Warnings, "it is plain http, not https")
	}
	l.URL, l.Host = u.String(), ascii
	return l, nil
}

// loopback reports whether host is this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
