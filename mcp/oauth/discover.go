package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"tai/mcp/httppolicy"
)

// ResourceMetadata is a protected resource metadata document (RFC 9728):
// the fields an MCP client uses.
type ResourceMetadata struct {
	// Resource is the protected resource's identifier.
	Resource string `json:"resource"`
	// AuthorizationServers lists the issuers that grant tokens for it.
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported lists the scopes the resource understands.
	ScopesSupported []string `json:"scopes_supported"`
}

// ServerMetadata is an authorization server's metadata (RFC 8414, or an
// OpenID Connect discovery document): the fields an MCP client uses.
type ServerMetadata struct {
	// Issuer is the authorization server's identifier.
	Issuer string `json:"issuer"`
	// AuthorizationEndpoint is where the browser is sent.
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	// TokenEndpoint exchanges codes and refresh tokens.
	TokenEndpoint string `json:"token_endpoint"`
	// RegistrationEndpoint takes dynamic client registrations (RFC 7591).
	RegistrationEndpoint string `json:"registration_endpoint,omitempty"`
	// ScopesSupported lists the scopes the server grants.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// CodeChallengeMethodsSupported lists the PKCE methods; it must hold S256.
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported,omitempty"`
	// TokenEndpointAuthMethodsSupported lists how clients may
	// authenticate at the token endpoint.
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// ClientIDMetadataDocumentSupported says client ids may be metadata
	// document URLs.
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
}

// Discovery is what discovery learned about one MCP server.
type Discovery struct {
	// ServerURL is the MCP endpoint.
	ServerURL string
	// Resource is the canonical resource indicator sent on the
	// authorization and token requests (RFC 8707).
	Resource string
	// ResourceMetadataURL is where the PRM document came from ("" for a
	// 2025-03-26 server without one).
	ResourceMetadataURL string
	// PRM is the protected resource metadata (nil without one).
	PRM *ResourceMetadata
	// Issuer is the authorization server chosen.
	Issuer string
	// Metadata holds the authorization server's endpoints: fetched, or
	// the 2025-03-26 defaults at the server's origin.
	Metadata ServerMetadata
	// MetadataURL is where Metadata came from ("" for the defaults).
	MetadataURL string
}

// Discover finds the authorization server of the MCP server at serverURL
// and its metadata, in the 2025-11-25 specification's order. challenge
// holds the parameters of the server's Bearer challenge (nil when none):
// its resource_metadata is used first; else the path-aware well-known
// URL; else the root one. A PRM whose resource names another server is
// refused, as is an issuer whose metadata names another issuer or lacks
// PKCE S256. A server with no PRM at all is a 2025-03-26 one: its origin
// is the authorization server, with /authorize, /token and /register when
// it has no metadata either.
func Discover(ctx context.Context, f *fetcher, serverURL string, challenge map[string]string) (*Discovery, error) {
	su, err := checkURL("MCP server URL", serverURL)
	if err != nil {
		return nil, err
	}
	d := &Discovery{ServerURL: serverURL}
	if err := d.findPRM(ctx, f, su, challenge["resource_metadata"]); err != nil {
		return nil, err
	}
	if d.PRM == nil {
		return d, d.legacy(ctx, f, su)
	}
	issuer := d.PRM.AuthorizationServers[0]
	iu, err := checkURL("authorization server", issuer)
	if err != nil {
		return nil, fmt.Errorf("the protected resource metadata at %s names %w", httppolicy.RedactURL(d.ResourceMetadataURL), err)
	}
	d.Issuer = issuer
	for _, m := range asMetadataURLs(iu) {
		var md ServerMetadata
		err := f.getJSON(ctx, "authorization server metadata", m, &md)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("the authorization server metadata at %s names the issuer %q, but the server's protected resource metadata names %q; "+
				"they must be the same (RFC 8414 §3.3), so tai will not log in there", httppolicy.RedactURL(m), md.Issuer, issuer)
		}
		d.Metadata, d.MetadataURL = md, m
		return d, d.checkMetadata()
	}
	return nil, fmt.Errorf("the authorization server %s publishes no metadata (tried %s)", issuer, strings.Join(asMetadataURLs(iu), ", "))
}

// findPRM fetches the protected resource metadata: from the challenge's
// resource_metadata, else the path-aware well-known URL, else the root.
// Finding none leaves d.PRM nil.
func (d *Discovery) findPRM(ctx context.Context, f *fetcher, su *url.URL, fromHeader string) error {
	var candidates []string
	if fromHeader != "" {
		if _, err := checkURL("resource_metadata URL", fromHeader); err != nil {
			return fmt.Errorf("the server's WWW-Authenticate challenge is unusable: %w", err)
		}
		candidates = []string{fromHeader}
	} else {
		if p := strings.TrimSuffix(su.EscapedPath(), "/"); p != "" {
			candidates = append(candidates, wellKnown(su, "oauth-protected-resource"))
		}
		candidates = append(candidates, wellKnown(&url.URL{Scheme: su.Scheme, Host: su.Host}, "oauth-protected-resource"))
	}
	for _, c := range candidates {
		var prm ResourceMetadata
		err := f.getJSON(ctx, "protected resource metadata", c, &prm)
		if errors.Is(err, errNotFound) && fromHeader == "" {
			continue
		}
		if err != nil {
			return err
		}
		if prm.Resource == "" {
			prm.Resource = d.ServerURL
		}
		if !resourceCovers(prm.Resource, d.ServerURL) {
			return fmt.Errorf("the protected resource metadata at %s is for the resource %s, not for this server (%s); "+
				"a server may only send tai to its own metadata (RFC 9728 §3.3), so tai will not log in",
				httppolicy.RedactURL(c), httppolicy.RedactURL(prm.Resource), httppolicy.RedactURL(d.ServerURL))
		}
		if len(prm.AuthorizationServers) == 0 {
			return fmt.Errorf("the protected resource metadata at %s lists no authorization_servers", httppolicy.RedactURL(c))
		}
		res, err := CanonicalResource(prm.Resource)
		if err != nil {
			return fmt.Errorf("the protected resource metadata at %s: resource %w", httppolicy.RedactURL(c), err)
		}
		d.PRM, d.ResourceMetadataURL, d.Resource = &prm, c, res
		return nil
	}
	return nil
}

// legacy fills d for a 2025-03-26 server: the authorization server is the
// MCP server's origin, with its RFC 8414 metadata at the root when it has
// any, else /authorize, /token and /register there.
func (d *Discovery) legacy(ctx context.Context, f *fetcher, su *url.URL) error {
	origin := (&url.URL{Scheme: su.Scheme, Host: su.Host}).String()
	d.Issuer = origin
	d.Resource, _ = CanonicalResource(d.ServerURL)
	m := origin + "/.well-known/oauth-authorization-server"
	var md ServerMetadata
	err := f.getJSON(ctx, "authorization server metadata", m, &md)
	switch {
	case err == nil:
		// A 2025-03-26 server's issuer is its origin; its metadata's own
		// issuer field is not checked (it may name a prefix).
		d.Metadata, d.MetadataURL = md, m
		if d.Metadata.Issuer == "" {
			d.Metadata.Issuer = origin
		}
		return d.checkMetadata()
	case errors.Is(err, errNotFound):
		d.Metadata = ServerMetadata{
			Issuer:                        origin,
			AuthorizationEndpoint:         origin + "/authorize",
			TokenEndpoint:                 origin + "/token",
			RegistrationEndpoint:          origin + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		}
		return nil
	default:
		return err
	}
}

// checkMetadata refuses metadata tai cannot use safely: endpoints that are
// missing or not https (loopback aside), and no PKCE S256.
func (d *Discovery) checkMetadata() error {
	md := &d.Metadata
	where := httppolicy.RedactURL(d.MetadataURL)
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("the authorization server %s does not offer PKCE with S256 (its metadata at %s lists code_challenge_methods_supported %v); "+
			"MCP requires it, so tai will not log in there", d.Issuer, where, md.CodeChallengeMethodsSupported)
	}
	for _, e := range []struct{ name, v string }{
		{"authorization_endpoint", md.AuthorizationEndpoint},
		{"token_endpoint", md.TokenEndpoint},
	} {
		if e.v == "" {
			return fmt.Errorf("the authorization server metadata at %s has no %s", where, e.name)
		}
		if _, err := checkURL(e.name, e.v); err != nil {
			return fmt.Errorf("the authorization server metadata at %s: %w", where, err)
		}
	}
	if md.RegistrationEndpoint != "" {
		if _, err := checkURL("registration_endpoint", md.RegistrationEndpoint); err != nil {
			return fmt.Errorf("the authorization server metadata at %s: %w", where, err)
		}
	}
	return nil
}
