package llm

import (
	"testing"
)

func TestHideUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@api.example.com/v1?x=1": "https://api.example.com/v1?x=1",
		"http://ghp_token@host:8080/v1":          "http://host:8080/v1",
		"https://api.example.com/v1":             "https://api.example.com/v1",
		"http://us er:p w@ho st/v1":              "http://…@ho st/v1",
	} {
		if got := HideUserinfo(in); got != want {
			t.Errorf("HideUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
