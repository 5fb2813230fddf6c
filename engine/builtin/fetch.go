package builtin

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"tai/engine/tool"
	"tai/vault"
)

// http_fetch limits.
const (
	// FetchDefaultMax is the default body cap of http_fetch; FetchMaxMax
	// the largest a call may ask for.
	FetchDefaultMax = 1 << 20
	FetchMaxMax     = 10 << 20
	// FetchTimeout bounds one fetch.
	FetchTimeout = 30 * time.Second
)

// Fetch is what the http_fetch tool needs: the client it sends requests
// with and the vault whose secrets are redacted from the bodies it reads.
type Fetch struct {
	// Client sends the requests.
	Client *http.Client
	// Store holds the secrets redacted from the bodies.
	Store *vault.Store
}

// Tool returns the http_fetch tool.
func (f Fetch) Tool() tool.Tool {
	return tool.Tool{
		Name: "http_fetch",
		Description: "Fetch a web page or other text resource with HTTP GET and return its status, content type and " +
			"body text. Bodies over max_bytes (default 1 MB) are cut at that size, and the answer says so.",
		Parameters: tool.Schema([]string{"url"}, map[string]any{
			"url":       tool.Prop("string", "http:// or https:// URL"),
			"max_bytes": tool.Prop("integer", "largest body to read (default 1048576)"),
		}),
		Run: f.httpFetch,
	}
}

func (f Fetch) httpFetch(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	raw := a.Str("url", true)
	limit := a.Int("max_bytes", FetchDefaultMax)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if limit <= 0 || limit > FetchMaxMax {
		return tool.ErrorResult("max_bytes %d is out of range: give 1 to %d", limit, FetchMaxMax), nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return tool.ErrorResult("http_fetch: %q is not an http:// or https:// URL", raw), nil
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.ErrorResult("http_fetch: %v", err), nil
	}
	req.Header.Set("User-Agent", "tai")
	req.Header.Set("Accept", "text/html, text/plain, application/json, text/*;q=0.9, */*;q=0.1")
	resp, err := f.Client.Do(req)
	if err != nil {
		return tool.ErrorResult("http_fetch: %v", err), nil
	}
	defer resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	if !isTextType(ctype) {
		return tool.ErrorResult("http_fetch: %s answered %s with content type %q, which is not text: nothing was read", u.Redacted(), resp.Status, ctype), nil
	}
	// As much as the longest secret is read past the limit, and the body is
	// redacted before it is cut, so the cut cannot leave half a secret.
	red, err := f.Store.Redactor()
	if err != nil {
		return tool.Result{}, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+vault.MaxSecretSize+1))
	if err != nil {
		return tool.ErrorResult("http_fetch: reading the body of %s: %v", u.Redacted(), err), nil
	}
	body := red.Redact(string(data))
	cut := len(body) > limit || len(data) > limit+vault.MaxSecretSize
	if cut {
		body = body[:red.Cut(body, min(limit, len(body)))]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nContent-Type: %s\n\n%s", resp.Status, ctype, body)
	if cut {
		fmt.Fprintf(&b, "\n[the body is longer than max_bytes=%d and was cut there; ask again with a larger max_bytes (up to %d) to read more]", limit, FetchMaxMax)
	}
	return tool.Result{Content: []tool.Content{{Type: "text", Text: b.String()}}, IsError: resp.StatusCode >= 400}, nil
}

// isTextType reports whether a Content-Type names text a model can read;
// a missing type is taken as text.
func isTextType(ctype string) bool {
	if ctype == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/x-yaml", mt == "application/yaml",
		mt == "application/toml", mt == "application/x-ndjson":
		return true
	}
	return false
}
