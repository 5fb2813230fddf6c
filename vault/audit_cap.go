package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode/utf8"
)

// AuditFieldMax is the most bytes one text field of an audit entry (kind,
// subject, digest, outcome, session) takes in the stored JSON. A longer
// field keeps what fits (more when that ends inside a redaction mark,
// which is kept whole), then the SHA-256 of the whole and its length:
// "ZZZZ…[sha256:0123456789abcdef] (5242880 bytes)". So an entry stays
// small whatever a model or a client made it record (a control character
// takes six bytes as \u0001, and counts so), and the hash still tells two
// long values apart.
const AuditFieldMax = 256

// capAuditFields caps every text field of e; red is what redacted them,
// so a mark it wrote is not cut in two.
func capAuditFields(red *Redactor, e *AuditEntry) {
	for _, f := range [...]*string{&e.Kind, &e.Subject, &e.Digest, &e.Outcome, &e.Session} {
		*f = capAuditField(red, *f)
	}
}

// capAuditField returns s when its JSON fits AuditFieldMax, else its
// capped form.
func capAuditField(red *Redactor, s string) string {
	n := jsonFit(s, AuditFieldMax)
	if n == len(s) {
		return s
	}
	// A mark the redaction wrote is ASCII and kept whole.
	n = red.Cut(s, n)
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s…[sha256:%s] (%d bytes)", s[:n], hex.EncodeToString(sum[:8]), len(s))
}

// jsonFit returns how many bytes of s, never cutting a character in two,
// encoding/json writes in at most max bytes (quotes aside).
func jsonFit(s string, max int) int {
	cost := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := size
		switch {
		case r == utf8.RuneError && size == 1:
			c = 3 // written as U+FFFD
		case r < 0x20, r == '<', r == '>', r == '&', r == 0x2028, r == 0x2029:
			c = 6 // \u0001
		case r == '"', r == '\\':
			c = 2
		}
		if cost+c > max {
			return i
		}
		cost += c
		i += size
	}
	return len(s)
}
