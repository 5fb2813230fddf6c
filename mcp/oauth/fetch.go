package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"tai/mcp"
	"tai/mcp/httppolicy"
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
}

func newFetcher(c *http.Client, timeout time.Duration) *fetcher {
	if timeout <= 0 {
		timeout = mcp.MCP_CONNECT_TIMEOUT
	}
	return &fetcher{client: httppolicy.FollowSameOrigin(c), timeout: timeout}
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
}

// Error formats the refusal.
func (e *ErrorCode) Error() string {
	s := fmt.Sprintf("%s refused (HTTP %d", e.What, e.Status)
	if e.Code != "" {
		s += ", " + e.Code
	}
	s += ")"
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// refusal builds the *ErrorCode of an error answer, scrubbing secrets out
// of whatever text the server echoed back.
func refusal(what string, status int, body []byte, secrets ...string) *ErrorCode {
	var oe oauthError
	_ = json.Unmarshal(body, &oe)
	e := &ErrorCode{What: what, Status: status, Code: short(oe.Code, 64), Description: short(oe.Description, 300)}
	e.Code = mcp.Scrub(e.Code, secrets...)
	e.Description = mcp.Scrub(e.Description, secrets...)
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
