package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"tai/mcp/httppolicy"
)

// tokenResponse is an RFC 6749 §5.1 answer.
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
	Scope        string          `json:"scope"`
}

// requestToken POSTs form to the token endpoint with the client's
// authentication and the resource indicator, and returns the tokens. Any
// secret sent is scrubbed from a refusal's text.
func requestToken(ctx context.Context, f *fetcher, d *Discovery, c *client, form url.Values, now time.Time) (*Tokens, error) {
	endpoint := d.Metadata.TokenEndpoint
	form.Set("resource", d.Resource)
	header := http.Header{}
	switch c.authMethod {
	case AuthSecretBasic:
		// RFC 6749 §2.3.1: both parts form-encoded before base64.
		cred := url.QueryEscape(c.id) + ":" + url.QueryEscape(c.secret)
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	case AuthSecretPost:
		form.Set("client_id", c.id)
		form.Set("client_secret", c.secret)
	default:
		form.Set("client_id", c.id)
	}
	secrets := []string{c.secret, form.Get("code"), form.Get("refresh_token"), form.Get("code_verifier")}
	what := "the token request to " + httppolicy.RedactURL(endpoint)
	data, status, err := f.post(ctx, what, endpoint, "application/x-www-form-urlencoded", []byte(form.Encode()), header)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, refusal(what, status, data, secrets...)
	}
	var tr tokenResponse
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("%s: the answer is not a JSON token response", what)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("%s: the answer has no access_token", what)
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, fmt.Errorf("%s: the token type is %q; tai sends only Bearer tokens", what, short(tr.TokenType, 40))
	}
	if strings.ContainsAny(tr.AccessToken, "\r\n\x00 ") {
		return nil, fmt.Errorf("%s: the access token holds characters an HTTP header cannot carry", what)
	}
	t := &Tokens{Access: tr.AccessToken, Refresh: tr.RefreshToken, Scope: tr.Scope, ClientID: c.id, Issuer: d.Issuer}
	var secs float64
	if len(tr.ExpiresIn) > 0 && json.Unmarshal(tr.ExpiresIn, &secs) != nil {
		var s string
		if json.Unmarshal(tr.ExpiresIn, &s) == nil {
			fmt.Sscan(s, &secs)
		}
	}
	if secs > 0 {
		t.Issued, t.Expiry = now, now.Add(time.Duration(secs)*time.Second)
	}
	return t, nil
}
