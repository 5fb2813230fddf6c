package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"tai/mcp"
	"tai/mcp/httppolicy"
	"tai/vault/secret"
)

// MaxDocument caps every body read from a protected resource or an
// authorization server (metadata, registration and token responses).
const MaxDocument = 1 << 20

// errNotFound marks a metadata URL that answered 404 (or another 4xx):
// discovery moves on to the next candidate.
var errNotFound = errors.New("not found")

// fetcher sends discovery, registration and token requests. Redirects are
// followed only within the origin of the request (httppolicy.SameOriginRedirects),
// and each request is bounded by timeout. Where each request really goes
// is checked as its connection is made (see dialChecked).
type fetcher struct {
	client  *http.Client
	timeout time.Duration
	// server is the MCP server's URL: only when it is on a loopback,
	// private or link-local address may the OAuth requests go to one.
	server string
	// private reports whether an address is loopback, private,
	// link-local or unspecified (privateAddr; tests place a loopback
	// listener outside that set).
	private func(ip net.IP, port string) bool
	// byName is set when the caller's transport makes its connections
	// where they cannot be seen: each request's host is then checked by
	// the addresses its name resolves to before it is sent.
	byName bool
	// proxies holds the addresses ("host:port") of the proxies the
	// transport sent requests through: a connection to one carries a
	// request whose own host was checked by name (the proxy resolves it).
	proxies sync.Map
}

func newFetcher(cfg *Config) *fetcher {
	f := &fetcher{timeout: cfg.RequestTimeout, server: cfg.URL, private: cfg.privateAddr}
	if f.timeout <= 0 {
		f.timeout = mcp.MCP_CONNECT_TIMEOUT
	}
	if f.private == nil {
		f.private = privateAddr
	}
	f.client = httppolicy.FollowSameOrigin(f.dialChecked(cfg.HTTPClient))
	return f
}

// errPrivateAddress is what a connection refused by the fetcher's dial
// check fails with; do names the request and the URL.
var errPrivateAddress = errors.New("the address is loopback or private")

// dialChecked returns a copy of c (nil: http.DefaultClient) whose
// transport checks the address of every connection it makes, as it makes
// it: a private one is refused unless the MCP server is on one too. The
// address checked is the one connected to, after the name was resolved,
// so a name that resolves elsewhere at the second lookup, or a redirect
// or later request to another host, is judged by where it goes, never by
// an earlier verdict.
func (f *fetcher) dialChecked(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok || t.DialTLSContext != nil {
		f.byName = true
		return c
	}
	t = t.Clone()
	dial := t.DialContext
	checked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error { return f.allowAddr(address) }}
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, viaProxy := f.proxies.Load(addr)
		switch {
		case viaProxy && dial != nil:
			return dial(ctx, network, addr)
		case viaProxy:
			return plain.DialContext(ctx, network, addr)
		case c.Transport == nil || dial == nil:
			return checked.DialContext(ctx, network, addr)
		}
		// The caller's own dial: the address it reached is checked
		// before anything is sent on the connection.
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := f.allowAddr(conn.RemoteAddr().String()); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
	if proxy := t.Proxy; proxy != nil {
		t.Proxy = func(req *http.Request) (*url.URL, error) {
			u, err := proxy(req)
			if u == nil || err != nil {
				return u, err
			}
			// The proxy resolves the request's host: it is checked by
			// name here, the last place tai sees it.
			if err := f.allowHost(req.Context(), req.URL); err != nil {
				return nil, err
			}
			port := u.Port()
			if port == "" {
				port = map[string]string{"https": "443", "socks5": "1080"}[u.Scheme]
				if port == "" {
					port = "80"
				}
			}
			f.proxies.Store(net.JoinHostPort(u.Hostname(), port), true)
			return u, nil
		}
	}
	cc := *c
	cc.Transport = t
	return &cc
}

// allowAddr refuses address (ip:port) when it is private and the MCP
// server is not.
func (f *fetcher) allowAddr(address string) error {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || !f.private(ip, port) || f.serverPrivate(context.Background()) {
		return nil
	}
	return errPrivateAddress
}

// allowHost refuses u when its host is private, or a name any of whose
// addresses is, and the MCP server is not.
func (f *fetcher) allowHost(ctx context.Context, u *url.URL) error {
	if !privateHost(ctx, u.Hostname(), u.Port(), f.private) || f.serverPrivate(ctx) {
		return nil
	}
	return errPrivateAddress
}

// serverPrivate reports whether the MCP server is on a private address.
// It is asked only when a destination is private, and each time: no
// verdict outlives the request it was made for.
func (f *fetcher) serverPrivate(ctx context.Context) bool {
	su, err := url.Parse(f.server)
	return err == nil && privateHost(ctx, su.Hostname(), su.Port(), f.private)
}

// checkPrivate refuses a URL on a loopback, private or link-local address
// (or a name resolving to one) unless the MCP server is on one too: a
// remote server's metadata must not aim tai's requests, or the person's
// browser, at their own machine or network. what names the URL's role.
// It is the check of a URL tai does not fetch itself (the browser's);
// what tai fetches is checked as it connects.
func (f *fetcher) checkPrivate(ctx context.Context, what string, u *url.URL) error {
	if err := f.allowHost(ctx, u); err != nil {
		return f.privateRefusal(what, u)
	}
	return nil
}

// privateRefusal is the error of a request refused for going to a private
// address.
func (f *fetcher) privateRefusal(what string, u *url.URL) error {
	return fmt.Errorf("the %s %s is on a loopback or private address, but the MCP server (%s) is not; tai sends nothing there, "+
		"since a remote server's metadata must not aim tai at your own machine or network", what, httppolicy.RedactURL(u.String()), httppolicy.RedactURL(f.server))
}

// privateAddr reports whether a host's address is loopback, private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16,
// fe80::/10) or unspecified.
func privateAddr(ip net.IP, _ string) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified()
}

// privateHost reports whether host is a private address (see private),
// localhost, or a name any of whose addresses is private. A name that does
// not resolve is not (the request then fails anyway).
func privateHost(ctx context.Context, host, port string, private func(net.IP, string) bool) bool {
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return private(ip, port)
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, h)
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if private(a.IP, port) {
			return true
		}
	}
	return false
}

// getJSON GETs raw and decodes its JSON body into into. A 4xx answer is
// errNotFound wrapped (the caller tries the next URL); anything else that
// is not 200 with a JSON object is an error naming what and the URL.
func (f *fetcher) getJSON(ctx context.Context, what, raw string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %v", what, httppolicy.RedactURL(raw), err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(mcpProtocolHeader, mcp.MCP_PROTOCOL_VERSION)
	body, status, _, err := f.do(req, what)
	if err != nil {
		return err
	}
	if status >= 400 && status < 500 {
		return fmt.Errorf("%s at %s: HTTP %d: %w", what, httppolicy.RedactURL(raw), status, errNotFound)
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s at %s answered HTTP %d", what, httppolicy.RedactURL(raw), status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("%s at %s is not a JSON object: %v", what, httppolicy.RedactURL(raw), err)
	}
	return nil
}

// mcpProtocolHeader is sent on metadata requests, as the specification
// asks of clients.
const mcpProtocolHeader = "MCP-Protocol-Version"

// do sends req and reads at most MaxDocument bytes of its answer.
func (f *fetcher) do(req *http.Request, what string) ([]byte, int, http.Header, error) {
	shown := httppolicy.RedactURL(req.URL.String())
	if f.byName {
		if err := f.checkPrivate(req.Context(), what, req.URL); err != nil {
			return nil, 0, nil, err
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), f.timeout)
	defer cancel()
	req = req.WithContext(ctx)
	resp, err := f.client.Do(req)
	if errors.Is(err, errPrivateAddress) {
		return nil, 0, nil, f.privateRefusal(what, req.URL)
	}
	if err != nil {
		err = mcp.URLErrorCause(err)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, 0, nil, fmt.Errorf("%s at %s: no answer within %s", what, shown, f.timeout)
		}
		return nil, 0, nil, fmt.Errorf("%s at %s: %w", what, shown, err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > MaxDocument {
		return nil, 0, nil, fmt.Errorf("%s at %s: the answer is %d bytes, over the %d-byte limit; refusing it", what, shown, resp.ContentLength, MaxDocument)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocument+1))
	if err != nil && ctx.Err() != nil {
		return nil, 0, nil, fmt.Errorf("%s at %s: the answer did not end within %s", what, shown, f.timeout)
	}
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%s at %s: reading the answer: %v", what, shown, err)
	}
	if len(body) > MaxDocument {
		return nil, 0, nil, fmt.Errorf("%s at %s: the answer is over the %d-byte limit; refusing it", what, shown, MaxDocument)
	}
	return body, resp.StatusCode, resp.Header, nil
}

// post sends a form or JSON body (contentType says which) to raw with the
// given extra headers, returning the answer's body and status.
func (f *fetcher) post(ctx context.Context, what, raw, contentType string, body []byte, header http.Header) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, raw, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %v", what, httppolicy.RedactURL(raw), err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	data, status, _, err := f.do(req, what)
	return data, status, err
}

// oauthError is an error answer of an authorization server (RFC 6749
// §5.2): the code, and its description with every secret scrubbed out.
type oauthError struct {
	// Code is the error code, such as invalid_grant.
	Code string `json:"error"`
	// Description is the server's error_description.
	Description string `json:"error_description"`
}

// ErrorCode is the OAuth error code of an authorization server's refusal
// (invalid_grant, invalid_client, ...). errors.As finds it in what Login,
// Refresh and register return.
type ErrorCode struct {
	// What names the request that was refused.
	What string
	// Status is the HTTP status of the refusal.
	Status int
	// Code is the OAuth error code ("" when the body carried none).
	Code string
	// Description is the server's description, secrets scrubbed out.
	Description string

	// registered says the refused client was a registration tai kept.
	registered bool
}

// Error formats the refusal.
func (e *ErrorCode) Error() string {
	var s string
	if e.Status == 0 {
		// an authorization response the browser brought back
		s = e.What + " refused the login"
		if e.Code != "" {
			s += " (" + e.Code + ")"
		}
	} else {
		s = fmt.Sprintf("%s refused (HTTP %d", e.What, e.Status)
		if e.Code != "" {
			s += ", " + e.Code
		}
		s += ")"
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// FromAuthorizationServer marks the error as the authorization server's
// answer (mcp.AuthError then shows it without the MCP server's status).
func (e *ErrorCode) FromAuthorizationServer() bool { return true }

// refusal builds the *ErrorCode of an error answer, scrubbing secrets out
// of whatever text the server echoed back.
func refusal(what string, status int, body []byte, secrets ...string) *ErrorCode {
	var oe oauthError
	_ = json.Unmarshal(body, &oe)
	e := &ErrorCode{What: what, Status: status, Code: short(oe.Code, 64), Description: short(oe.Description, 300)}
	e.Code = secret.Hide(e.Code, secrets...)
	e.Description = secret.Hide(e.Description, secrets...)
	return e
}

// short cuts s to at most n bytes of printable text.
func short(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // never a character cut in two
		}
		s = s[:n] + "..."
	}
	return s
}
