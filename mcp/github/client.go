package github

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tai/mcp"
	"tai/vault/secret"
)

// DefaultBase is the public GitHub API, used when TAI_GITHUB_API is unset.
const DefaultBase = "https://api.github.com"

// Caps on what the resolver reads.
const (
	// MaxFile is the largest file read (a README, a server.json).
	MaxFile = 1 << 20
	// MaxListing is the most entries a folder listing returns.
	MaxListing = 1000
	// RequestTimeout bounds one API request.
	RequestTimeout = 20 * time.Second
	// maxRedirects is the most same-host redirects followed (a renamed
	// repository answers 301).
	maxRedirects = 3
)

// ErrNotFound reports a repository, ref or file the API does not have
// (or does not show without a token).
var ErrNotFound = errors.New("not found")

// notFound is an error whose text is msg and which is ErrNotFound.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// ErrUnreadable reports a file the resolver does not read: larger than
// the cap, a folder, or content the API does not send inline. The
// resolution goes on without it.
var ErrUnreadable = errors.New("file not read")

// redirectRefused is a redirect the client did not follow, and why.
type redirectRefused string

func (e redirectRefused) Error() string { return string(e) }

// ErrRateLimit reports the API's rate limit.
var ErrRateLimit = errors.New("GitHub API rate limit reached")

// Options tunes New.
type Options struct {
	// Base is the API's base URL; empty means DefaultBase.
	Base string
	// Token is sent as a Bearer token when set; it never appears in an
	// error.
	Token string
	// HTTP is the client requests go through; nil means a fresh one.
	// Its redirect policy is replaced: only same-host redirects are
	// followed.
	HTTP *http.Client
	// MaxFile overrides the MaxFile cap (tests); zero means MaxFile.
	MaxFile int64
}

// Client reads a repository's files through the GitHub contents API. It is
// safe for concurrent use.
type Client struct {
	base    *url.URL
	token   string
	http    *http.Client
	maxFile int64
}

// File is one file read from a repository.
type File struct {
	// Path is the file's path in the repository.
	Path string
	// Text is its content.
	Text string
}

// DirEntry is one entry of a folder listing.
type DirEntry struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Type string `json:"type"` // "file", "dir", "symlink", "submodule"
	Size int64  `json:"size"`
}

// New returns a client for the API at o.Base.
func New(o Options) (*Client, error) {
	base := strings.TrimSpace(o.Base)
	if base == "" {
		base = DefaultBase
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		shown := "the value"
		if err == nil && u.User == nil {
			shown = mcp.Clip(base)
		}
		return nil, fmt.Errorf("TAI_GITHUB_API: %s is not an http(s) URL without credentials: give the API's base, such as %s", shown, DefaultBase)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	hc := &http.Client{Timeout: RequestTimeout}
	if o.HTTP != nil {
		c := *o.HTTP
		hc = &c
		if hc.Timeout == 0 || hc.Timeout > RequestTimeout {
			hc.Timeout = RequestTimeout
		}
	}
	host := u.Host
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != host || req.URL.Scheme != u.Scheme {
			return redirectRefused(fmt.Sprintf("the GitHub API at %s redirected to %s://%s, another host: not followed", host, req.URL.Scheme, req.URL.Host))
		}
		if len(via) >= maxRedirects {
			return redirectRefused(fmt.Sprintf("the GitHub API redirected more than %d times: not followed", maxRedirects))
		}
		return nil
	}
	max := o.MaxFile
	if max <= 0 {
		max = MaxFile
	}
	return &Client{base: u, token: o.Token, http: hc, maxFile: max}, nil
}

// DefaultBranch returns the repository's default branch; the error wraps
// ErrNotFound when the repository does not exist or is private.
func (c *Client) DefaultBranch(ctx context.Context, s Source) (string, error) {
	var repo struct {
		DefaultBranch string `json:"default_branch"`
	}
	body, err := c.get(ctx, s, "repos/"+s.Owner+"/"+s.Repo, nil)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return "", notFound(s.String() + ": no such repository, or it is private (give a token that can read it: the vault secret or environment variable GITHUB_TOKEN)")
		}
		return "", err
	}
	if err := json.Unmarshal(body, &repo); err != nil {
		return "", fmt.Errorf("%s: the GitHub API's repository answer is not JSON: %v", s.String(), err)
	}
	return repo.DefaultBranch, nil
}

// File reads name, a path relative to the source's folder. ok is false
// when the file does not exist; the error is for anything else (too
// large, not a file, the API failing).
func (c *Client) File(ctx context.Context, s Source, name string) (f File, ok bool, err error) {
	p, err := cleanPath(s.Join(name))
	if err != nil {
		return File{}, false, err
	}
	body, err := c.get(ctx, s, "repos/"+s.Owner+"/"+s.Repo+"/contents/"+escapePath(p), refQuery(s))
	if errors.Is(err, ErrNotFound) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	text, err := c.decodeFile(body, p)
	if err != nil {
		return File{}, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return File{Path: p, Text: text}, true, nil
}

// Readme reads the source folder's README, whatever GitHub takes as its
// name (README.md, readme.rst, …). ok is false when there is none.
func (c *Client) Readme(ctx context.Context, s Source) (f File, ok bool, err error) {
	p := "repos/" + s.Owner + "/" + s.Repo + "/readme"
	if s.Path != "" {
		p += "/" + escapePath(s.Path)
	}
	body, err := c.get(ctx, s, p, refQuery(s))
	if errors.Is(err, ErrNotFound) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	var meta struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(body, &meta)
	text, err := c.decodeFile(body, "README")
	if err != nil {
		return File{}, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if meta.Path == "" {
		meta.Path = s.Join("README.md")
	}
	return File{Path: meta.Path, Text: text}, true, nil
}

// List returns the entries of dir, a folder relative to the source's
// folder ("" for the folder itself), at most MaxListing of them.
func (c *Client) List(ctx context.Context, s Source, dir string) ([]DirEntry, error) {
	p := s.Path
	if dir != "" {
		var err error
		if p, err = cleanPath(s.Join(dir)); err != nil {
			return nil, err
		}
	}
	body, err := c.get(ctx, s, "repos/"+s.Owner+"/"+s.Repo+"/contents/"+escapePath(p), refQuery(s))
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%s: no folder %q", s.String(), p)
	}
	if err != nil {
		return nil, err
	}
	var list []DirEntry
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("%s: %q is not a folder", s.String(), p)
	}
	if len(list) > MaxListing {
		list = list[:MaxListing]
	}
	return list, nil
}

// decodeFile reads a contents-API file answer: JSON with base64 content.
func (c *Client) decodeFile(body []byte, p string) (string, error) {
	var f struct {
		Type     string `json:"type"`
		Encoding string `json:"encoding"`
		Content  string `json:"content"`
		Size     int64  `json:"size"`
	}
	if err := json.Unmarshal(body, &f); err != nil {
		if strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
			return "", fmt.Errorf("%s is a folder, not a file", p)
		}
		return "", fmt.Errorf("the GitHub API's answer for %s is not JSON: %v", p, err)
	}
	if f.Type != "" && f.Type != "file" {
		return "", fmt.Errorf("%s is a %s, not a file", p, f.Type)
	}
	if f.Size > c.maxFile {
		return "", fmt.Errorf("%s is %d bytes, more than the %d bytes the resolver reads", p, f.Size, c.maxFile)
	}
	if f.Encoding != "base64" {
		return "", fmt.Errorf("the GitHub API sent %s as %q, not base64: it may be too large to read through the contents API", p, f.Encoding)
	}
	data, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(f.Content))
	if err != nil {
		return "", fmt.Errorf("the GitHub API's content for %s is not base64: %v", p, err)
	}
	if int64(len(data)) > c.maxFile {
		return "", fmt.Errorf("%s is %d bytes, more than the %d bytes the resolver reads", p, len(data), c.maxFile)
	}
	return string(data), nil
}

// get asks the API for path (relative to the base) and returns the body
// of a 200 answer, at most what a file of the cap takes in base64 JSON.
func (c *Client) get(ctx context.Context, s Source, path string, q url.Values) ([]byte, error) {
	u := *c.base
	u.Path = c.base.Path + "/" + path
	u.RawPath = c.base.EscapedPath() + "/" + path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.String(), c.redact(err.Error()))
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "tai")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: reading the repository stopped: %v", s.String(), ctx.Err())
		}
		var refused redirectRefused
		if errors.As(err, &refused) {
			return nil, fmt.Errorf("%s: %s", s.String(), c.redact(string(refused)))
		}
		return nil, fmt.Errorf("%s: the GitHub API at %s did not answer (%s): check the network, or set TAI_GITHUB_API to your GitHub Enterprise API, or paste the config block its README shows instead", s.String(), c.base.Host, c.redact(mcp.URLErrorCause(err).Error()))
	}
	defer resp.Body.Close()
	limit := c.maxFile*4/3 + 64*1024
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the GitHub API's answer: %s", s.String(), c.redact(err.Error()))
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: the GitHub API's answer for %s is larger than %d bytes", ErrUnreadable, "/"+path, limit)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return body, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusForbidden && (resp.Header.Get("X-RateLimit-Remaining") == "0" || strings.Contains(strings.ToLower(string(body)), "rate limit"))):
		msg := "wait and try again"
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			msg = "it resets at " + time.Unix(reset, 0).UTC().Format("15:04 UTC")
		}
		hint := "; a token raises the limit: store it as the vault secret GITHUB_TOKEN or set the GITHUB_TOKEN environment variable"
		if c.token != "" {
			hint = ""
		}
		return nil, fmt.Errorf("%s: %w (%s)%s", s.String(), ErrRateLimit, msg, hint)
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("%s: the GitHub API refused the token (401): replace GITHUB_TOKEN with a valid one, or remove it to read public repositories", s.String())
	}
	return nil, fmt.Errorf("%s: the GitHub API answered %d for %s%s", s.String(), resp.StatusCode, "/"+path, c.apiMessage(body))
}

// apiMessage returns GitHub's own "message" of an error answer, cleaned
// and short, as ": message", or "".
func (c *Client) apiMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil || e.Message == "" {
		return ""
	}
	m := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, e.Message)
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	return ": " + c.redact(m)
}

// redact removes the token from s.
func (c *Client) redact(s string) string {
	return secret.Hide(s, c.token)
}

// cleanPath refuses a path that leaves the repository.
func cleanPath(p string) (string, error) {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == ".":
			continue
		case seg == ".." || strings.ContainsAny(seg, "\\\x00"):
			return "", fmt.Errorf("%s leaves the repository: give a path inside it", mcp.Clip(p))
		}
		out = append(out, seg)
	}
	return strings.Join(out, "/"), nil
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func refQuery(s Source) url.Values {
	if s.Ref == "" {
		return nil
	}
	return url.Values{"ref": {s.Ref}}
}
