package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hostile is what a server writes to take over a terminal: a window
// title, a screen clear, a clipboard write (OSC 52), a bidi override.
const hostile = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;aGVsbG8=\x07\u202eevil\r"

// TestServerTextInErrorsIsVisible: a stdio server that writes escape
// sequences to stderr and exits during the handshake, and an HTTP server
// that answers with them, give errors (and a Stderr) holding no byte a
// terminal would act on.
func TestServerTextInErrorsIsVisible(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "failed "+hostile, http.StatusInternalServerError)
	}))
	defer web.Close()
	printf := strings.NewReplacer("\x1b", `\033`, "\x07", `\007`, "\r", `\r`, "\u202e", `\342\200\256`).Replace(hostile)
	for _, tc := range []struct {
		name  string
		entry Entry
		opts  *ClientOptions
	}{
		{"stdio stderr", Entry{Name: "esc", Transport: TransportStdio, Command: "sh",
			Args: []string{"-c", "printf '" + printf + "\\nlast words\\n' >&2; exit 3"}}, nil},
		{"stdio stderr, redacting", Entry{Name: "esc", Transport: TransportStdio, Command: "sh",
			Args: []string{"-c", "printf '" + printf + "\\nlast words\\n' >&2; exit 3"}},
			&ClientOptions{Redact: func(s string) string { return s }}},
		{"http body", Entry{Name: "esc", Transport: TransportHTTP, URL: web.URL + "/mcp"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := Connect(ctx, tc.entry, tc.opts)
			if err == nil {
				t.Fatal("connect succeeded")
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\x1b\x07\r\u202e") {
				t.Errorf("error carries raw control sequences: %q", msg)
			}
			if !strings.Contains(msg, `\x1b]52;c;`) {
				t.Errorf("error does not show what the server sent: %q", msg)
			}
		})
	}
}
