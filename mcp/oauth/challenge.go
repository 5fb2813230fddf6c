package oauth

import "strings"

// Challenge is one authentication challenge of a WWW-Authenticate header:
// its scheme and its parameters (names lower-cased, values unquoted).
type Challenge struct {
	// Scheme is the auth scheme as sent, such as "Bearer".
	Scheme string
	// Params maps each parameter name, lower-cased, to its value.
	Params map[string]string
}

// ParseWWWAuthenticate splits a WWW-Authenticate header value into its
// challenges (RFC 9110 §11.6.1): parameters may come in any order, values
// may be tokens or quoted strings holding spaces, commas and escaped
// quotes. A malformed tail is dropped, never an error: what parsed is kept.
func ParseWWWAuthenticate(header string) []Challenge {
	var out []Challenge
	s := header
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return out
		}
		scheme := token(s)
		if scheme == "" {
			return out
		}
		s = s[len(scheme):]
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		for {
			rest := strings.TrimLeft(s, " \t")
			name := token(rest)
			if name == "" {
				s = rest
				break
			}
			after := strings.TrimLeft(rest[len(name):], " \t")
			if !strings.HasPrefix(after, "=") {
				// A new challenge's scheme (or a token68 we do not use).
				s = rest
				break
			}
			after = strings.TrimLeft(after[1:], " \t")
			var value string
			if strings.HasPrefix(after, `"`) {
				v, n, ok := quoted(after)
				if !ok {
					out = append(out, c)
					return out
				}
				value, after = v, after[n:]
			} else {
				value = token68(after)
				after = after[len(value):]
			}
			c.Params[strings.ToLower(name)] = value
			after = strings.TrimLeft(after, " \t")
			if !strings.HasPrefix(after, ",") {
				s = after
				break
			}
			s = after[1:]
		}
		out = append(out, c)
	}
}

// Bearer returns the parameters of the header's Bearer challenge, and
// whether it has one.
func Bearer(header string) (map[string]string, bool) {
	for _, c := range ParseWWWAuthenticate(header) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c.Params, true
		}
	}
	return nil, false
}

// token returns the RFC 9110 token at the start of s.
func token(s string) string {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return s[:i]
}

// token68 returns an unquoted parameter value: a token, plus the '/' and
// '=' that token68 allows and servers put in bare URLs.
func token68(s string) string {
	i := 0
	for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' && s[i] != '"' {
		i++
	}
	return s[:i]
}

// quoted reads the quoted-string at the start of s, returning its value,
// the bytes consumed and whether it was closed.
func quoted(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), i + 1, true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, false
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
