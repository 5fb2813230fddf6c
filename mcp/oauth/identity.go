package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"tai/mcp/httppolicy"
)

// Token endpoint client authentication methods tai speaks.
const (
	// AuthNone sends only client_id (a public client).
	AuthNone = "none"
	// AuthSecretPost sends client_id and client_secret in the form.
	AuthSecretPost = "client_secret_post"
	// AuthSecretBasic sends them as an HTTP Basic Authorization header.
	AuthSecretBasic = "client_secret_basic"
)

// ClientName is the client_name tai registers under.
const ClientName = "tai-mcp"

// How tai came by its client id at one authorization server.
const (
	kindPreRegistered = "pre-registered"
	kindMetadataDoc   = "client metadata document"
	kindRegistered    = "dynamically registered"
)

// client is tai's identity at one authorization server.
type client struct {
	id, secret, authMethod string
	kind                   string
}

// chooseAuthMethod picks the token endpoint auth method: the one a
// registration response named, else from the server's supported list (a
// client with a secret prefers client_secret_basic, RFC 8414's default),
// else none for a client without a secret.
func chooseAuthMethod(assigned, secret string, supported []string) string {
	if assigned != "" {
		return assigned
	}
	if secret == "" {
		return AuthNone
	}
	switch {
	case len(supported) == 0, slices.Contains(supported, AuthSecretBasic):
		return AuthSecretBasic
	case slices.Contains(supported, AuthSecretPost):
		return AuthSecretPost
	}
	return AuthSecretBasic
}

// identity decides who tai is to the authorization server, in the
// specification's order: the pre-registered client id, a client metadata
// document URL the server accepts, a registration kept from an earlier
// login with the same issuer, a new dynamic registration. Otherwise it
// fails naming what the server accepts and how to give tai a client id.
func (l *login) identity(ctx context.Context) (*client, error) {
	cfg, d := l.cfg, l.disc
	md := &d.Metadata
	if cfg.ClientID != "" {
		if cfg.secretBoundElsewhere(d.Issuer) {
			return nil, fmt.Errorf("the client secret of %s was first used with the authorization server %s, and %s now names %s; tai sends it to no other: "+
				"if the provider really moved, store the secret afresh under a new name and give it with --client-secret",
				cfg.Server, cfg.ClientSecretIssuer, cfg.Server, d.Issuer)
		}
		return &client{id: cfg.ClientID, secret: cfg.ClientSecret, kind: kindPreRegistered,
			authMethod: chooseAuthMethod("", cfg.ClientSecret, md.TokenEndpointAuthMethodsSupported)}, nil
	}
	if cfg.ClientMetadataURL != "" && md.ClientIDMetadataDocumentSupported {
		u, err := url.Parse(cfg.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return nil, fmt.Errorf("the client metadata URL %q must be an https URL with a path, e.g. https://example.com/tai-client.json", httppolicy.RedactURL(cfg.ClientMetadataURL))
		}
		return &client{id: cfg.ClientMetadataURL, authMethod: AuthNone, kind: kindMetadataDoc}, nil
	}
	reg, err := cfg.Store.Registration()
	if err != nil {
		return nil, err
	}
	if reg != nil && (reg.Issuer != d.Issuer || reg.RedirectURI != l.redirectURI) {
		// Another issuer (or a redirect the listener could not take
		// again): the old client is no use here.
		if err := cfg.Store.DropRegistration(); err != nil {
			return nil, err
		}
		reg = nil
	}
	if reg != nil {
		return &client{id: reg.ClientID, secret: reg.ClientSecret, kind: kindRegistered,
			authMethod: chooseAuthMethod(reg.AuthMethod, reg.ClientSecret, md.TokenEndpointAuthMethodsSupported)}, nil
	}
	if md.RegistrationEndpoint != "" {
		return l.register(ctx)
	}
	accepts := "no dynamic client registration"
	if md.ClientIDMetadataDocumentSupported {
		accepts += "; it accepts a client metadata document URL (client_metadata_url)"
	}
	return nil, &ClientIDNeededError{Server: cfg.Server, Issuer: d.Issuer, Offers: accepts, Hint: hint(cfg.Hints.ClientID, cfg.Server)}
}

// registrationRequest is the RFC 7591 client metadata tai registers.
type registrationRequest struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// registrationResponse is the part of an RFC 7591 answer tai keeps.
type registrationResponse struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
}

// register registers tai as a public client with the loopback redirect,
// and keeps the registration for later logins with the same issuer. It
// names no scope: a server may take a registration's scope as the
// client's limit, and a later step-up asks for more.
func (l *login) register(ctx context.Context) (*client, error) {
	md := &l.disc.Metadata
	body, _ := json.Marshal(registrationRequest{
		ClientName:              ClientName,
		RedirectURIs:            []string{l.redirectURI},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: AuthNone,
	})
	data, status, err := l.f.post(ctx, "client registration", md.RegistrationEndpoint, "application/json", body, nil)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound && l.disc.assumed() {
		return nil, &NoOAuthError{Server: l.cfg.Server, Missing: md.RegistrationEndpoint}
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return nil, refusal("client registration at "+httppolicy.RedactURL(md.RegistrationEndpoint), status, data)
	}
	var rr registrationResponse
	if err := json.Unmarshal(data, &rr); err != nil || rr.ClientID == "" {
		return nil, fmt.Errorf("the client registration at %s answered without a client_id", httppolicy.RedactURL(md.RegistrationEndpoint))
	}
	switch rr.TokenEndpointAuthMethod {
	case "", AuthNone, AuthSecretPost, AuthSecretBasic:
	default:
		return nil, fmt.Errorf("the client registration at %s assigned token_endpoint_auth_method %q, which tai does not speak (it speaks none, client_secret_post and client_secret_basic)",
			httppolicy.RedactURL(md.RegistrationEndpoint), short(rr.TokenEndpointAuthMethod, 64))
	}
	reg := &Registration{Issuer: l.disc.Issuer, ClientID: rr.ClientID, ClientSecret: rr.ClientSecret,
		AuthMethod: rr.TokenEndpointAuthMethod, RedirectURI: l.redirectURI}
	if err := l.cfg.Store.SaveRegistration(reg); err != nil {
		return nil, err
	}
	return &client{id: rr.ClientID, secret: rr.ClientSecret, kind: kindRegistered,
		authMethod: chooseAuthMethod(rr.TokenEndpointAuthMethod, rr.ClientSecret, md.TokenEndpointAuthMethodsSupported)}, nil
}
