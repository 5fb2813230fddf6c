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
// and each request is bounded by timeout.
type fetcher struct {
	client  *http.Client
	timeout time.Duration
	// server is the MCP server's URL: only when it is on a loopback,
	// private or link-local address may the OAuth requests go to one.
	server string

	once          sync.Once
	serverPrivate bool
}

func newFetcher(c *http.Client, timeout time.Duration, server string) *fetcher {
	if timeout <= 0 {
		timeout = mcp.MCP_CONNECT_TIMEOUT
	}
	return &fetcher{client: httppolicy.FollowSameOrigin(c), timeout: timeout, server: server}
}

// checkPrivate refuses a URL on a loopback, private or link-local address
// (or a name resolving to one) unless the MCP server is on one too: a
// remote server's metadata must not aim tai's requests, or the person's
// browser, at their own machine or network. what names the URL's role.
func (f *fetcher) checkPrivate(ctx context.Context, what string, u *url.URL) error {
	f.once.Do(func() {
		if su, err := url.Parse(f.server); err == nil {
			f.serverPrivate = privateHost(ctx, su.Hostname(), su.Port())
		}
	})
	if f.serverPrivate || !privateHost(ctx, u.Hostname(), u.Port()) {
		return nil
	}
	return fmt.Errorf("the %s %s is on a loopback or private address, but the MCP server (%s) is not; tai sends nothing there, "+
		"since a remote server's metadata must not aim tai at your own machine or network", what, httppolicy.RedactURL(u.String()), httppolicy.RedactURL(f.server))
}

// privateAddr reports whether a host's address is loopback, private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16,
// fe80::/10) or unspecified. A variable, so tests can place a server's
// loopback listener outside that set.
var privateAddr = func(ip net.IP, port string) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified()
}

// privateHost reports whether host is a private address (see
// privateAddr), localhost, or a name any of whose addresses is private.
// A name that does not resolve is not (the request then fails anyway).
func privateHost(ctx context.Context, host, port string) bool {
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return privateAddr(ip, port)
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
		if privateAddr(a.IP, port) {
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
	if err := f.checkPrivate(req.Context(), what, req.URL); err != nil {
		return nil, 0, nil, err
	}
	ctx, cancel := context.WithTimeout(req.Context(), f.timeout)
	defer cancel()
	req = req.WithContext(ctx)
	resp, err := f.client.Do(req)
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
