package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Authorizer gives an HTTPTransport the Authorization header of its
// requests and answers the server's 401 and 403 challenges (OAuth: see
// package mcp/oauth). The transport consults it only when the entry sets
// no Authorization header of its own.
type Authorizer interface {
	// Authorization returns the header value for the next request ("" to
	// send none), refreshing an expiring token first.
	Authorization(ctx context.Context) (string, error)
	// Challenge is told of a 401 or 403 answer (its WWW-Authenticate, and
	// the Authorization the request carried) and reports whether to send
	// the request again; an error says why not and replaces the HTTP one.
	Challenge(ctx context.Context, status int, wwwAuthenticate, sent string) (bool, error)
}

// maxAuthRetries bounds how often one request is resent after challenges
// (one 401, then step-ups, which the Authorizer bounds itself).
const maxAuthRetries = 5

// AuthError is a request the server refused (401 or 403) that the
// Authorizer could not make acceptable: its error says why and what to
// do; the HTTP failure stays reachable with errors.As.
type AuthError struct {
	// HTTP is the server's refusal.
	HTTP *MCPHTTPError
	// Err is the Authorizer's reason.
	Err error
}

// Error names the Authorizer's reason and the HTTP status, unless the
// reason is an authorization server's answer (the MCP server's status
// would then mislead).
func (e *AuthError) Error() string {
	var as interface{ FromAuthorizationServer() bool }
	if errors.As(e.Err, &as) && as.FromAuthorizationServer() {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (the server answered HTTP %d %s)", e.Err, e.HTTP.Status, http.StatusText(e.HTTP.Status))
}

// Unwrap returns both errors.
func (e *AuthError) Unwrap() []error { return []error{e.Err, e.HTTP} }
