package oauth_test

import (
	"reflect"
	"testing"

	"tai/mcp/oauth"
)

func TestParseWWWAuthenticate(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   map[string]string
		ok     bool
	}{
		{"simple", `Bearer resource_metadata="https://a/x"`, map[string]string{"resource_metadata": "https://a/x"}, true},
		{"any order, spaces and commas in quotes", `Bearer scope="files:read files:write", error="insufficient_scope", error_description="need more, please", resource_metadata="https://a/.well-known/x"`,
			map[string]string{"scope": "files:read files:write", "error": "insufficient_scope", "error_description": "need more, please", "resource_metadata": "https://a/.well-known/x"}, true},
		{"escaped quote", `Bearer error_description="say \"hi\""`, map[string]string{"error_description": `say "hi"`}, true},
		{"token values and case", `bearer Error=invalid_token,Scope=read`, map[string]string{"error": "invalid_token", "scope": "read"}, true},
		{"after another challenge", `Basic realm="x, y", Bearer scope="a b", error="invalid_token"`, map[string]string{"scope": "a b", "error": "invalid_token"}, true},
		{"bare bearer", `Bearer`, map[string]string{}, true},
		{"unterminated quote keeps what parsed", `Bearer scope="a", error="oops`, map[string]string{"scope": "a"}, true},
		{"no bearer", `Basic realm="x"`, nil, false},
		{"empty", ``, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := oauth.Bearer(tt.header)
			if ok != tt.ok || (tt.ok && !reflect.DeepEqual(got, tt.want)) {
				t.Fatalf("Bearer(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCanonicalResource(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://Example.COM:443/mcp/": "https://example.com/mcp",
		"http://127.0.0.1:80/":         "http://127.0.0.1",
		"https://a.b/mcp#frag":         "https://a.b/mcp",
		"http://localhost:8080/x":      "http://localhost:8080/x",
	} {
		got, err := oauth.CanonicalResource(in)
		if err != nil || got != want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
