package mcp

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	loopback := []string{"localhost", "LocalHost", "localhost.", "127.0.0.1", "127.8.9.10", "::1", "[::1]"}
	other := []string{"app.localhost", "localhost.example.com", "example.com", "10.0.0.1", "0.0.0.0", "::", "[::ffff:8.8.8.8]", ""}
	for _, host := range loopback {
		if !IsLoopback(host) {
			t.Errorf("%q is not taken for loopback", host)
		}
	}
	for _, host := range other {
		if IsLoopback(host) {
			t.Errorf("%q is taken for loopback", host)
		}
	}
}

// URLErrorCause drops what a *url.Error adds: the method and the whole
// URL, query string included.
func TestURLErrorCause(t *testing.T) {
	_, err := http.Get("http://127.0.0.1:1/mcp?key=secret-value")
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Fatalf("no *url.Error: %v", err)
	}
	if cause := URLErrorCause(err); cause == nil || strings.Contains(cause.Error(), "secret-value") || !strings.Contains(cause.Error(), "refused") {
		t.Fatalf("cause %v", cause)
	}
	plain := errors.New("plain")
	if URLErrorCause(plain) != plain {
		t.Fatal("an error without a *url.Error changed")
	}
}
