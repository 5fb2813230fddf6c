package mcp

import (
	"fmt"
	"net/url"
	"strings"

	"tai/mcp/httppolicy"
	"tai/mcp/screen"
)

// OAuth is how tai logs in to an http server whose authorization server
// does not take a dynamically registered client: a client registered by
// hand, its secret as a ${NAME} reference to a vault secret, the loopback
// port the provider's redirect URI names, or a client ID metadata
// document URL. The zero value leaves the login to discovery.
type OAuth struct {
	// ClientID is a client id registered with the provider by hand.
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret is that client's secret, only ever a ${NAME} reference
	// to a vault secret.
	ClientSecret string `json:"client_secret,omitempty"`
	// CallbackPort fixes the loopback redirect's port (0: an ephemeral one).
	CallbackPort int `json:"callback_port,omitempty"`
	// ClientMetadataURL is an https client ID metadata document URL.
	ClientMetadataURL string `json:"client_metadata_url,omitempty"`
}

// Empty reports whether o sets nothing.
func (o *OAuth) Empty() bool { return o == nil || *o == OAuth{} }

// Over returns o with every field that p sets taken from p.
func (o OAuth) Over(p OAuth) OAuth {
	if p.ClientID != "" {
		o.ClientID = p.ClientID
		if p.ClientSecret == "" {
			// a secret belongs to its client id
			o.ClientSecret = ""
		}
	}
	if p.ClientSecret != "" {
		o.ClientSecret = p.ClientSecret
	}
	if p.CallbackPort != 0 {
		o.CallbackPort = p.CallbackPort
	}
	if p.ClientMetadataURL != "" {
		o.ClientMetadataURL = p.ClientMetadataURL
	}
	return o
}

// OAuthSecretPrefix starts the names of the vault secrets tai keeps for
// its OAuth logins (tokens, registrations).
const OAuthSecretPrefix = "mcp-oauth-"

// SecretRef returns NAME of a "${NAME}" reference.
func SecretRef(s string) (string, bool) {
	if !strings.HasPrefix(s, "${") || !strings.HasSuffix(s, "}") || len(s) < 4 {
		return "", false
	}
	name := s[2 : len(s)-1]
	return name, !strings.ContainsAny(name, "${}:")
}

// Validate checks o: a client secret that is a ${NAME} reference (never
// the secret itself), a port number, an https metadata URL.
func (o *OAuth) Validate() error {
	if o == nil {
		return nil
	}
	if o.ClientSecret != "" {
		if _, ok := SecretRef(o.ClientSecret); !ok {
			return fmt.Errorf("oauth.client_secret must be a ${NAME} reference to a vault secret, not the secret itself: store the secret with tai.vault.secret_set(\"NAME\", \"…\") and write \"${NAME}\"")
		}
		if o.ClientID == "" {
			return fmt.Errorf("oauth.client_secret is set without oauth.client_id: a secret belongs to a client id registered with the provider")
		}
		if name, _ := SecretRef(o.ClientSecret); strings.HasPrefix(name, OAuthSecretPrefix) {
			return fmt.Errorf("oauth.client_secret names %s, one of the secrets tai keeps for its own OAuth logins; a client secret is the one your provider issued: store it under a name of your own", screen.VisibleLine(o.ClientSecret))
		}
	}
	if o.CallbackPort < 0 || o.CallbackPort > 65535 {
		return fmt.Errorf("oauth.callback_port %d is not a port number (1-65535)", o.CallbackPort)
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("oauth.client_metadata_url %q is not an https URL", httppolicy.RedactURL(o.ClientMetadataURL))
		}
	}
	if strings.ContainsAny(o.ClientID, "\r\n") {
		return fmt.Errorf("oauth.client_id holds a line break")
	}
	return nil
}

// String describes o for people: the client id, where its secret comes
// from (the reference, never a value), the callback port, the metadata
// document URL; "" when o sets nothing.
func (o *OAuth) String() string {
	if o.Empty() {
		return ""
	}
	var parts []string
	if o.ClientID != "" {
		parts = append(parts, "client id "+screen.VisibleLine(o.ClientID))
	}
	if o.ClientSecret != "" {
		parts = append(parts, "client secret from "+screen.VisibleLine(o.ClientSecret))
	}
	if o.CallbackPort != 0 {
		parts = append(parts, fmt.Sprintf("callback port %d", o.CallbackPort))
	}
	if o.ClientMetadataURL != "" {
		parts = append(parts, "client metadata "+screen.VisibleLine(httppolicy.RedactURL(o.ClientMetadataURL)))
	}
	return strings.Join(parts, ", ")
}
