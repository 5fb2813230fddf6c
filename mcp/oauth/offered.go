package oauth

import (
	"context"
	"fmt"
	"net/http"

	"tai/mcp/httppolicy"
)

// NoOAuthError says a server that answered 401 offers no OAuth login: no
// protected resource metadata, no authorization server metadata, and no
// endpoints at the 2025-03-26 default paths of its origin. It most likely
// wants a key or token in a header.
type NoOAuthError struct {
	// Server is the server's name.
	Server string
	// Missing names the default endpoint found missing.
	Missing string
}

// Error says what the server wants instead, and how to give it.
func (e *NoOAuthError) Error() string {
	return fmt.Sprintf("mcp server %s asks for credentials (HTTP 401) but offers no OAuth login: it publishes no OAuth metadata and has no %s, "+
		"so a browser login cannot work. It most likely wants a key or token in a header: store it with tai.vault.secret_set(\"NAME\", \"…\") "+
		"and add the server with \"headers\": {\"Authorization\": \"Bearer ${NAME}\"} in its entry (or claude mcp add … --header 'Authorization: Bearer ${NAME}')",
		e.Server, httppolicy.RedactURL(e.Missing))
}

// assumed reports that d holds the 2025-03-26 defaults at the server's
// origin: neither protected resource nor authorization server metadata
// was found.
func (d *Discovery) assumed() bool {
	return d.PRM == nil && d.MetadataURL == ""
}

// Offered tells whether cfg's server, which answered 401 with challenge
// (its Bearer parameters, nil when none), offers an OAuth login, without
// logging in and asking only the server's own origin: nil when the
// challenge names a resource_metadata URL, when it publishes protected
// resource or authorization server metadata at its well-known URLs (the
// authorization server a PRM names is not asked), or when its origin answers
// at the default authorization endpoint (asked for its OPTIONS, which no
// endpoint acts on); a *NoOAuthError when that endpoint does not exist
// (HTTP 404) either; another error when discovery fails.
func Offered(ctx context.Context, cfg *Config, challenge map[string]string) error {
	if challenge["resource_metadata"] != "" {
		// It names its metadata, so it offers a login; fetching a URL the
		// server chose waits for the person to ask for one.
		return nil
	}
	f := newFetcher(cfg)
	su, err := checkURL("MCP server URL", cfg.URL)
	if err != nil {
		return err
	}
	d := &Discovery{ServerURL: cfg.URL}
	if err := d.findPRM(ctx, f, su, ""); err != nil || d.PRM != nil {
		return err // a PRM's authorization server is asked at the login
	}
	if err := d.legacy(ctx, f, su); err != nil || !d.assumed() {
		return err
	}
	end := d.Metadata.AuthorizationEndpoint
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, end, nil)
	if err != nil {
		return err
	}
	_, status, _, err := f.do(req, "authorization endpoint")
	if err != nil {
		return err
	}
	if status == http.StatusNotFound {
		return &NoOAuthError{Server: cfg.Server, Missing: end}
	}
	return nil
}
