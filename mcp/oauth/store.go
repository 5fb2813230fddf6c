package oauth

import "time"

// Tokens are what a login leaves for one server.
type Tokens struct {
	// Access is the access token sent as Authorization: Bearer.
	Access string
	// Refresh is the refresh token ("" when none was issued).
	Refresh string
	// Expiry is when Access stops working (zero when the server said not).
	Expiry time.Time
	// Issued is when Access was issued (zero when not known).
	Issued time.Time
	// Scope is the scope granted, space-separated (the scope asked for
	// when the server did not say).
	Scope string
	// ClientID is the client the tokens were issued to.
	ClientID string
	// Issuer is the authorization server that issued them.
	Issuer string
	// TokenEndpoint is where they are refreshed.
	TokenEndpoint string
	// Resource is the resource indicator they were issued for.
	Resource string
	// AuthMethod is how the client authenticates at TokenEndpoint.
	AuthMethod string
	// ResourceMetadata is where the server's protected resource metadata
	// was found ("" for none): a later step-up starts there when the
	// server's challenge names none.
	ResourceMetadata string
}

// Registration is a client registration kept for reuse: a dynamic one
// (RFC 7591) or the outcome of choosing a client metadata document.
type Registration struct {
	// Issuer is the authorization server the client belongs to.
	Issuer string
	// ClientID is the registered client id.
	ClientID string
	// ClientSecret is the secret issued with it ("" for a public client).
	ClientSecret string
	// AuthMethod is the token endpoint auth method the server assigned.
	AuthMethod string
	// RedirectURI is the redirect URI registered.
	RedirectURI string
}

// TokenStore keeps one server's tokens and its client registration. The
// engine implements it over sealed vault secrets; tests use MemoryStore.
// Every method returns nil values and no error for what is not there.
type TokenStore interface {
	// Tokens returns the tokens held, or nil.
	Tokens() (*Tokens, error)
	// SaveTokens replaces the tokens held.
	SaveTokens(t *Tokens) error
	// DropTokens forgets the tokens.
	DropTokens() error
	// Registration returns the kept registration, or nil.
	Registration() (*Registration, error)
	// SaveRegistration replaces the kept registration.
	SaveRegistration(r *Registration) error
	// DropRegistration forgets the registration.
	DropRegistration() error
}
