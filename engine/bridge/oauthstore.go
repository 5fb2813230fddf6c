package bridge

import (
	"errors"
	"strings"
	"time"

	"tai/mcp"
	"tai/mcp/oauth"
	"tai/vault"
)

// oauthSecret is the vault secret name of one of server's OAuth values:
// mcp-oauth-<server>-<suffix>, the server's name clamped to the secret
// name rule (other bytes become '_', long names are cut).
func oauthSecret(server, suffix string) string {
	var b strings.Builder
	for i := 0; i < len(server); i++ {
		c := server[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if max := 128 - len(mcp.OAuthSecretPrefix) - len(suffix) - 1; len(name) > max {
		name = name[:max]
	}
	return mcp.OAuthSecretPrefix + name + "-" + suffix
}

// Suffixes of a server's OAuth secrets.
const (
	secretAccess  = "access"  // the access token; meta: client, expiry, scope, where to refresh
	secretRefresh = "refresh" // the refresh token
	secretClient  = "client"  // a dynamic registration: its secret; meta: issuer, client id
	secretLogin   = "login"   // login settings an earlier version kept here (now in the server row): dropped with the rest
)

// vaultTokens is an oauth.TokenStore over one server's sealed vault secrets.
type vaultTokens struct {
	store  *vault.Store
	server string
}

func (v vaultTokens) get(suffix string) (string, map[string]any, bool, error) {
	val, meta, err := v.store.SecretGet(oauthSecret(v.server, suffix))
	if errors.Is(err, vault.ErrNotFound) {
		return "", nil, false, nil
	}
	return val, meta, err == nil, err
}

func (v vaultTokens) drop(suffix string) error {
	err := v.store.SecretDelete(oauthSecret(v.server, suffix))
	if errors.Is(err, vault.ErrNotFound) {
		return nil
	}
	return err
}

func metaString(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Tokens implements oauth.TokenStore.
func (v vaultTokens) Tokens() (*oauth.Tokens, error) {
	access, meta, ok, err := v.get(secretAccess)
	if !ok {
		return nil, err
	}
	t := &oauth.Tokens{Access: access, ClientID: metaString(meta, "client_id"), Scope: metaString(meta, "scope"),
		Issuer: metaString(meta, "issuer"), TokenEndpoint: metaString(meta, "token_endpoint"),
		Resource: metaString(meta, "resource"), AuthMethod: metaString(meta, "auth_method"),
		ResourceMetadata: metaString(meta, "resource_metadata")}
	if e := metaString(meta, "expiry"); e != "" {
		t.Expiry, _ = time.Parse(time.RFC3339, e)
	}
	if e := metaString(meta, "issued"); e != "" {
		t.Issued, _ = time.Parse(time.RFC3339, e)
	}
	t.Refresh, _, _, err = v.get(secretRefresh)
	return t, err
}

// SaveTokens implements oauth.TokenStore: the access token with its meta,
// the refresh token beside it (or none).
func (v vaultTokens) SaveTokens(t *oauth.Tokens) error {
	meta := map[string]any{"client_id": t.ClientID, "scope": t.Scope, "issuer": t.Issuer,
		"token_endpoint": t.TokenEndpoint, "resource": t.Resource, "auth_method": t.AuthMethod,
		"resource_metadata": t.ResourceMetadata, "kind": "mcp-oauth"}
	if !t.Expiry.IsZero() {
		meta["expiry"] = t.Expiry.UTC().Format(time.RFC3339)
	}
	if !t.Issued.IsZero() {
		meta["issued"] = t.Issued.UTC().Format(time.RFC3339)
	}
	if t.Refresh != "" {
		if err := v.store.SecretSet(oauthSecret(v.server, secretRefresh), t.Refresh, map[string]any{"kind": "mcp-oauth"}); err != nil {
			return err
		}
	} else if err := v.drop(secretRefresh); err != nil {
		return err
	}
	return v.store.SecretSet(oauthSecret(v.server, secretAccess), t.Access, meta)
}

// DropTokens implements oauth.TokenStore.
func (v vaultTokens) DropTokens() error {
	return errors.Join(v.drop(secretAccess), v.drop(secretRefresh))
}

// Registration implements oauth.TokenStore.
func (v vaultTokens) Registration() (*oauth.Registration, error) {
	secret, meta, ok, err := v.get(secretClient)
	if !ok {
		return nil, err
	}
	return &oauth.Registration{Issuer: metaString(meta, "issuer"), ClientID: metaString(meta, "client_id"),
		ClientSecret: secret, AuthMethod: metaString(meta, "auth_method"), RedirectURI: metaString(meta, "redirect_uri")}, nil
}

// SaveRegistration implements oauth.TokenStore.
func (v vaultTokens) SaveRegistration(r *oauth.Registration) error {
	return v.store.SecretSet(oauthSecret(v.server, secretClient), r.ClientSecret, map[string]any{
		"issuer": r.Issuer, "client_id": r.ClientID, "auth_method": r.AuthMethod, "redirect_uri": r.RedirectURI, "kind": "mcp-oauth"})
}

// DropRegistration implements oauth.TokenStore.
func (v vaultTokens) DropRegistration() error { return v.drop(secretClient) }

// dropAll forgets the server's tokens, registration and login settings.
func (v vaultTokens) dropAll() error {
	return errors.Join(v.DropTokens(), v.DropRegistration(), v.drop(secretLogin))
}
