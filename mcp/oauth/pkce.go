package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// randomString returns n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// pkce is a PKCE (RFC 7636) verifier and its S256 challenge.
type pkce struct {
	verifier  string
	challenge string
}

func newPKCE() pkce {
	v := randomString(32) // 43 characters, within RFC 7636's 43..128
	sum := sha256.Sum256([]byte(v))
	return pkce{verifier: v, challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}
