package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"tai/mcp"
)

// MinKeyLength is the shortest key New accepts.
const MinKeyLength = 16

// KeyHint is the one-line way to make a good key, for error messages.
const KeyHint = "generate one with: openssl rand -hex 32"

// ErrWeakKey reports a key New refuses.
var ErrWeakKey = errors.New("the MCP server key is too weak")

// CheckKey reports whether key can be the server's Bearer key: at least
// MinKeyLength characters, all visible ASCII (it travels in an HTTP
// header). The error says what is wrong and how to make a good one; it
// never quotes the key.
func CheckKey(key string) error {
	if len(key) < MinKeyLength {
		return fmt.Errorf("%w: it has %d characters, at least %d are needed; %s", ErrWeakKey, len(key), MinKeyLength, KeyHint)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("%w: it holds a space, control or non-ASCII character (at byte %d), which cannot travel in an Authorization header; %s", ErrWeakKey, i, KeyHint)
		}
	}
	return nil
}

// MaskKey shows a key as its first four characters and a count, for
// start-up messages: enough for a person to tell keys apart, never enough
// to use one.
func MaskKey(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("•", len(key))
	}
	return key[:4] + "…" + fmt.Sprintf("(%d characters)", len(key))
}

// keyCheck compares Bearer tokens with the key in constant time: both are
// hashed first, so neither the content nor the length of the key leaks
// through timing.
type keyCheck struct{ sum [sha256.Size]byte }

func newKeyCheck(key string) keyCheck { return keyCheck{sum: sha256.Sum256([]byte(key))} }

// ok reports whether the request's Authorization header is "Bearer KEY"
// (the scheme in any case, one space).
func (k keyCheck) ok(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		// Still hash something, so a missing header takes as long.
		got := sha256.Sum256([]byte(h))
		subtle.ConstantTimeCompare(got[:], k.sum[:])
		return false
	}
	got := sha256.Sum256([]byte(h[len(scheme):]))
	return subtle.ConstantTimeCompare(got[:], k.sum[:]) == 1
}

// loopbackName reports whether host (no port), as a browser names it,
// is this machine's loopback interface: what mcp.IsLoopback takes, and
// names under .localhost, which browsers resolve to loopback themselves.
func loopbackName(host string) bool {
	return mcp.IsLoopback(host) || strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost")
}

// originAllowed reports whether the Origin header (when present) is one a
// browser page on this machine would send: a loopback host on any port,
// or one of allowed. A page elsewhere (DNS rebinding, a hostile site) is
// refused, whatever port it names.
func originAllowed(origin string, allowed []string) bool {
	if origin == "" {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(origin, a) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackName(u.Hostname())
}

// hostAllowed reports whether the Host header names this server as a
// client that dialled it directly would: a loopback name, an IP literal
// (what a client on another machine dials when the server binds a
// non-loopback address), or one of allowed. Any other name may be a DNS
// rebinding of a hostile site's name to this address, and is refused.
func hostAllowed(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return false
	}
	for _, a := range allowed {
		if strings.EqualFold(host, a) {
			return true
		}
	}
	return loopbackName(host) || net.ParseIP(host) != nil
}
