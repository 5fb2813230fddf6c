package github

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"tai/mcp"
)

// Source is a GitHub repository, and optionally one folder of it at one
// ref, named by a URL a person pasted.
type Source struct {
	// Owner and Repo name the repository.
	Owner, Repo string
	// Ref is the branch, tag or commit of a /tree/<ref>/… URL; empty means
	// the default branch.
	Ref string
	// Path is the folder of a /tree/<ref>/<path> URL, slash-separated,
	// cleaned, without leading or trailing slash; empty means the root.
	Path string
}

var (
	// sourcePrefix finds a GitHub URL: github.com/ with or without a
	// scheme and www.
	sourcePrefix = regexp.MustCompile(`^(?i)(https?://)?(www\.)?github\.com/`)
	ownerName    = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoName     = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// IsSource reports whether text (trimmed) is a single GitHub URL:
// github.com/<owner>/… with or without https://. Such text is a source for
// the resolver and never a config for the normalizer. Parse says whether
// it names a repository well.
func IsSource(text string) bool {
	t := strings.TrimSpace(text)
	return sourcePrefix.MatchString(t) && !strings.ContainsAny(t, " \t\r\n{}")
}

// Parse reads a GitHub URL: github.com/<owner>/<repo> with or without
// https:// or www., with a trailing slash, .git, a #fragment or a ?query,
// and /tree/<ref>/<path> (or /blob/<ref>/<file>, which names the file's
// folder) for one folder of a monorepo. Other pages of a repository
// (/issues, /releases, …) name the repository itself. The error says what
// is wrong with the URL.
func Parse(text string) (Source, error) {
	t := strings.TrimSpace(text)
	if !IsSource(t) {
		return Source{}, fmt.Errorf("%s is not a GitHub repository URL: give one such as github.com/modelcontextprotocol/servers", mcp.Clip(t))
	}
	rest := sourcePrefix.ReplaceAllString(t, "")
	if i := strings.IndexAny(rest, "#?"); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimRight(rest, "/")
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return Source{}, fmt.Errorf("%s names no repository: give one such as github.com/modelcontextprotocol/servers", mcp.Clip(t))
	}
	s := Source{Owner: parts[0], Repo: strings.TrimSuffix(parts[1], ".git")}
	if !ownerName.MatchString(s.Owner) {
		return Source{}, fmt.Errorf("%s: %s is not a GitHub user or organisation name (letters, digits and single dashes)", mcp.Clip(t), mcp.Clip(s.Owner))
	}
	if !repoName.MatchString(s.Repo) || s.Repo == "." || s.Repo == ".." {
		return Source{}, fmt.Errorf("%s: %s is not a GitHub repository name (letters, digits, '.', '-', '_')", mcp.Clip(t), mcp.Clip(s.Repo))
	}
	if len(parts) < 4 || (parts[2] != "tree" && parts[2] != "blob") {
		return s, nil
	}
	ref, err := url.PathUnescape(parts[3])
	if err != nil || ref == "" || strings.ContainsAny(ref, "\x00 ~^:?*[\\") || strings.Contains(ref, "..") {
		return Source{}, fmt.Errorf("%s: %s is not a branch, tag or commit name", mcp.Clip(t), mcp.Clip(parts[3]))
	}
	s.Ref = ref
	var folder []string
	for _, seg := range parts[4:] {
		seg, err := url.PathUnescape(seg)
		if err != nil {
			return Source{}, fmt.Errorf("%s: the path is not a valid URL path (%v)", mcp.Clip(t), err)
		}
		switch {
		case seg == "" || seg == ".":
			continue
		case seg == ".." || strings.ContainsAny(seg, "/\\\x00"):
			return Source{}, fmt.Errorf("%s: the path leaves the repository (%s): give a folder inside it", mcp.Clip(t), mcp.Clip(seg))
		}
		folder = append(folder, seg)
	}
	if parts[2] == "blob" && len(folder) > 0 {
		folder = folder[:len(folder)-1]
	}
	s.Path = strings.Join(folder, "/")
	return s, nil
}

// String returns the canonical URL of the source:
// github.com/<owner>/<repo>[/tree/<ref>[/<path>]].
func (s Source) String() string {
	u := "github.com/" + s.Owner + "/" + s.Repo
	if s.Ref != "" {
		u += "/tree/" + s.Ref
		if s.Path != "" {
			u += "/" + s.Path
		}
	}
	return u
}

// ID returns what a stored entry's source records: github:<owner>/<repo>.
func (s Source) ID() string { return "github:" + s.Owner + "/" + s.Repo }

// Join returns name inside the source's folder.
func (s Source) Join(name string) string {
	if s.Path == "" {
		return name
	}
	return s.Path + "/" + name
}
