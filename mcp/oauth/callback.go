package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// CallbackPath is the path of the loopback redirect URI.
const CallbackPath = "/callback"

// errWrongState marks a redirect whose state is not this login's: it is
// ignored and the login keeps waiting.
var errWrongState = errors.New("the state does not match this login")

// callback is the loopback listener (127.0.0.1) that takes the one
// authorization redirect matching this login's state.
type callback struct {
	ln          net.Listener
	srv         *http.Server
	state       string
	redirectURI string

	mu     sync.Mutex
	done   bool
	result chan redirectResult // buffered: the one matching redirect
}

// redirectResult is the outcome a matching redirect carried.
type redirectResult struct {
	code string
	err  error
}

// listenCallback listens on 127.0.0.1:port (port 0: an ephemeral one).
func listenCallback(port int, state string) (*callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("the login's loopback listener cannot take 127.0.0.1:%d: %v", port, err)
	}
	c := &callback{ln: ln, state: state, result: make(chan redirectResult, 1),
		redirectURI: fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, CallbackPath)}
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on close
	return c, nil
}

// ServeHTTP answers the browser: the matching redirect gets a page saying
// the tab may close; a wrong state, a second redirect or another path get
// an error page and change nothing.
func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path != CallbackPath {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, page("This login is already finished", "tai took an earlier redirect for this login. You can close this tab."))
		return
	}
	code, err := parseRedirect(r.URL.Query(), c.state)
	if errors.Is(err, errWrongState) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, page("Not this login", "The redirect's state does not match the login tai is waiting for; tai ignored it."))
		return
	}
	c.done = true
	c.result <- redirectResult{code: code, err: err}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, page("Login failed", "The authorization server refused the login; tai shows why. You can close this tab."))
		return
	}
	fmt.Fprint(w, page("Logged in", "tai has the authorization. You can close this tab."))
}

// take accepts a redirect URL pasted by the person: the same checks as a
// browser's redirect. It reports whether it was this login's.
func (c *callback) take(raw string) (bool, error) {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return false, fmt.Errorf("that is not the redirect URL (it should look like %s?code=...&state=...)", c.redirectURI)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false, errors.New("this login already has its redirect")
	}
	code, err := parseRedirect(u.Query(), c.state)
	if errors.Is(err, errWrongState) {
		return false, fmt.Errorf("that URL is not from this login (%w); paste the address the browser shows after this login", err)
	}
	c.done = true
	c.result <- redirectResult{code: code, err: err}
	return true, nil
}

// close stops the listener.
func (c *callback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
}

// parseRedirect reads an authorization response (RFC 6749 §4.1.2): the
// code, or the server's error, once the state matches.
func parseRedirect(q url.Values, state string) (string, error) {
	if q.Get("state") != state {
		return "", errWrongState
	}
	if e := q.Get("error"); e != "" {
		return "", &ErrorCode{What: "the authorization server", Code: short(e, 64), Description: short(q.Get("error_description"), 300)}
	}
	code := q.Get("code")
	if code == "" {
		return "", errors.New("the authorization redirect carries no code")
	}
	return code, nil
}

// page is the small HTML page shown in the browser tab.
func page(title, text string) string {
	return "<!doctype html><meta charset=utf-8><title>tai: " + title + "</title>" +
		"<body style=\"font-family:sans-serif;margin:3em\"><h1>" + title + "</h1><p>" + text + "</p></body>"
}
