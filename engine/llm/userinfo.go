package llm

import (
	"net/url"
	"strings"

	"tai/vault"
)

// HideUserinfo returns the URL raw without its userinfo (user:password@),
// for every message that names a base URL: an error, a consent question, a
// tool result the model reads. Text that does not parse is cut at '@'.
func HideUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if at := strings.LastIndex(raw, "@"); at >= 0 {
			if scheme := strings.Index(raw, "://"); scheme >= 0 && scheme < at {
				return raw[:scheme+3] + "…@" + raw[at+1:]
			}
			return "…@" + raw[at+1:]
		}
		return raw
	}
	if u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// RedactUserinfo registers the user name and password in a base URL for
// redaction, so text that repeats them anyway (a server echoing its URL, a
// page, an error) never shows them.
func RedactUserinfo(s *vault.Store, raw string) {
	u, err := url.Parse(raw)
	if s == nil || err != nil || u.User == nil {
		return
	}
	s.AddRedaction("base_url_user", u.User.Username())
	if pw, ok := u.User.Password(); ok {
		s.AddRedaction("base_url_password", pw)
	}
}
