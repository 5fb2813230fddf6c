package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"tai/mcp"
)

// oauthKeys are the fields of a canonical entry's oauth object.
var oauthKeys = []string{"client_id", "client_secret", "callback_port", "client_metadata_url"}

// oauth reads the entry's oauth object: a client id, its secret only as a
// ${NAME} reference (a secret written out refuses the entry, and the note
// does not repeat it), a callback port, a client ID metadata document URL.
func (c *checker) oauth(raw map[string]any, server string) *mcp.OAuth {
	v, ok := raw["oauth"]
	if !ok || v == nil {
		return nil
	}
	m, isObject := values(v)
	if !isObject {
		c.refuse(fmt.Sprintf("oauth is a %s; it must be an object (client_id, client_secret, callback_port, client_metadata_url)", kindOf(v)))
		return nil
	}
	o := &mcp.OAuth{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val := m[k]
		switch k {
		case "client_id", "client_metadata_url":
			s, isString := val.(string)
			if !isString {
				c.refuse(fmt.Sprintf("oauth.%s is a %s; it must be a string", k, kindOf(val)))
				continue
			}
			if k == "client_id" {
				o.ClientID = s
			} else {
				o.ClientMetadataURL = s
			}
		case "client_secret":
			s, isString := val.(string)
			if _, ref := mcp.SecretRef(s); !isString || !ref {
				name := EnvName(server) + "_CLIENT_SECRET"
				c.refuse(fmt.Sprintf("oauth.client_secret is written out (not shown here); tai keeps no secret in a server entry: store it with tai.vault.secret_set(%q, \"…\") and write \"${%s}\" in its place", name, name))
				continue
			}
			o.ClientSecret = s
		case "callback_port":
			n, isNumber := port(val)
			if !isNumber {
				c.refuse("oauth.callback_port is not a port number (1-65535)")
				continue
			}
			o.CallbackPort = n
		default:
			c.note(LevelWarn, "field \"oauth.%s\" is not one tai knows (it knows %s); it is ignored", k, strings.Join(oauthKeys, ", "))
		}
	}
	if o.Empty() {
		return nil
	}
	return o
}

// port returns v as a port number (1-65535).
func port(v any) (int, bool) {
	var n int
	switch x := v.(type) {
	case int64:
		n = int(x)
	case float64:
		n = int(x)
		if float64(n) != x {
			return 0, false
		}
	case int:
		n = x
	case string:
		if _, err := fmt.Sscanf(x, "%d", &n); err != nil || fmt.Sprint(n) != x {
			return 0, false
		}
	default:
		return 0, false
	}
	return n, n >= 1 && n <= 65535
}

// EnvName is s as an environment variable's name is usually spelled:
// upper case, every character other than A-Z, 0-9 and _ turned into _.
func EnvName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
